package keys

import (
	"errors"
	"fmt"

	"github.com/brinehq/brine/bus/gateway/curve"
)

// KeySize is the size of a Curve25519 public key in bytes; its Z85 text
// (ZeroMQ RFC 32) is 40 characters.
const KeySize = curve.KeySize

// ErrInvalidKey reports a public key that is not the Z85 text of 32 bytes.
var ErrInvalidKey = errors.New("invalid public key")

// ValidatePub checks that pub is the Z85 text of a Curve25519 public key.
func ValidatePub(pub string) error {
	_, err := parsePub(pub)
	return err
}

func parsePub(pub string) (curve.Key, error) {
	k, err := curve.ParseKey(pub)
	if err != nil {
		return k, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	return k, nil
}

// Fingerprint is the SHA-256 fingerprint of the Z85 public key pub, as
// `brine key -f` and the agent print it (salt-key prints the hash of a PEM
// key the same way).
func Fingerprint(pub string) (string, error) {
	k, err := parsePub(pub)
	if err != nil {
		return "", err
	}
	return curve.Fingerprint(k), nil
}
