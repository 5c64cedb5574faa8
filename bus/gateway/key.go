package gateway

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// KeySize is the number of random bytes in a key made by EnsureKey; the file
// holds them hex-encoded.
const KeySize = 32

// LoadKey reads the shared secret from a key file. Surrounding whitespace is
// trimmed so that a key pasted with an editor's trailing newline still works.
func LoadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gateway key: %w", err)
	}
	key := bytes.TrimSpace(b)
	if len(key) == 0 {
		return nil, fmt.Errorf("gateway key: %s is empty", path)
	}
	return key, nil
}

// EnsureKey returns the key stored at path, creating the file with a fresh
// random key (mode 0600) when it does not exist, so that a master started
// with no configuration is still authenticated. The file appears complete or
// not at all (written aside, then linked into place), so two processes racing
// to create it agree on one key.
func EnsureKey(path string) ([]byte, error) {
	key, err := LoadKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("gateway key: %w", err)
	}
	enc := []byte(hex.EncodeToString(raw))
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gateway key: %w", err)
	}
	f, err := os.CreateTemp(dir, ".master.key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("gateway key: %w", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(append(enc, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return nil, fmt.Errorf("gateway key: writing %s: %w", path, err)
	}
	if err := os.Link(f.Name(), path); errors.Is(err, fs.ErrExist) {
		return LoadKey(path)
	} else if err != nil {
		return nil, fmt.Errorf("gateway key: %w", err)
	}
	return enc, nil
}

// Sign returns the mac a request carries: hex HMAC-SHA256 over the method, a
// newline and the body. Binding the method stops a signed body from being
// replayed under another method.
func Sign(key []byte, method string, body []byte) string {
	return string(newSigner(key).sign(method, body))
}

// signer signs and verifies requests with one key. Its HMAC states are
// pooled: setting one up hashes the padded key twice, more work than
// signing a small request.
type signer struct {
	macs sync.Pool
}

func newSigner(key []byte) *signer {
	s := &signer{}
	s.macs.New = func() any { return hmac.New(sha256.New, key) }
	return s
}

func (s *signer) sign(method string, body []byte) []byte {
	m := s.macs.Get().(hash.Hash)
	defer s.macs.Put(m)
	m.Reset()
	m.Write([]byte(method))
	m.Write([]byte{'\n'})
	m.Write(body)
	var sum [sha256.Size]byte
	return hex.AppendEncode(make([]byte, 0, 2*sha256.Size), m.Sum(sum[:0]))
}

// verify compares a request's mac with the expected one in constant time.
func (s *signer) verify(method string, body, mac []byte) bool {
	return subtle.ConstantTimeCompare(s.sign(method, body), mac) == 1
}
