package keys

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brinehq/brine/bus/gateway/curve"
)

// newPub returns the Z85 text of a random 32-byte key.
func newPub(t testing.TB) string {
	t.Helper()
	var k curve.Key
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	return k.String()
}

func TestValidatePubAndFingerprint(t *testing.T) {
	var k curve.Key
	for i := range k {
		k[i] = byte(i)
	}
	pub := k.String()
	sum := sha256.Sum256(k[:])
	var parts []string
	for _, b := range sum {
		parts = append(parts, fmt.Sprintf("%02x", b))
	}
	want := strings.Join(parts, ":")
	got, err := Fingerprint(pub)
	if err != nil || got != want {
		t.Fatalf("Fingerprint = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"", "HelloWorld", pub[:39] + "~", pub + "00000"} {
		if err := ValidatePub(bad); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidatePub(%q) = %v, want ErrInvalidKey", bad, err)
		}
		if _, err := Fingerprint(bad); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Fingerprint(%q) = %v, want ErrInvalidKey", bad, err)
		}
	}
}
