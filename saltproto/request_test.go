package saltproto

import (
	"encoding/hex"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const testNonce = "6a1b2c3d4e5f60718293a4b5c6d7e8f9"

func aesRequest(t *testing.T, c *Crypticle, load Ordered, version any) []byte {
	t.Helper()
	enc, err := c.Dumps(load, "")
	if err != nil {
		t.Fatal(err)
	}
	env := Ordered{{"enc", "aes"}, {"load", enc}}
	if version != nil {
		env = append(env, KV{"version", version})
	}
	b, err := Dumps(env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeRequest(t *testing.T) {
	c := newCrypticle(t)
	load := Ordered{{"cmd", "_minion_event"}, {"id", "m1"}, {"tag", "x"}, {"nonce", testNonce}}
	r, err := DecodeRequest(aesRequest(t, c, load, 2), c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Enc != "aes" || r.Version != 2 || r.Nonce != testNonce || r.ID() != "m1" || r.Cmd() != "_minion_event" || r.IsAuth() {
		t.Errorf("request %+v", r)
	}
	if _, ok := r.Load["nonce"]; ok {
		t.Error("nonce left in the load")
	}
	frame, err := r.Reply(c, map[string]any{"ok": true})
	if err != nil {
		t.Fatal(err)
	}
	v, err := Loads(frame)
	if err != nil {
		t.Fatal(err)
	}
	ct, _ := Bytes(v)
	got, err := c.Loads(ct, testNonce)
	if err != nil || !reflect.DeepEqual(got, map[string]any{"ok": true}) {
		t.Errorf("reply: %v, %v", got, err)
	}

	// Version 1 keeps the nonce where it is.
	r, err = DecodeRequest(aesRequest(t, c, load, nil), c)
	if err != nil || r.Nonce != "" || r.Load["nonce"] != testNonce {
		t.Errorf("version 1: %+v, %v", r, err)
	}
	// A clear _auth keeps its nonce: Auth reads it.
	auth, _ := Dumps(Ordered{{"enc", "clear"}, {"load", Ordered{{"cmd", "_auth"}, {"id", "m"}, {"nonce", testNonce}}}, {"version", 2}})
	if r, err := DecodeRequest(auth, c); err != nil || !r.IsAuth() || r.Load["nonce"] != testNonce {
		t.Errorf("_auth: %+v, %v", r, err)
	}

	mustDumps := func(v any) []byte {
		b, err := Dumps(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, bad := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"not msgpack", []byte{0xc1}, "deserialize"},
		{"not a mapping", mustDumps([]any{1}), "mapping"},
		{"no enc", mustDumps(Ordered{{"load", Ordered{}}}), "bad load"},
		{"no load", mustDumps(Ordered{{"enc", "clear"}}), "bad load"},
		{"load a list", mustDumps(Ordered{{"enc", "clear"}, {"load", []any{}}}), "must be a dict"},
		{"id with NUL", mustDumps(Ordered{{"enc", "clear"}, {"load", Ordered{{"id", "a\x00"}}}}), "null byte"},
		{"id not a string", mustDumps(Ordered{{"enc", "clear"}, {"load", Ordered{{"id", 5}}}}), "not a string"},
		{"another key", aesRequest(t, newCrypticle(t), load, 2), "authentication"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, err := DecodeRequest(bad.frame, c)
			if err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%v, want %q", err, bad.want)
			}
		})
	}
	if _, err := DecodeRequest(aesRequest(t, newCrypticle(t), load, 2), c); !errors.Is(err, ErrAuthentication) {
		t.Errorf("another key: %v is not ErrAuthentication", err)
	}
}

func TestEncryptPrivate(t *testing.T) {
	master, minion := testKey(t, 0), testKey(t, 1)
	pillar := map[string]any{"db": map[string]any{"password": "s3cret"}}
	reply, err := EncryptPrivate(pillar, "pillar", &minion.PublicKey, testNonce, true, master)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecryptPrivate(wire(t, reply), "pillar", minion, &master.PublicKey, testNonce)
	if err != nil || !reflect.DeepEqual(got, pillar) {
		t.Errorf("pillar %v, %v", got, err)
	}
	if _, err := DecryptPrivate(wire(t, reply), "pillar", testKey(t, 2), &master.PublicKey, testNonce); err == nil {
		t.Error("another minion read the pillar")
	}
	if _, err := DecryptPrivate(wire(t, reply), "pillar", minion, &master.PublicKey, strings.Repeat("0", 32)); !errors.Is(err, ErrAuthentication) {
		t.Errorf("another nonce: %v", err)
	}
	if _, err := DecryptPrivate(wire(t, reply), "pillar", minion, &testKey(t, 2).PublicKey, testNonce); !errors.Is(err, ErrAuthentication) {
		t.Errorf("another master: %v", err)
	}
	if r, err := EncryptPrivate(pillar, "pillar", &minion.PublicKey, "", true, master); err != nil || !reflect.DeepEqual(r, Ordered{{"error", "Nonce not included in request"}}) {
		t.Errorf("no nonce: %v, %v", r, err)
	}
	// Unsigned (version 1) and false.
	reply, err = EncryptPrivate(false, "pillar", &minion.PublicKey, "", false, master)
	if err != nil {
		t.Fatal(err)
	}
	w := wire(t, reply)
	key, _ := DecryptOAEP(minion, w["key"].([]byte))
	pc, _ := NewCrypticle(string(key))
	if v, err := pc.Loads(w["pillar"].([]byte), ""); err != nil || !reflect.DeepEqual(v, map[string]any{}) {
		t.Errorf("false as {}: %v, %v", v, err)
	}
}

// TestRequestPython: a 3006 minion's aes request (AsyncReqChannel's
// _package_load of crypticle.dumps with its nonce) decodes here; the
// reply passes _crypted_transfer's nonce check; an encrypted pillar passes
// crypted_transfer_decode_dictentry's key, signature and nonce checks.
func TestRequestPython(t *testing.T) {
	o := python(t)
	key := o.callString(t, "genkey", nil)
	c, err := NewCrypticle(key)
	if err != nil {
		t.Fatal(err)
	}
	frame := unhex(t, o.callString(t, "request", map[string]any{"key": key, "nonce": testNonce,
		"expr": "{'cmd': '_minion_event', 'id': 'salt-minion-1', 'tag': 'my/tag', 'data': {'a': 1}, 'tok': b'\\x00\\xff'}"}))
	r, err := DecodeRequest(frame, c)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"cmd": "_minion_event", "id": "salt-minion-1", "tag": "my/tag", "data": map[string]any{"a": int64(1)}, "tok": []byte{0, 0xff}}
	if r.Nonce != testNonce || r.Version != 2 || !reflect.DeepEqual(r.Load, want) {
		t.Errorf("request %+v", r)
	}
	ret := map[string]any{"ret": []any{"a", int64(2)}}
	reply, err := r.Reply(c, ret)
	if err != nil {
		t.Fatal(err)
	}
	got := o.callMap(t, "reply", map[string]any{"key": key, "nonce": testNonce, "frame": hex.EncodeToString(reply)})
	if !reflect.DeepEqual(got["data"], canon(t, ret)) {
		t.Errorf("Salt's minion reads the reply as %v", got)
	}
	other := &Request{Nonce: strings.Repeat("1", 32)}
	reply, _ = other.Reply(c, ret)
	if got := o.callMap(t, "reply", map[string]any{"key": key, "nonce": testNonce, "frame": hex.EncodeToString(reply)}); got["raised"] == nil {
		t.Errorf("Salt's minion took a reply to another request: %v", got)
	}

	pki := tempDir(t)
	o.call(t, "gen_keys", map[string]any{"dir": pki, "name": "minion", "keysize": 2048})
	minion, _, err := LoadOrCreateKeyPair(pki, "minion", 2048)
	if err != nil {
		t.Fatal(err)
	}
	m := testMaster(t)
	masterPub := filepath.Join(tempDirWith(t, "minion_master.pub", m.Keys.Pub), "minion_master.pub")
	pillar := map[string]any{"db": map[string]any{"password": "s3cret", "port": int64(5432)}, "list": []any{"a"}}
	for _, tc := range []struct {
		name   string
		master *Master
		nonce  string
		ok     bool
	}{{"signed", m, testNonce, true}, {"another nonce", m, strings.Repeat("2", 32), false}, {"another master", &Master{Keys: &MasterKeys{Key: testKey(t, 2)}}, testNonce, false}} {
		t.Run(tc.name, func(t *testing.T) {
			priv, err := EncryptPrivate(pillar, "pillar", &minion.PublicKey, tc.nonce, true, tc.master.Keys.Key)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Dumps(priv)
			if err != nil {
				t.Fatal(err)
			}
			got := o.callMap(t, "private", map[string]any{"pki": pki, "nonce": testNonce, "reply": hex.EncodeToString(b),
				"dictkey": "pillar", "key": key, "master_pub": masterPub})
			if tc.ok && !reflect.DeepEqual(got["data"], canon(t, pillar)) {
				t.Errorf("Salt's minion: %v", got)
			}
			if !tc.ok && got["raised"] == nil {
				t.Errorf("Salt's minion took it: %v", got)
			}
		})
	}
}
