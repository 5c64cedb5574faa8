package keys

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a Curve25519 public key in bytes; its Z85 text
// (ZeroMQ RFC 32) is 40 characters.
const KeySize = 32

// ErrInvalidKey reports a public key that is not the Z85 text of 32 bytes.
var ErrInvalidKey = errors.New("invalid public key")

// z85Digits is RFC 32's alphabet: the digit of value i is z85Digits[i].
const z85Digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Values maps a character to its value plus one (0: not a digit).
var z85Values = func() (v [256]byte) {
	for i := range len(z85Digits) {
		v[z85Digits[i]] = byte(i + 1)
	}
	return v
}()

// decodeZ85 decodes Z85 text (RFC 32): every 5 characters are 4 bytes,
// big-endian, in base 85.
func decodeZ85(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("Z85 text is %d characters, not a multiple of 5", len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := range 5 {
			d := z85Values[s[i+j]]
			if d == 0 {
				return nil, fmt.Errorf("%q at character %d is not a Z85 digit", s[i+j], i+j+1)
			}
			v = v*85 + uint64(d-1)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("characters %d to %d are beyond 4 bytes", i+1, i+5)
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, nil
}

// ValidatePub checks that pub is the Z85 text of a Curve25519 public key.
func ValidatePub(pub string) error {
	_, err := rawKey(pub)
	return err
}

func rawKey(pub string) ([]byte, error) {
	if len(pub) != 40 {
		return nil, fmt.Errorf("%w: %d characters, want the 40 characters of a Z85 Curve25519 key", ErrInvalidKey, len(pub))
	}
	b, err := decodeZ85(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	return b, nil
}

// Fingerprint is the SHA-256 of the 32 bytes of the Z85 public key pub, in
// lower-case hexadecimal pairs separated by colons, as `brine key -f` and
// the agent print it (salt-key prints the hash of a PEM key the same way).
func Fingerprint(pub string) (string, error) {
	b, err := rawKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	var f strings.Builder
	f.Grow(len(h) + len(h)/2)
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			f.WriteByte(':')
		}
		f.WriteString(h[i : i+2])
	}
	return f.String(), nil
}
