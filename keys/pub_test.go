package keys

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/saltproto"
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

// saltFinger is what Salt 3006.6's pem_finger printed for
// testdata/salt-minion.pub (see testdata/README): what `salt-key -F` shows.
const saltFinger = "66:c1:d4:d6:78:27:f6:8c:45:35:d7:56:22:bf:38:a1:da:c4:10:8e:56:e8:83:33:1d:7a:ae:ba:51:01:c6:af"

// readTestdata returns a file of testdata as text.
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// saltPub is the public key Salt made (testdata/salt-minion.pub), as its
// file holds it: PyCryptodome's PEM, without a final newline.
func saltPub(t testing.TB) string { return readTestdata(t, "salt-minion.pub") }

// newRSAPub returns a new RSA public key in PEM, as a salt-minion holds
// it (1024 bits: the tests need many, and fast).
func newRSAPub(t testing.TB) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	return saltproto.PublicKeyPEM(&k.PublicKey)
}

// crlf is pub with Windows line endings, indented lines, trailing blanks
// and blank lines around: what a minion.pub edited by hand may hold.
func crlf(pub string) string {
	return "\r\n\n  " + strings.ReplaceAll(pub, "\n", "  \r\n") + "\r\n\r\n"
}

func TestValidatePubKinds(t *testing.T) {
	pub := saltPub(t)
	block, _ := pem.Decode([]byte(pub))
	spki, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(spki.(*rsa.PublicKey))}))
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	ecPub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecDER}))
	lines := strings.Split(pub, "\n")
	z85 := newPub(t)
	for _, tc := range []struct {
		name, pub string
		kind      string
		want      string // "" valid, else a part of the error
	}{
		{"z85", z85, KindCurve, ""},
		{"z85 truncated", z85[:30], KindCurve, "30 characters"},
		{"z85 with a blank", z85 + " ", KindCurve, "41 characters"},
		{"salt's minion.pub", pub, KindRSA, ""},
		{"crlf and blanks", crlf(pub), KindRSA, ""},
		{"pkcs1", pkcs1, KindRSA, ""},
		{"truncated: no END line", strings.Join(lines[:4], "\n"), KindRSA, "no complete PEM block"},
		{"truncated: a line lost", strings.Join(append(lines[:3:3], lines[5:]...), "\n"), KindRSA, "does not decode"},
		{"private key", readTestdata(t, "salt-minion.pem"), KindRSA, "it is a private key (RSA PRIVATE KEY)"},
		{"ecdsa", ecPub, KindRSA, "it is an ECDSA key, not RSA"},
		{"certificate", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", KindRSA, "a CERTIFICATE block"},
		{"garbage body", "-----BEGIN PUBLIC KEY-----\nnot a key at all\n-----END PUBLIC KEY-----", KindRSA, "does not decode"},
		{"two keys", pub + "\n" + pkcs1, KindRSA, "text after the PUBLIC KEY block"},
		{"garbage", "hello world", KindCurve, "11 characters"},
		{"empty", "", KindCurve, "0 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if k := Kind(tc.pub); k != tc.kind {
				t.Errorf("Kind = %q, want %q", k, tc.kind)
			}
			err := ValidatePub(tc.pub)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ValidatePub = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ValidatePub = %v, want ErrInvalidKey mentioning %q", err, tc.want)
			}
			if tc.kind == KindRSA && !strings.Contains(err.Error(), "not a valid RSA public key") {
				t.Errorf("%v: does not say it is no valid RSA public key", err)
			}
			if strings.Contains(err.Error(), "*") {
				t.Errorf("%v: names a Go type", err)
			}
			if _, ferr := Fingerprint(tc.pub); !errors.Is(ferr, ErrInvalidKey) {
				t.Errorf("Fingerprint = %v, want ErrInvalidKey", ferr)
			}
		})
	}
}

func TestNormalizePub(t *testing.T) {
	pub := saltPub(t)
	z85 := newPub(t)
	for _, tc := range []struct{ name, in, want string }{
		{"as salt writes it", pub, pub},
		{"final newline", pub + "\n", pub},
		{"crlf, indents, blanks", crlf(pub), pub},
		{"cr only, as python's splitlines", strings.ReplaceAll(pub, "\n", "\r"), pub},
		{"z85 untouched", z85, z85},
		{"z85 blank kept for ValidatePub to refuse", " " + z85, " " + z85},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NormalizePub(tc.in)
			if got != tc.want {
				t.Errorf("NormalizePub(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := NormalizePub(got); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

// TestFingerprintIsSalts: a PEM key's fingerprint is Salt's pem_finger,
// however its text was sent.
func TestFingerprintIsSalts(t *testing.T) {
	pub := saltPub(t)
	for _, in := range []string{pub, pub + "\n", crlf(pub), NormalizePub(crlf(pub))} {
		got, err := Fingerprint(in)
		if err != nil || got != saltFinger {
			t.Errorf("Fingerprint(%q) = %q, %v; want Salt's %q", in, got, err, saltFinger)
		}
	}
}
