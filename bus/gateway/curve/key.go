package curve

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// KeySize is the size of a Curve25519 key in bytes.
const KeySize = 32

// Key is a Curve25519 public or secret key. Its text form is the 40
// characters of Z85 (ZeroMQ RFC 32) that libzmq's zmq_curve_keypair and the
// curve_publickey/curve_secretkey/curve_serverkey socket options use.
type Key [KeySize]byte

// KeyPair is a long-term (or transient) Curve25519 key pair.
type KeyPair struct {
	Public Key
	Secret Key
}

// String shows the public key only, so that printing a KeyPair cannot leak
// its secret key into a log.
func (kp KeyPair) String() string { return "{" + kp.Public.String() + " <secret>}" }

// GoString is String, for %#v.
func (kp KeyPair) GoString() string { return kp.String() }

// ErrKeyText reports key text that is not 40 characters of Z85.
var ErrKeyText = errors.New("invalid key text")

// String returns the key in Z85 (40 characters).
func (k Key) String() string { return string(z85Encode(k[:])) }

// ParseKey decodes a key from its 40-character Z85 text.
func ParseKey(s string) (Key, error) {
	var k Key
	if len(s) != 40 {
		return k, fmt.Errorf("%w: %d characters, want 40 of Z85", ErrKeyText, len(s))
	}
	b, err := z85Decode(s)
	if err != nil {
		return k, fmt.Errorf("%w: %w", ErrKeyText, err)
	}
	copy(k[:], b)
	return k, nil
}

// GenerateKeyPair returns a new random key pair.
func GenerateKeyPair() (KeyPair, error) {
	return newKeyPair(rand.Reader)
}

// newKeyPair reads a secret key from r and computes its public key.
func newKeyPair(r io.Reader) (KeyPair, error) {
	var kp KeyPair
	if _, err := io.ReadFull(r, kp.Secret[:]); err != nil {
		return KeyPair{}, fmt.Errorf("curve: generating a key: %w", err)
	}
	kp.Public = publicKey(kp.Secret)
	return kp, nil
}

// publicKey multiplies the Curve25519 base point by secret (clamped, as
// libsodium's crypto_scalarmult_base does).
func publicKey(secret Key) Key {
	priv, err := ecdh.X25519().NewPrivateKey(secret[:])
	if err != nil {
		// NewPrivateKey fails only on a key that is not 32 bytes long.
		panic("curve: X25519 refused a 32-byte key: " + err.Error())
	}
	var pub Key
	copy(pub[:], priv.PublicKey().Bytes())
	return pub
}

// deriveSalt separates Derive's keys from any other use of the same secret.
const deriveSalt = "brine curve25519 key v1"

// Derive returns the key pair determined by a shared secret and a label: the
// secret key is HKDF-SHA256(secret, salt "brine curve25519 key v1", info
// label) truncated to 32 bytes, the public key its Curve25519 base-point
// multiple. Every holder of the secret derives the same pair for a label, and
// different labels give unrelated pairs.
func Derive(secret []byte, label string) KeyPair {
	b, err := hkdf.Key(sha256.New, secret, []byte(deriveSalt), label, KeySize)
	if err != nil {
		// hkdf.Key fails only when asked for more than 255 hash lengths.
		panic("curve: HKDF refused a 32-byte key: " + err.Error())
	}
	var kp KeyPair
	copy(kp.Secret[:], b)
	kp.Public = publicKey(kp.Secret)
	return kp
}

// Fingerprint returns the SHA-256 of the key's 32 bytes as lower-case hex
// pairs separated by colons, the form of Salt's master_finger.
func Fingerprint(k Key) string {
	sum := sha256.Sum256(k[:])
	return colonHex(sum[:])
}

// ErrFingerprint reports text that is not a SHA-256 fingerprint.
var ErrFingerprint = errors.New("not a SHA-256 fingerprint (64 hex digits, colons allowed)")

// ParseFingerprint reads a fingerprint written with or without colons, in
// either case (as operators paste it), and returns it as Fingerprint
// prints it, so that the two compare as strings.
func ParseFingerprint(s string) (string, error) {
	b, err := hex.DecodeString(strings.ReplaceAll(s, ":", ""))
	if err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("%q: %w", s, ErrFingerprint)
	}
	return colonHex(b), nil
}

// colonHex is b as lower-case hex pairs separated by colons.
func colonHex(b []byte) string {
	h := hex.EncodeToString(b)
	var out strings.Builder
	out.Grow(len(h) + len(b) - 1)
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			out.WriteByte(':')
		}
		out.WriteString(h[i : i+2])
	}
	return out.String()
}

const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Decoding maps a character to its Z85 digit plus one (0: not Z85).
var z85Decoding = func() (t [256]byte) {
	for i := range len(z85Alphabet) {
		t[z85Alphabet[i]] = byte(i + 1)
	}
	return t
}()

// z85Encode encodes b, whose length must be a multiple of 4 (RFC 32).
func z85Encode(b []byte) []byte {
	out := make([]byte, 0, len(b)/4*5)
	for i := 0; i+4 <= len(b); i += 4 {
		v := uint32(b[i])<<24 | uint32(b[i+1])<<16 | uint32(b[i+2])<<8 | uint32(b[i+3])
		var c [5]byte
		for j := 4; j >= 0; j-- {
			c[j] = z85Alphabet[v%85]
			v /= 85
		}
		out = append(out, c[:]...)
	}
	return out
}

// z85Decode decodes s, whose length must be a multiple of 5 (RFC 32).
func z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("Z85 text of %d characters is not a multiple of 5", len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := range 5 {
			d := z85Decoding[s[i+j]]
			if d == 0 {
				return nil, fmt.Errorf("character %q at %d is not Z85", s[i+j], i+j)
			}
			v = v*85 + uint64(d-1)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("Z85 group %q at %d overflows 32 bits", s[i:i+5], i)
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, nil
}
