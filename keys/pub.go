package keys

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/saltproto"
)

// KeySize is the size of a Curve25519 public key in bytes; its Z85 text
// (ZeroMQ RFC 32) is 40 characters.
const KeySize = curve.KeySize

// ErrInvalidKey reports a public key that is neither the Z85 text of 32
// bytes nor an RSA public key in PEM.
var ErrInvalidKey = errors.New("invalid public key")

// Kinds of agent key (Kind). A brine agent presents a Curve25519 key; an
// unmodified salt-minion its RSA key, as Salt's master stores it in
// pki_dir/minions*. Both live in the same lists.
const (
	KindCurve = "curve"
	KindRSA   = "rsa"
)

// pemBegin starts every PEM block; it holds a space, which no Z85 text
// does, so the two kinds never overlap.
const pemBegin = "-----BEGIN "

// Kind is KindRSA for a PEM text and KindCurve otherwise; it does not
// validate (ValidatePub does).
func Kind(pub string) string {
	if strings.Contains(pub, pemBegin) {
		return KindRSA
	}
	return KindCurve
}

// NormalizePub is a PEM key as Salt compares it (salt.crypt.clean_key of
// the Salt releases that have it; 3006.6 strips the texts it compares):
// each line stripped, blank lines dropped, lines joined by "\n" without a
// final one. A minion's key therefore matches its record whatever line
// endings or trailing blanks its minion.pub was sent with. A Z85 key is
// returned as it is: brine's agents send it exactly, and a blank in it is
// an error ValidatePub reports.
func NormalizePub(pub string) string {
	if Kind(pub) != KindRSA {
		return pub
	}
	var lines []string
	// Python's splitlines ends a line at a lone "\r" too.
	pub = strings.ReplaceAll(strings.ReplaceAll(pub, "\r\n", "\n"), "\r", "\n")
	for l := range strings.Lines(pub) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// ValidatePub checks that pub is the Z85 text of a Curve25519 public key
// (a brine agent's) or an RSA public key in PEM (a salt-minion's
// minion.pub: "PUBLIC KEY", or PKCS#1 "RSA PUBLIC KEY").
func ValidatePub(pub string) error {
	if Kind(pub) == KindRSA {
		return validateRSA(pub)
	}
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

// validateRSA checks a PEM key as salt.crypt.get_rsa_pub_key reads it,
// saying what is wrong in Salt's terms (a private key given for a public
// one, a key of another algorithm, a truncated text).
func validateRSA(pub string) error {
	bad := func(why string, args ...any) error {
		return fmt.Errorf("%w: the minion key is not a valid RSA public key: "+why, append([]any{ErrInvalidKey}, args...)...)
	}
	block, rest := pem.Decode([]byte(strings.TrimSpace(pub)))
	switch {
	case block == nil:
		return bad("no complete PEM block (BEGIN and END lines around base64)")
	case strings.TrimSpace(string(rest)) != "":
		return bad("text after the %s block", block.Type)
	case strings.Contains(block.Type, "PRIVATE KEY"):
		return bad("it is a private key (%s); give the public key (minion.pub, not minion.pem)", block.Type)
	case block.Type != "PUBLIC KEY" && block.Type != "RSA PUBLIC KEY":
		return bad("a %s block, where PUBLIC KEY or RSA PUBLIC KEY is expected", block.Type)
	}
	if _, err := saltproto.ParsePublicKey(pub); err != nil {
		if block.Type == "PUBLIC KEY" {
			// saltproto names the Go type of a key of another
			// algorithm; the operator wants the algorithm.
			switch k, perr := x509.ParsePKIXPublicKey(block.Bytes); {
			case perr != nil:
				return bad("the %s block does not decode (truncated or damaged?)", block.Type)
			default:
				return bad("it is %s key, not RSA", algorithm(k))
			}
		}
		return bad("the %s block does not decode (truncated or damaged?)", block.Type)
	}
	return nil
}

// algorithm names a public key's algorithm with its article.
func algorithm(k any) string {
	switch k.(type) {
	case *ecdsa.PublicKey:
		return "an ECDSA"
	case ed25519.PublicKey:
		return "an Ed25519"
	}
	return "another algorithm's"
}

// Fingerprint is the SHA-256 fingerprint of pub, as `brine key -f` prints
// it: for a Z85 key the hash of its 32 bytes (as the agent prints it), for
// a PEM key Salt's salt.utils.crypt.pem_finger of the key file, what
// `salt-key -F` prints on a Salt master for the same minion.
func Fingerprint(pub string) (string, error) {
	if Kind(pub) == KindRSA {
		if err := validateRSA(pub); err != nil {
			return "", err
		}
		// pem_finger hashes the lines between the first and last with
		// their newlines; a final newline adds nothing to them.
		return saltproto.Fingerprint([]byte(NormalizePub(pub)+"\n"), "sha256")
	}
	k, err := parsePub(pub)
	if err != nil {
		return "", err
	}
	return curve.Fingerprint(k), nil
}
