package saltproto

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
)

func newCrypticle(t *testing.T) *Crypticle {
	t.Helper()
	k, err := GenerateKeyString()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCrypticle(k)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCrypticleKeyString(t *testing.T) {
	k, err := GenerateKeyString()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(k)
	if err != nil || len(raw) != 56 || len(k) != 76 {
		t.Fatalf("key string %q: %d bytes, %v", k, len(raw), err)
	}
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(make([]byte, 55))} {
		if _, err := NewCrypticle(bad); err == nil {
			t.Errorf("NewCrypticle(%q): no error", bad)
		}
	}
}

func TestCrypticleEncrypt(t *testing.T) {
	c := newCrypticle(t)
	for _, n := range []int{0, 1, 15, 16, 17, 32, 1000} {
		data := bytes.Repeat([]byte{'x'}, n)
		ct, err := c.Encrypt(data)
		if err != nil {
			t.Fatal(err)
		}
		// IV, whole blocks with at least one byte of padding, HMAC.
		if want := 16 + (n/16+1)*16 + 32; len(ct) != want {
			t.Errorf("%d bytes encrypt to %d, want %d", n, len(ct), want)
		}
		pt, err := c.Decrypt(ct)
		if err != nil || !bytes.Equal(pt, data) {
			t.Errorf("%d bytes: decrypt %q, %v", n, pt, err)
		}
		for _, i := range []int{0, 20, len(ct) - 1} {
			bad := bytes.Clone(ct)
			bad[i] ^= 1
			if _, err := c.Decrypt(bad); !errors.Is(err, ErrAuthentication) {
				t.Errorf("%d bytes, byte %d flipped: %v, want ErrAuthentication", n, i, err)
			}
		}
	}
	if _, err := newCrypticle(t).Decrypt(mustEncrypt(t, c, []byte("x"))); !errors.Is(err, ErrAuthentication) {
		t.Errorf("another key: %v, want ErrAuthentication", err)
	}
	if _, err := c.Decrypt([]byte("short")); !errors.Is(err, ErrAuthentication) {
		t.Errorf("short input: %v", err)
	}
}

func mustEncrypt(t *testing.T, c *Crypticle, b []byte) []byte {
	t.Helper()
	ct, err := c.Encrypt(b)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

func TestCrypticleDumpsLoads(t *testing.T) {
	c := newCrypticle(t)
	nonce := "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name      string
		dumpNonce string
		loadNonce string
		err       error
	}{
		{"no nonce", "", "", nil},
		{"nonce", nonce, nonce, nil},
		{"other nonce", nonce, "fedcba9876543210fedcba9876543210", ErrNonce},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, err := c.Dumps(map[string]any{"fun": "test.ping", "arg": []any{}}, tc.dumpNonce)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Loads(ct, tc.loadNonce)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Loads: %v, want %v", err, tc.err)
			}
			if err == nil && !reflect.DeepEqual(got, map[string]any{"fun": "test.ping", "arg": []any{}}) {
				t.Errorf("Loads = %#v", got)
			}
		})
	}
	if _, err := c.Dumps(1, "short"); err == nil {
		t.Error("Dumps with a 5-character nonce: no error")
	}
	plain, err := c.Encrypt([]byte("not a payload"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Loads(plain, ""); !errors.Is(err, ErrNotPayload) {
		t.Errorf("no pickle mark: %v", err)
	}
}

// TestCrypticleSerial is the replay rule: a load with a serial is taken
// once, and only above the last one.
func TestCrypticleSerial(t *testing.T) {
	master, err := NewCrypticle(newCrypticle(t).KeyString())
	if err != nil {
		t.Fatal(err)
	}
	minion, err := NewCrypticle(master.KeyString())
	if err != nil {
		t.Fatal(err)
	}
	msg := func(serial int64) []byte {
		ct, err := master.Dumps(map[string]any{"jid": "1", "serial": serial}, "")
		if err != nil {
			t.Fatal(err)
		}
		return ct
	}
	one, two := msg(1), msg(2)
	for i, step := range []struct {
		ct  []byte
		err error
	}{{one, nil}, {one, ErrSerial}, {two, nil}, {one, ErrSerial}, {two, ErrSerial}} {
		v, err := minion.Loads(step.ct, "")
		if !errors.Is(err, step.err) {
			t.Fatalf("step %d: %v, want %v", i, err, step.err)
		}
		if err == nil {
			if _, ok := v.(map[string]any)["serial"]; ok {
				t.Errorf("step %d: serial left in the load", i)
			}
		}
	}
}

// TestCrypticlePython: Salt's Crypticle reads Go's Dumps and Go reads
// Salt's, with and without a nonce; a Salt key string is a key here; the
// serial rule drops the same replays on both sides.
func TestCrypticlePython(t *testing.T) {
	o := python(t)
	key := o.callString(t, "genkey", nil)
	c, err := NewCrypticle(key)
	if err != nil {
		t.Fatalf("Salt's key string: %v", err)
	}
	nonce := "00112233445566778899aabbccddeeff"
	value := Ordered{{"cmd", "_return"}, {"return", map[string]any{"ok": true, "b": []byte{0xff}}}, {"n", int64(3)}}
	const expr = "{'cmd': '_return', 'return': {'ok': True, 'b': b'\\xff'}, 'n': 3}"
	for _, n := range []string{"", nonce} {
		ct, err := c.Dumps(value, n)
		if err != nil {
			t.Fatal(err)
		}
		got := o.call(t, "crypt_loads", map[string]any{"key": key, "data": hex.EncodeToString(ct), "nonce": n})
		if want := canon(t, value.Map()); !reflect.DeepEqual(got, want) {
			t.Errorf("nonce %q: Salt reads %v, want %v", n, got, want)
		}
		pyCT := unhex(t, o.callString(t, "crypt_dumps", map[string]any{"key": key, "expr": expr, "nonce": n}))
		v, err := c.Loads(pyCT, n)
		if err != nil {
			t.Fatalf("nonce %q: Loads(Salt's): %v", n, err)
		}
		if !reflect.DeepEqual(v, value.Map()) {
			t.Errorf("nonce %q: Loads(Salt's) = %#v", n, v)
		}
	}
	// Serial: Salt's Crypticle (kept across calls) returns {} for a
	// replay, where Loads says ErrSerial.
	key2 := o.callString(t, "genkey", nil)
	m, err := NewCrypticle(key2)
	if err != nil {
		t.Fatal(err)
	}
	var msgs [][]byte
	for _, s := range []int64{5, 6} {
		ct, err := m.Dumps(Ordered{{"jid", "j"}, {"serial", s}}, "")
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, ct)
	}
	empty := canon(t, map[string]any{})
	taken := canon(t, map[string]any{"jid": "j"})
	for i, step := range []struct {
		msg  []byte
		want any
	}{{msgs[0], taken}, {msgs[0], empty}, {msgs[1], taken}, {msgs[0], empty}} {
		got := o.call(t, "crypt_loads", map[string]any{"key": key2, "data": hex.EncodeToString(step.msg), "keep": true})
		if !reflect.DeepEqual(got, step.want) {
			t.Errorf("serial step %d: Salt gives %v, want %v", i, got, step.want)
		}
	}
}
