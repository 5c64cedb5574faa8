package saltproto

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
)

// Crypticle sizes: AES-192 (Salt's key_size default) and an HMAC-SHA256
// key, one base64 string for both.
const (
	aesKeySize  = 192 / 8
	hmacKeySize = sha256.Size
	// NonceSize is the length of the hex uuid4 a minion puts in a
	// request and the master echoes inside its encrypted reply.
	NonceSize = 32
)

// pickleMark prefixes every serialized plaintext: Salt's
// Crypticle.PICKLE_PAD, kept from the days it held a pickle.
var pickleMark = []byte("pickle::")

// Errors of Crypticle.Decrypt and Loads.
var (
	// ErrAuthentication is Salt's AuthenticationError("message
	// authentication failed"): the HMAC does not match, most often
	// because the master rotated its AES key and the peer has the old one.
	ErrAuthentication = errors.New("saltproto: message authentication failed")
	// ErrNonce is Salt's "Nonce verification error".
	ErrNonce = errors.New("saltproto: nonce verification error")
	// ErrSerial is a publish whose serial is not above the last one seen:
	// Salt logs it and returns {} so that the minion ignores the replay.
	ErrSerial = errors.New("saltproto: a message with an invalid serial was received")
	// ErrNotPayload is a plaintext without the pickle:: mark: Salt
	// returns {} for it.
	ErrNotPayload = errors.New("saltproto: decrypted data is not a Salt payload")
)

// Crypticle is salt.crypt.Crypticle: AES-192-CBC with a random IV and
// PKCS#7 padding, then HMAC-SHA256 over IV and ciphertext, the session
// cipher of every "aes" load between master and minions and of the
// publish channel. It is safe for concurrent use.
type Crypticle struct {
	keyString string
	block     cipher.Block
	hmacKey   []byte

	mu     sync.Mutex
	serial int64
}

// GenerateKeyString is Crypticle.generate_key_string(): 24 AES key bytes
// and 32 HMAC key bytes, base64 encoded.
func GenerateKeyString() (string, error) {
	b := make([]byte, aesKeySize+hmacKeySize)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("saltproto: session key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// NewCrypticle is Crypticle(opts, key_string): the key string from
// GenerateKeyString (the master's "aes" secret, or the per-request key of
// an encrypted pillar).
func NewCrypticle(keyString string) (*Crypticle, error) {
	key, err := base64.StdEncoding.DecodeString(keyString)
	if err != nil {
		return nil, fmt.Errorf("saltproto: session key: %w", err)
	}
	if len(key) != aesKeySize+hmacKeySize {
		return nil, fmt.Errorf("saltproto: session key: %d bytes, want %d", len(key), aesKeySize+hmacKeySize)
	}
	block, err := aes.NewCipher(key[:aesKeySize])
	if err != nil {
		return nil, fmt.Errorf("saltproto: session key: %w", err)
	}
	return &Crypticle{keyString: keyString, block: block, hmacKey: key[aesKeySize:]}, nil
}

// KeyString is the key the Crypticle was made from.
func (c *Crypticle) KeyString() string { return c.keyString }

// Encrypt is Crypticle.encrypt: PKCS#7-style padding (a whole block when
// the data is aligned), a random IV in front, the HMAC-SHA256 of IV and
// ciphertext behind.
func (c *Crypticle) Encrypt(data []byte) ([]byte, error) {
	pad := aes.BlockSize - len(data)%aes.BlockSize
	out := make([]byte, aes.BlockSize, aes.BlockSize+len(data)+pad+sha256.Size)
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("saltproto: iv: %w", err)
	}
	out = append(out, data...)
	out = append(out, bytes.Repeat([]byte{byte(pad)}, pad)...)
	cipher.NewCBCEncrypter(c.block, out[:aes.BlockSize]).CryptBlocks(out[aes.BlockSize:], out[aes.BlockSize:])
	mac := hmac.New(sha256.New, c.hmacKey)
	mac.Write(out)
	return mac.Sum(out), nil
}

// Decrypt is Crypticle.decrypt: the HMAC is checked in constant time
// before anything is decrypted. Salt strips the padding without looking
// at it; here a padding that cannot be (which only a message with a valid
// HMAC, so from a key holder, could carry) is an error.
func (c *Crypticle) Decrypt(data []byte) ([]byte, error) {
	if len(data) < aes.BlockSize+sha256.Size {
		return nil, ErrAuthentication
	}
	body, sig := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	mac := hmac.New(sha256.New, c.hmacKey)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), sig) {
		return nil, ErrAuthentication
	}
	iv, ct := body[:aes.BlockSize], body[aes.BlockSize:]
	if len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("saltproto: ciphertext of %d bytes is not whole blocks", len(ct))
	}
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(c.block, iv).CryptBlocks(pt, ct)
	pad := int(pt[len(pt)-1])
	if pad == 0 || pad > aes.BlockSize {
		return nil, fmt.Errorf("saltproto: bad padding %d", pad)
	}
	return pt[:len(pt)-pad], nil
}

// Dumps is Crypticle.dumps(obj, nonce): "pickle::", the nonce when there
// is one (the minion's request nonce, echoed so that it can tell the reply
// is to its request), and the payload, encrypted.
func (c *Crypticle) Dumps(v any, nonce string) ([]byte, error) {
	if nonce != "" && len(nonce) != NonceSize {
		return nil, fmt.Errorf("saltproto: nonce %q is not %d characters", nonce, NonceSize)
	}
	p, err := Dumps(v)
	if err != nil {
		return nil, err
	}
	pt := make([]byte, 0, len(pickleMark)+len(nonce)+len(p))
	pt = append(pt, pickleMark...)
	pt = append(pt, nonce...)
	pt = append(pt, p...)
	return c.Encrypt(pt)
}

// Loads is Crypticle.loads(data, nonce=nonce): decrypt, check the mark
// and the nonce when one is expected, decode. A mapping with a "serial"
// (what the master puts in every publish) has it removed and must be
// above the last serial this Crypticle accepted, else ErrSerial: the
// minion's replay guard. Salt returns {} for a missing mark or a stale
// serial; here they are errors (ErrNotPayload, ErrSerial) so the caller
// can tell them from an empty load.
func (c *Crypticle) Loads(data []byte, nonce string) (any, error) {
	pt, err := c.Decrypt(data)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(pt, pickleMark) {
		return nil, ErrNotPayload
	}
	pt = pt[len(pickleMark):]
	if nonce != "" {
		if len(pt) < NonceSize || string(pt[:NonceSize]) != nonce {
			return nil, ErrNonce
		}
		pt = pt[NonceSize:]
	}
	v, err := Loads(pt)
	if err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok {
		if s, ok := m["serial"]; ok {
			delete(m, "serial")
			serial, ok := s.(int64)
			if !ok {
				return nil, fmt.Errorf("%w: serial is a %T", ErrSerial, s)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if serial <= c.serial {
				return nil, fmt.Errorf("%w: this serial %d, last serial %d", ErrSerial, serial, c.serial)
			}
			c.serial = serial
		}
	}
	return v, nil
}
