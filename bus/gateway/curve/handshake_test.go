package curve

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/nacl/box"
)

// started returns a server that has answered ch's HELLO, and ch after WELCOME.
func started(t *testing.T) (*serverHandshake, *clientHandshake) {
	t.Helper()
	skp, ckp := mustKeyPair(t), mustKeyPair(t)
	sh := &serverHandshake{keys: skp, rand: rand.Reader}
	ch := &clientHandshake{keys: ckp, server: skp.Public, rand: rand.Reader}
	hello, err := ch.hello()
	if err != nil {
		t.Fatal(err)
	}
	welcome, err := sh.hello(hello)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.welcome(welcome); err != nil {
		t.Fatal(err)
	}
	return sh, ch
}

// craft builds an INITIATE the way clientHandshake.initiate does, with
// each part replaceable to forge a bad one.
type craft struct {
	nonce   uint64
	signer  *KeyPair // long-term key sealing the vouch
	claimed *Key     // C in the box
	vouchC  *Key     // C' in the vouch
	vouchS  *Key     // S in the vouch
	meta    []byte
	cookie  []byte
	// vouchKey, when set, seals the vouch instead of the box key of
	// signer and S' (a forger's key).
	vouchKey *[32]byte
}

func (c craft) initiate(ch *clientHandshake) []byte {
	if c.nonce == 0 {
		c.nonce = initiateNonce
	}
	signer, claimed, vouchC, vouchS := ch.keys, ch.keys.Public, ch.transient.Public, ch.server
	if c.signer != nil {
		signer = *c.signer
	}
	if c.claimed != nil {
		claimed = *c.claimed
	}
	if c.vouchC != nil {
		vouchC = *c.vouchC
	}
	if c.vouchS != nil {
		vouchS = *c.vouchS
	}
	cookie := ch.cookie[:]
	if c.cookie != nil {
		cookie = c.cookie
	}
	vn := make([]byte, 16)
	rand.Read(vn)
	plain := append(slices.Clone(claimed[:]), vn...)
	vouchPlain := append(slices.Clone(vouchC[:]), vouchS[:]...)
	if c.vouchKey != nil {
		plain = box.SealAfterPrecomputation(plain, vouchPlain, longNonce(vouchPrefix, vn), c.vouchKey)
	} else {
		plain = box.Seal(plain, vouchPlain, longNonce(vouchPrefix, vn), keyPtr(&ch.serverT), keyPtr(&signer.Secret))
	}
	plain = append(plain, c.meta...)
	out := binary.BigEndian.AppendUint64(slices.Clone(cookie), c.nonce)
	return box.SealAfterPrecomputation(out, plain, shortNonce(initiatePrefix, c.nonce), &ch.shared)
}

func TestServerHelloRejects(t *testing.T) {
	skp := mustKeyPair(t)
	ch := &clientHandshake{keys: mustKeyPair(t), server: skp.Public, rand: rand.Reader}
	good, err := ch.hello()
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func([]byte) []byte) []byte { return f(slices.Clone(good)) }
	// A HELLO whose box opens but does not hold 64 zero bytes.
	nonzero := edit(func(b []byte) []byte {
		sig := make([]byte, 64)
		sig[63] = 1
		return box.Seal(b[:114], sig, shortNonce(helloPrefix, 1), keyPtr(&skp.Public), keyPtr(&ch.transient.Secret))
	})
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"empty", nil, "HELLO of 0 bytes"},
		{"short", good[:193], "HELLO of 193 bytes"},
		{"long", append(slices.Clone(good), 0), "HELLO of 195 bytes"},
		{"version 2.0", edit(func(b []byte) []byte { b[0] = 2; return b }), "CurveZMQ 2.0"},
		{"version 1.1", edit(func(b []byte) []byte { b[1] = 1; return b }), "CurveZMQ 1.1"},
		{"padding", edit(func(b []byte) []byte { b[40] = 1; return b }), "padding"},
		{"transient key", edit(func(b []byte) []byte { b[80] ^= 1; return b }), "does not open"},
		{"nonce", edit(func(b []byte) []byte { b[113] ^= 1; return b }), "does not open"},
		{"box", edit(func(b []byte) []byte { b[150] ^= 1; return b }), "does not open"},
		{"signature", nonzero, "64 zero bytes"},
	}
	for _, tt := range tests {
		sh := &serverHandshake{keys: skp, rand: rand.Reader}
		welcome, err := sh.hello(tt.body)
		if err == nil || welcome != nil || !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: hello = %d bytes, %v; want an ErrProtocol containing %q", tt.name, len(welcome), err, tt.want)
		}
	}
	// Sealed for another server.
	sh := &serverHandshake{keys: mustKeyPair(t), rand: rand.Reader}
	if _, err := sh.hello(good); !errors.Is(err, ErrServerKey) {
		t.Errorf("HELLO for another server: %v, want ErrServerKey", err)
	}
}

func TestServerInitiateRejects(t *testing.T) {
	other := mustKeyPair(t)
	badMeta := []struct {
		name string
		meta []byte
		want string
	}{
		{"empty name", []byte("\x00\x00\x00\x00\x00"), "empty property name"},
		{"truncated name", []byte("\x0bSocket"), "truncated"},
		{"truncated size", []byte("\x0bSocket-Type\x00\x00"), "truncated"},
		{"value too long", []byte("\x0bSocket-Type\x00\x00\x00\x07DEALER"), "announces 7 bytes, 6 left"},
		{"huge value", []byte("\x0bSocket-Type\xff\xff\xff\xffDEALER"), "announces 4294967295 bytes"},
		{"bad name", []byte("\x04a b=\x00\x00\x00\x00"), "character outside"},
	}
	type test struct {
		name  string
		body  func(sh *serverHandshake, ch *clientHandshake) []byte
		want  string
		isErr error
	}
	tests := []test{
		{"truncated", func(_ *serverHandshake, ch *clientHandshake) []byte {
			return craft{}.initiate(ch)[:minInitiateSize-1]
		}, "want at least 248", ErrProtocol},
		{"cookie tampered", func(_ *serverHandshake, ch *clientHandshake) []byte {
			b := craft{}.initiate(ch)
			b[40] ^= 1
			return b
		}, "cookie does not open", ErrProtocol},
		{"cookie of another connection", func(_ *serverHandshake, _ *clientHandshake) []byte {
			_, ch2 := started(t)
			return craft{}.initiate(ch2)
		}, "cookie does not open", ErrProtocol},
		{"nonce not after HELLO", func(_ *serverHandshake, ch *clientHandshake) []byte {
			return craft{nonce: helloNonce}.initiate(ch)
		}, "does not follow HELLO", ErrProtocol},
		{"box tampered", func(_ *serverHandshake, ch *clientHandshake) []byte {
			b := craft{}.initiate(ch)
			b[len(b)-1] ^= 1
			return b
		}, "INITIATE box does not open", ErrProtocol},
		{"vouch by another key", func(_ *serverHandshake, ch *clientHandshake) []byte {
			return craft{signer: &other}.initiate(ch)
		}, "vouch does not open", ErrProtocol},
		{"claims another key", func(_ *serverHandshake, ch *clientHandshake) []byte {
			return craft{claimed: &other.Public}.initiate(ch)
		}, "vouch does not open", ErrProtocol},
		{"vouch for another transient key", func(_ *serverHandshake, ch *clientHandshake) []byte {
			return craft{vouchC: &other.Public}.initiate(ch)
		}, "vouch is not for this connection", ErrProtocol},
		{"vouch for another server", func(_ *serverHandshake, ch *clientHandshake) []byte {
			return craft{vouchS: &other.Public}.initiate(ch)
		}, "vouch is not for this connection", ErrProtocol},
	}
	for _, m := range badMeta {
		tests = append(tests, test{"metadata " + m.name, func(_ *serverHandshake, ch *clientHandshake) []byte {
			return craft{meta: m.meta}.initiate(ch)
		}, m.want, ErrProtocol})
	}
	for _, tt := range tests {
		sh, ch := started(t)
		_, meta, _, err := sh.initiate(tt.body(sh, ch))
		if err == nil || meta != nil || !errors.Is(err, tt.isErr) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: initiate = %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
	// The same crafting without a defect is accepted, with its metadata.
	sh, ch := started(t)
	client, meta, nonce, err := sh.initiate(craft{nonce: 7, meta: clientMeta}.initiate(ch))
	if err != nil || client != ch.keys.Public || string(meta) != string(clientMeta) || nonce != 7 {
		t.Fatalf("good INITIATE: %s, %q, %d, %v", client, meta, nonce, err)
	}
}

func TestClientRejects(t *testing.T) {
	sh, ch := started(t)
	if err := ch.welcome(make([]byte, welcomeSize-1)); !errors.Is(err, ErrProtocol) {
		t.Errorf("short WELCOME: %v", err)
	}
	// An impostor seals WELCOME with its own key to the client's C'.
	impostor := mustKeyPair(t)
	fake := box.Seal(make([]byte, 16), make([]byte, 128), longNonce(welcomePrefix, make([]byte, 16)), keyPtr(&ch.transient.Public), keyPtr(&impostor.Secret))
	ch2 := *ch
	if err := ch2.welcome(fake); !errors.Is(err, ErrServerKey) || !strings.Contains(err.Error(), ch.server.String()) {
		t.Errorf("impostor WELCOME: %v, want ErrServerKey naming the configured key", err)
	}

	if _, _, _, err := sh.initiate(craft{}.initiate(ch)); err != nil {
		t.Fatal(err)
	}
	ready := sh.ready(clientMeta)
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"short", ready[:minReadySize-1], "READY of 23 bytes"},
		{"tampered", append(slices.Clone(ready[:len(ready)-1]), ready[len(ready)-1]^1), "does not open"},
		{"nonce", append([]byte{1}, ready[1:]...), "does not open"},
		{"metadata", sh.ready([]byte("\x00")), "READY metadata"},
	}
	for _, tt := range tests {
		if _, _, err := ch.ready(tt.body); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s READY: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	meta, nonce, err := ch.ready(ready)
	if err != nil || string(meta) != string(clientMeta) || nonce != 1 {
		t.Fatalf("good READY: %q, %d, %v", meta, nonce, err)
	}
}

func TestCheckMetadata(t *testing.T) {
	good := [][]byte{
		nil,
		clientMeta,
		[]byte("\x01a\x00\x00\x00\x00"),
		[]byte("\x07X-a_b.+\x00\x00\x00\x03xyz"),
		append([]byte("\xff"+strings.Repeat("n", 255)+"\x00\x00\x00\x01"), 0),
	}
	for _, m := range good {
		if err := checkMetadata(m); err != nil {
			t.Errorf("checkMetadata(%q): %v", m, err)
		}
	}
	bad := [][]byte{
		{0},
		{1},
		[]byte("\x01a\x00\x00\x00"),
		[]byte("\x01a\x00\x00\x00\x01"),
		[]byte("\x01a\x00\x00\x00\x00\x01"),
		[]byte("\x01\x00\x00\x00\x00\x00"),
		[]byte("\x02a:\x00\x00\x00\x00"),
	}
	for _, m := range bad {
		if err := checkMetadata(m); err == nil {
			t.Errorf("checkMetadata(%q) accepted", m)
		}
	}
}

func TestErrorBody(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct{ in, out string }{
		{"wrong key", "wrong key"},
		{"bad\nbyte\xff", "bad?byte?"},
		{long, long[:255]},
		{"", ""},
	}
	for _, tt := range tests {
		b := errorBody(tt.in)
		got, err := parseErrorBody(b)
		if err != nil || got != tt.out || int(b[0]) != len(tt.out) {
			t.Errorf("errorBody(%q) round trip = %q, %v; want %q", tt.in, got, err, tt.out)
		}
	}
	for _, b := range [][]byte{nil, {5, 'a'}, {255}} {
		if _, err := parseErrorBody(b); !errors.Is(err, ErrProtocol) {
			t.Errorf("parseErrorBody(%q): %v", b, err)
		}
	}
}

// lowOrderKeys are the public keys libsodium's crypto_scalarmult refuses
// (its has_small_order blacklist), each also with bit 255 set, which X25519
// ignores: with any of them the X25519 result is all zero whatever the
// secret, so the box key is zeroKey and needs no secret at all.
func lowOrderKeys(t *testing.T) map[string]Key {
	t.Helper()
	base := []struct{ name, hex string }{
		{"0", "0000000000000000000000000000000000000000000000000000000000000000"},
		{"1", "0100000000000000000000000000000000000000000000000000000000000000"},
		{"order 8 a", "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"},
		{"order 8 b", "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"},
		{"p-1", "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"},
		{"p", "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"},
		{"p+1", "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"},
	}
	keys := make(map[string]Key)
	for _, b := range base {
		raw, err := hex.DecodeString(b.hex)
		if err != nil || len(raw) != 32 {
			t.Fatalf("%s: bad test key", b.name)
		}
		var k Key
		copy(k[:], raw)
		keys[b.name] = k
		k[31] |= 0x80
		keys[b.name+" (bit 255 set)"] = k
	}
	return keys
}

// zeroKey is the box key of a low-order public key: HSalsa20 of an all-zero
// X25519 result, whatever the secret, which box.Precompute computes without
// complaint.
func zeroKey() *[32]byte {
	var k, zero, secret [32]byte
	secret[0] = 42
	box.Precompute(&k, &zero, &secret)
	return &k
}

// TestLowOrderKeysRefused forges, for every low-order key, each step a
// holder of no secret could take with it: a HELLO from C' = key, an
// INITIATE for C = key with a vouch sealed under zeroKey, a WELCOME with
// S' = key, and a client configured with S = key. Each is refused as a
// protocol violation naming the low-order key.
func TestLowOrderKeysRefused(t *testing.T) {
	skp := mustKeyPair(t)
	steps := []struct {
		name string
		run  func(k Key) error
	}{
		{"HELLO from C'", func(k Key) error {
			out := make([]byte, 74, helloSize)
			out[0] = 1
			out = append(out, k[:]...)
			out = binary.BigEndian.AppendUint64(out, helloNonce)
			out = box.SealAfterPrecomputation(out, make([]byte, 64), shortNonce(helloPrefix, helloNonce), zeroKey())
			sh := &serverHandshake{keys: skp, rand: rand.Reader}
			welcome, err := sh.hello(out)
			if welcome != nil {
				return errors.New("WELCOME sent")
			}
			return err
		}},
		{"INITIATE for C", func(k Key) error {
			sh, ch := started(t)
			_, _, _, err := sh.initiate(craft{claimed: &k, vouchKey: zeroKey()}.initiate(ch))
			return err
		}},
		{"WELCOME with S'", func(k Key) error {
			ch := &clientHandshake{keys: mustKeyPair(t), server: skp.Public, rand: rand.Reader}
			if _, err := ch.hello(); err != nil {
				t.Fatal(err)
			}
			plain := append(slices.Clone(k[:]), make([]byte, cookieSize)...)
			welcome := box.Seal(make([]byte, 16), plain, longNonce(welcomePrefix, make([]byte, 16)), keyPtr(&ch.transient.Public), keyPtr(&skp.Secret))
			return ch.welcome(welcome)
		}},
		{"configured server key S", func(k Key) error {
			ch := &clientHandshake{keys: mustKeyPair(t), server: k, rand: rand.Reader}
			_, err := ch.hello()
			return err
		}},
	}
	for name, k := range lowOrderKeys(t) {
		for _, st := range steps {
			err := st.run(k)
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "low-order point") || !strings.Contains(err.Error(), k.String()) {
				t.Errorf("%s, key %s: %v; want an ErrProtocol naming the low-order key", st.name, name, err)
			}
		}
	}
}
