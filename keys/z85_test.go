package keys

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// encodeZ85 is RFC 32's encoding, the inverse of decodeZ85, to make test
// keys.
func encodeZ85(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); i += 4 {
		v := uint32(b[i])<<24 | uint32(b[i+1])<<16 | uint32(b[i+2])<<8 | uint32(b[i+3])
		var d [5]byte
		for j := 4; j >= 0; j-- {
			d[j] = z85Digits[v%85]
			v /= 85
		}
		out.Write(d[:])
	}
	return out.String()
}

// newPub returns the Z85 text of a random 32-byte key.
func newPub(t testing.TB) string {
	t.Helper()
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return encodeZ85(b)
}

func TestZ85RFCVector(t *testing.T) {
	// ZeroMQ RFC 32's test vector.
	want := []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}
	got, err := decodeZ85("HelloWorld")
	if err != nil || string(got) != string(want) {
		t.Fatalf("decodeZ85(HelloWorld) = % x, %v; want % x", got, err, want)
	}
	if s := encodeZ85(want); s != "HelloWorld" {
		t.Fatalf("encodeZ85 = %q", s)
	}
}

func TestZ85Errors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Hello", ""},
		{"Hell", "not a multiple of 5"},
		{"Hello World", "not a multiple of 5"},
		{"Hel\"o", `'"' at character 4 is not a Z85 digit`},
		{"#####", "beyond 4 bytes"},
	} {
		_, err := decodeZ85(tc.in)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decodeZ85(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestValidatePubAndFingerprint(t *testing.T) {
	raw := make([]byte, KeySize)
	for i := range raw {
		raw[i] = byte(i)
	}
	pub := encodeZ85(raw)
	sum := sha256.Sum256(raw)
	var parts []string
	for _, b := range sum {
		parts = append(parts, fmt.Sprintf("%02x", b))
	}
	want := strings.Join(parts, ":")
	got, err := Fingerprint(pub)
	if err != nil || got != want {
		t.Fatalf("Fingerprint = %q, %v; want %q", got, err, want)
	}
	if len(got) != 95 {
		t.Errorf("fingerprint is %d characters, want 95", len(got))
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
