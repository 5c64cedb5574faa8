package curve

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/nacl/box"
	"golang.org/x/crypto/nacl/secretbox"
)

// Sizes of the command bodies as zmq4 hands them over (the command name and
// its length byte already removed), after RFC 26 and libzmq 4.3.
const (
	helloSize       = 2 + 72 + 32 + 8 + 80 // version, padding, C', short nonce, signature box
	welcomeSize     = 16 + 144             // long nonce, box [S' + cookie]
	cookieSize      = 16 + 80              // long nonce, secretbox [C' + s']
	vouchSize       = 16 + 80              // long nonce, box [C' + S]
	initiatePlain   = 32 + vouchSize       // C + vouch, then metadata
	minInitiateSize = cookieSize + 8 + initiatePlain + box.Overhead
	minReadySize    = 8 + box.Overhead // short nonce, box [metadata]
)

// Nonce prefixes (RFC 26; libzmq uses the same).
const (
	helloPrefix    = "CurveZMQHELLO---"
	welcomePrefix  = "WELCOME-"
	cookiePrefix   = "COOKIE--"
	initiatePrefix = "CurveZMQINITIATE"
	vouchPrefix    = "VOUCH---"
	readyPrefix    = "CurveZMQREADY---"
	clientPrefix   = "CurveZMQMESSAGEC"
	serverPrefix   = "CurveZMQMESSAGES"
)

var (
	// ErrServerKey reports that the server does not hold the secret key of
	// the server key the client was configured with: it could not open the
	// client's HELLO, or its WELCOME was not sealed with that key.
	ErrServerKey = errors.New("server key mismatch")
	// ErrRefused reports that the server answered with an ERROR command;
	// the error's text carries the server's reason.
	ErrRefused = errors.New("refused by the server")
	// ErrProtocol reports a command or message frame that breaks the
	// protocol: truncated, wrong size, a box that does not open, a wrong
	// cookie or vouch, an unexpected command or a replayed nonce.
	ErrProtocol = errors.New("CURVE protocol violation")
)

// reasonServerKey is the ERROR reason a server sends when a HELLO does not
// open with its key; a client maps it to ErrServerKey.
const reasonServerKey = "wrong server key"

func protoErr(format string, args ...any) error {
	return fmt.Errorf("curve: %w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

func shortNonce(prefix string, n uint64) *[24]byte {
	var nonce [24]byte
	copy(nonce[:], prefix)
	binary.BigEndian.PutUint64(nonce[16:], n)
	return &nonce
}

func longNonce(prefix string, tail []byte) *[24]byte {
	var nonce [24]byte
	copy(nonce[:], prefix)
	copy(nonce[8:], tail)
	return &nonce
}

// keyPtr returns k as the array pointer nacl wants.
func keyPtr(k *Key) *[32]byte { return (*[32]byte)(k) }

// precompute sets shared to the box key of peer and secret, as
// box.Precompute does, but refuses a peer key of small order (0, 1, the
// points of order 2, 4 and 8, in any of their encodings): with such a key
// the X25519 result is all zero whatever the secret, so the box key is
// HSalsa20(0), known to anyone, and a client holding no secret at all could
// pass for that key. libsodium (and so libzmq) refuses these the same way
// (crypto_scalarmult fails on an all-zero result). which names the key for
// the error, e.g. "HELLO client transient key". box.Precompute does not
// tell, so the X25519 is done once more to check (a handshake's few extra
// tens of microseconds).
func precompute(shared *[32]byte, peer, secret *Key, which string) error {
	dh, err := curve25519.X25519(secret[:], peer[:])
	if err != nil {
		// x/crypto's only failure here is an all-zero result.
		return protoErr("%s %s is a low-order point (shared secret all zero)", which, peer)
	}
	clear(dh)
	box.Precompute(shared, keyPtr(peer), keyPtr(secret))
	return nil
}

// serverHandshake is the server's side of one connection's handshake, kept
// free of I/O so that its parsing can be fuzzed.
type serverHandshake struct {
	keys       KeyPair
	rand       io.Reader
	client     Key     // C', the client's transient key
	transient  KeyPair // S', s'
	cookieKey  [32]byte
	helloNonce uint64
	shared     [32]byte // precomputed from C' and s'
}

// hello checks a HELLO body and returns the WELCOME body. A HELLO whose
// signature box does not open was sealed for another server key: the error
// then matches ErrServerKey as well as ErrProtocol.
func (h *serverHandshake) hello(body []byte) ([]byte, error) {
	if len(body) != helloSize {
		return nil, protoErr("HELLO of %d bytes, want %d", len(body), helloSize)
	}
	if body[0] != 1 || body[1] != 0 {
		return nil, protoErr("HELLO announces CurveZMQ %d.%d, want 1.0", body[0], body[1])
	}
	for _, b := range body[2:74] {
		if b != 0 {
			return nil, protoErr("HELLO padding is not zero")
		}
	}
	copy(h.client[:], body[74:106])
	h.helloNonce = binary.BigEndian.Uint64(body[106:114])
	// C' and s seal both HELLO's signature box and WELCOME.
	var hk [32]byte
	defer clear(hk[:])
	if err := precompute(&hk, &h.client, &h.keys.Secret, "HELLO client transient key"); err != nil {
		return nil, err
	}
	sig, ok := box.OpenAfterPrecomputation(nil, body[114:], shortNonce(helloPrefix, h.helloNonce), &hk)
	if !ok {
		return nil, fmt.Errorf("curve: %w: %w: HELLO signature box does not open with this server's key", ErrProtocol, ErrServerKey)
	}
	if subtle.ConstantTimeCompare(sig, make([]byte, 64)) != 1 {
		return nil, protoErr("HELLO signature box does not hold 64 zero bytes")
	}

	var err error
	if h.transient, err = newKeyPair(h.rand); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(h.rand, h.cookieKey[:]); err != nil {
		return nil, fmt.Errorf("curve: cookie key: %w", err)
	}
	var nonces [32]byte // cookie long nonce, welcome long nonce
	if _, err := io.ReadFull(h.rand, nonces[:]); err != nil {
		return nil, fmt.Errorf("curve: nonce: %w", err)
	}
	plain := make([]byte, 0, 32+cookieSize)
	plain = append(plain, h.transient.Public[:]...)
	plain = append(plain, nonces[:16]...)
	var cookiePlain [64]byte
	copy(cookiePlain[:32], h.client[:])
	copy(cookiePlain[32:], h.transient.Secret[:])
	plain = secretbox.Seal(plain, cookiePlain[:], longNonce(cookiePrefix, nonces[:16]), &h.cookieKey)
	clear(cookiePlain[:])

	welcome := make([]byte, 0, welcomeSize)
	welcome = append(welcome, nonces[16:]...)
	welcome = box.SealAfterPrecomputation(welcome, plain, longNonce(welcomePrefix, nonces[16:]), &hk)
	clear(plain)
	return welcome, nil
}

// initiate checks an INITIATE body (the cookie, the box, the vouch) and
// returns the client's long-term key, its metadata (checked for form) and
// the INITIATE's short nonce. The cookie key is forgotten on success.
func (h *serverHandshake) initiate(body []byte) (client Key, meta []byte, nonce uint64, err error) {
	if len(body) < minInitiateSize {
		return Key{}, nil, 0, protoErr("INITIATE of %d bytes, want at least %d", len(body), minInitiateSize)
	}
	cookie, ok := secretbox.Open(nil, body[16:cookieSize], longNonce(cookiePrefix, body[:16]), &h.cookieKey)
	if !ok {
		return Key{}, nil, 0, protoErr("INITIATE cookie does not open")
	}
	if subtle.ConstantTimeCompare(cookie[:32], h.client[:]) != 1 || subtle.ConstantTimeCompare(cookie[32:], h.transient.Secret[:]) != 1 {
		clear(cookie)
		return Key{}, nil, 0, protoErr("INITIATE cookie is not the one sent in WELCOME")
	}
	clear(cookie)
	nonce = binary.BigEndian.Uint64(body[cookieSize : cookieSize+8])
	if nonce <= h.helloNonce {
		return Key{}, nil, 0, protoErr("INITIATE short nonce %d does not follow HELLO's %d", nonce, h.helloNonce)
	}
	if err := precompute(&h.shared, &h.client, &h.transient.Secret, "INITIATE client transient key"); err != nil {
		return Key{}, nil, 0, err
	}
	plain, ok := box.OpenAfterPrecomputation(nil, body[cookieSize+8:], shortNonce(initiatePrefix, nonce), &h.shared)
	if !ok {
		return Key{}, nil, 0, protoErr("INITIATE box does not open")
	}
	copy(client[:], plain[:32])
	var vk [32]byte
	defer clear(vk[:])
	if err := precompute(&vk, &client, &h.transient.Secret, "INITIATE client key"); err != nil {
		return Key{}, nil, 0, err
	}
	vouch, ok := box.OpenAfterPrecomputation(nil, plain[48:initiatePlain], longNonce(vouchPrefix, plain[32:48]), &vk)
	if !ok {
		return Key{}, nil, 0, protoErr("INITIATE vouch does not open with the client's key")
	}
	if subtle.ConstantTimeCompare(vouch[:32], h.client[:]) != 1 || subtle.ConstantTimeCompare(vouch[32:], h.keys.Public[:]) != 1 {
		return Key{}, nil, 0, protoErr("INITIATE vouch is not for this connection and server")
	}
	meta = plain[initiatePlain:]
	if err := checkMetadata(meta); err != nil {
		return Key{}, nil, 0, protoErr("INITIATE metadata: %v", err)
	}
	clear(h.cookieKey[:])
	return client, meta, nonce, nil
}

// ready returns the READY body carrying meta, sealed with short nonce 1.
func (h *serverHandshake) ready(meta []byte) []byte {
	out := binary.BigEndian.AppendUint64(make([]byte, 0, minReadySize+len(meta)), 1)
	return box.SealAfterPrecomputation(out, meta, shortNonce(readyPrefix, 1), &h.shared)
}

// forget clears the handshake's secrets.
func (h *serverHandshake) forget() {
	clear(h.cookieKey[:])
	clear(h.transient.Secret[:])
	clear(h.shared[:])
}

// clientHandshake is the client's side of one connection's handshake.
type clientHandshake struct {
	keys      KeyPair
	server    Key // S
	rand      io.Reader
	transient KeyPair // C', c'
	serverT   Key     // S'
	cookie    [cookieSize]byte
	helloKey  [32]byte // precomputed from S and c': HELLO and WELCOME
	shared    [32]byte // precomputed from S' and c'
}

// Client short nonces: HELLO is 1, INITIATE 2, MESSAGE from 3 on (libzmq
// counts the same way).
const (
	helloNonce    = 1
	initiateNonce = 2
)

// hello returns the HELLO body.
func (h *clientHandshake) hello() ([]byte, error) {
	var err error
	if h.transient, err = newKeyPair(h.rand); err != nil {
		return nil, err
	}
	out := make([]byte, 74, helloSize)
	out[0] = 1 // version 1.0, then 72 bytes of zero padding
	out = append(out, h.transient.Public[:]...)
	out = binary.BigEndian.AppendUint64(out, helloNonce)
	if err := precompute(&h.helloKey, &h.server, &h.transient.Secret, "configured server key"); err != nil {
		return nil, err
	}
	var zero [64]byte
	return box.SealAfterPrecomputation(out, zero[:], shortNonce(helloPrefix, helloNonce), &h.helloKey), nil
}

// welcome opens a WELCOME body, keeping S' and the cookie.
func (h *clientHandshake) welcome(body []byte) error {
	if len(body) != welcomeSize {
		return protoErr("WELCOME of %d bytes, want %d", len(body), welcomeSize)
	}
	plain, ok := box.OpenAfterPrecomputation(nil, body[16:], longNonce(welcomePrefix, body[:16]), &h.helloKey)
	if !ok {
		return fmt.Errorf("curve: %w: WELCOME was not sealed with the configured server key %s", ErrServerKey, h.server)
	}
	copy(h.serverT[:], plain[:32])
	copy(h.cookie[:], plain[32:])
	return precompute(&h.shared, &h.serverT, &h.transient.Secret, "WELCOME server transient key")
}

// initiate returns the INITIATE body carrying meta.
func (h *clientHandshake) initiate(meta []byte) ([]byte, error) {
	var vn [16]byte
	if _, err := io.ReadFull(h.rand, vn[:]); err != nil {
		return nil, fmt.Errorf("curve: nonce: %w", err)
	}
	var vouchPlain [64]byte
	copy(vouchPlain[:32], h.transient.Public[:])
	copy(vouchPlain[32:], h.server[:])
	plain := make([]byte, 0, initiatePlain+len(meta))
	plain = append(plain, h.keys.Public[:]...)
	plain = append(plain, vn[:]...)
	// S' was checked in welcome; the vouch key is computed afresh because
	// it is the long-term secret's.
	var vk [32]byte
	defer clear(vk[:])
	if err := precompute(&vk, &h.serverT, &h.keys.Secret, "WELCOME server transient key"); err != nil {
		return nil, err
	}
	plain = box.SealAfterPrecomputation(plain, vouchPlain[:], longNonce(vouchPrefix, vn[:]), &vk)
	plain = append(plain, meta...)

	out := make([]byte, 0, cookieSize+8+len(plain)+box.Overhead)
	out = append(out, h.cookie[:]...)
	out = binary.BigEndian.AppendUint64(out, initiateNonce)
	return box.SealAfterPrecomputation(out, plain, shortNonce(initiatePrefix, initiateNonce), &h.shared), nil
}

// ready opens a READY body and returns the server's metadata (checked for
// form) and READY's short nonce.
func (h *clientHandshake) ready(body []byte) (meta []byte, nonce uint64, err error) {
	if len(body) < minReadySize {
		return nil, 0, protoErr("READY of %d bytes, want at least %d", len(body), minReadySize)
	}
	nonce = binary.BigEndian.Uint64(body[:8])
	meta, ok := box.OpenAfterPrecomputation(nil, body[8:], shortNonce(readyPrefix, nonce), &h.shared)
	if !ok {
		return nil, 0, protoErr("READY box does not open")
	}
	if err := checkMetadata(meta); err != nil {
		return nil, 0, protoErr("READY metadata: %v", err)
	}
	return meta, nonce, nil
}

// forget clears the handshake's secrets.
func (h *clientHandshake) forget() {
	clear(h.transient.Secret[:])
	clear(h.helloKey[:])
	clear(h.shared[:])
}

// checkMetadata checks ZMTP metadata (RFC 23): properties of a 1-byte name
// length, a name of 1 to 255 characters among letters, digits and "-_.+", a
// 4-byte big-endian value length and the value, filling b exactly.
func checkMetadata(b []byte) error {
	for len(b) > 0 {
		n := int(b[0])
		if n == 0 {
			return errors.New("empty property name")
		}
		if len(b) < 1+n+4 {
			return errors.New("truncated property")
		}
		name := b[1 : 1+n]
		for _, c := range name {
			if !nameChar(c) {
				return fmt.Errorf("property name %q has a character outside letters, digits and -_.+", name)
			}
		}
		v := binary.BigEndian.Uint32(b[1+n:])
		rest := b[1+n+4:]
		if uint64(v) > uint64(len(rest)) {
			return fmt.Errorf("property %q announces %d bytes, %d left", name, v, len(rest))
		}
		b = rest[v:]
	}
	return nil
}

func nameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '+'
}
