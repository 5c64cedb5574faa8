package saltproto

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func testMaster(t *testing.T) *Master {
	t.Helper()
	k := testKey(t, 0)
	return &Master{Keys: &MasterKeys{Key: k, Pub: PublicKeyPEM(&k.PublicKey)}, PublishPort: 4505}
}

// wire is what the transport does to a reply: Dumps, and Loads on the
// other side.
func wire(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := Dumps(v)
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadsMap(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func decideAs(s KeyState) KeyDecider {
	return func(*AuthLoad) (KeyState, error) { return s, nil }
}

func TestAuth(t *testing.T) {
	m := testMaster(t)
	minion := testKey(t, 1)
	minionPub := PublicKeyPEM(&minion.PublicKey)
	aes, err := GenerateKeyString()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		state KeyState
		err   error
		event map[string]any
	}{
		{KeyAccepted, nil, map[string]any{"result": true, "act": "accept"}},
		{KeyPending, ErrPending, map[string]any{"result": true, "act": "pend"}},
		{KeyRejected, ErrRejected, map[string]any{"result": false}},
		{KeyAutoRejected, ErrRejected, map[string]any{"result": false, "act": "reject"}},
		{KeyDenied, ErrRejected, map[string]any{"result": false, "act": "denied"}},
		{KeyFull, ErrFull, map[string]any{"result": false, "act": "full"}},
	} {
		t.Run(tc.state.String(), func(t *testing.T) {
			// First contact: no master key yet, no token; then with both.
			for _, known := range []string{"", m.Keys.Pub} {
				var masterPub = &m.Keys.Key.PublicKey
				if known == "" {
					masterPub = nil
				}
				s, err := NewSignIn("web1", minionPub, masterPub)
				if err != nil {
					t.Fatal(err)
				}
				res, err := m.Auth(2, wire(t, s.Load), aes, decideAs(tc.state))
				if err != nil {
					t.Fatal(err)
				}
				if res.State != tc.state {
					t.Errorf("state %v", res.State)
				}
				want := map[string]any{"id": "web1", "pub": minionPub}
				for k, v := range tc.event {
					want[k] = v
				}
				if !reflect.DeepEqual(res.Event, want) {
					t.Errorf("event %v, want %v", res.Event, want)
				}
				creds, err := s.HandleReply(wire(t, res.Reply), minion, known, "")
				if !errors.Is(err, tc.err) {
					t.Fatalf("known master %t: HandleReply: %v, want %v", known != "", err, tc.err)
				}
				if err == nil && (creds.AES != aes || creds.PublishPort != 4505 || creds.MasterPub != m.Keys.Pub) {
					t.Errorf("creds %+v", creds)
				}
			}
		})
	}
}

func TestAuthRefusals(t *testing.T) {
	m := testMaster(t)
	minion := testKey(t, 1)
	aes, _ := GenerateKeyString()
	never := func(*AuthLoad) (KeyState, error) {
		t.Error("the key store was asked about an invalid id")
		return KeyAccepted, nil
	}
	for _, id := range []string{"", ".", "..", "a/b", "..\\x", "a\x00b"} {
		s, err := NewSignIn(id, PublicKeyPEM(&minion.PublicKey), nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Auth(2, wire(t, s.Load), aes, never)
		if err != nil {
			t.Fatal(err)
		}
		if res.Event != nil {
			t.Errorf("id %q: event %v", id, res.Event)
		}
		if _, err := s.HandleReply(wire(t, res.Reply), minion, "", ""); !errors.Is(err, ErrRejected) {
			t.Errorf("id %q: %v", id, err)
		}
	}

	// A corrupt key, accepted by a careless store: ret False, no event.
	s, _ := NewSignIn("m", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----", nil)
	res, err := m.Auth(2, wire(t, s.Load), aes, decideAs(KeyAccepted))
	if err != nil || res.Event != nil {
		t.Fatalf("corrupt key: %v, event %v", err, res.Event)
	}

	// Version 2 needs a nonce (Salt fails on the KeyError).
	s, _ = NewSignIn("m", PublicKeyPEM(&minion.PublicKey), nil)
	load := wire(t, s.Load)
	delete(load, "nonce")
	if _, err := m.Auth(2, load, aes, decideAs(KeyAccepted)); err == nil {
		t.Error("no nonce: no error")
	}
	if _, err := m.Auth(2, map[string]any{"cmd": "_pillar", "id": "m"}, aes, decideAs(KeyAccepted)); err == nil {
		t.Error("not an _auth: no error")
	}

	// A token for another master's key: left out, so the minion refuses.
	s, _ = NewSignIn("m", PublicKeyPEM(&minion.PublicKey), &testKey(t, 2).PublicKey)
	res, err = m.Auth(2, wire(t, s.Load), aes, decideAs(KeyAccepted))
	if err != nil {
		t.Fatal(err)
	}
	inner, _ := LoadsMap(res.Reply.Map()["load"].([]byte))
	if _, ok := inner["token"]; ok {
		t.Error("a token that does not decrypt was answered")
	}
	if _, err := s.HandleReply(wire(t, res.Reply), minion, m.Keys.Pub, ""); err == nil {
		t.Error("the minion took a reply without its token")
	}

	// A reply signed by another key does not pass.
	impostor := &Master{Keys: &MasterKeys{Key: testKey(t, 2), Pub: m.Keys.Pub}, PublishPort: 4505}
	s, _ = NewSignIn("m", PublicKeyPEM(&minion.PublicKey), &m.Keys.Key.PublicKey)
	res, err = impostor.Auth(2, wire(t, s.Load), aes, decideAs(KeyPending))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.HandleReply(wire(t, res.Reply), minion, m.Keys.Pub, ""); err == nil || errors.Is(err, ErrPending) {
		t.Errorf("impostor's reply: %v", err)
	}

	// master_finger.
	s, _ = NewSignIn("m", PublicKeyPEM(&minion.PublicKey), nil)
	res, _ = m.Auth(2, wire(t, s.Load), aes, decideAs(KeyAccepted))
	finger, _ := Fingerprint([]byte(m.Keys.Pub), "sha256")
	if _, err := s.HandleReply(wire(t, res.Reply), minion, "", finger); err != nil {
		t.Errorf("right master_finger: %v", err)
	}
	if _, err := s.HandleReply(wire(t, res.Reply), minion, "", "00:11"); err == nil {
		t.Error("wrong master_finger: no error")
	}
}

func TestAuthVersion1(t *testing.T) {
	m := testMaster(t)
	minion := testKey(t, 1)
	aes, _ := GenerateKeyString()
	s, _ := NewSignIn("m", PublicKeyPEM(&minion.PublicKey), &m.Keys.Key.PublicKey)
	res, err := m.Auth(0, wire(t, s.Load), aes, decideAs(KeyPending))
	if err != nil {
		t.Fatal(err)
	}
	if got := wire(t, res.Reply); !reflect.DeepEqual(got, map[string]any{"enc": "clear", "load": map[string]any{"ret": true}}) {
		t.Errorf("pending, version 1: %v", got)
	}
	res, err = m.Auth(1, wire(t, s.Load), aes, decideAs(KeyAccepted))
	if err != nil {
		t.Fatal(err)
	}
	got := wire(t, res.Reply)
	if got["enc"] != "pub" || got["pub_key"] != m.Keys.Pub || got["publish_port"] != int64(4505) {
		t.Errorf("accepted, version 1: %v", got)
	}
	for _, k := range []string{"token", "aes", "sig"} {
		if _, ok := got[k]; !ok {
			t.Errorf("accepted, version 1: no %s", k)
		}
	}
	if _, ok := got["nonce"]; ok {
		t.Error("accepted, version 1: a nonce")
	}
}

func TestAuthSessionKeySignatureCached(t *testing.T) {
	m := testMaster(t)
	a1, _ := GenerateKeyString()
	a2, _ := GenerateKeyString()
	s1, err := m.aesSig(a1)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := m.aesSig(a1); &again[0] != &s1[0] {
		t.Error("the signature of the same session key was computed again")
	}
	if s2, _ := m.aesSig(a2); reflect.DeepEqual(s1, s2) {
		t.Error("a new session key kept the old signature")
	}
}

// TestAuthPython: Salt's minion code (AsyncAuth.minion_sign_in_payload and
// handle_signin_response, with its pki directory) signs in to Master.Auth:
// on first contact it takes the master's key, checks master_finger, the
// signatures and the nonce and decrypts the session key; on the next
// sign-in it sends a token and checks it comes back; pending, rejected,
// denied and full answers give Salt's "retry" and "full"; a wrong
// master_finger makes it exit 42, as the real minion does; with
// master_sign_pubkey the minion checks pub_sig with master_sign.pub.
func TestAuthPython(t *testing.T) {
	o := python(t)
	m := testMaster(t)
	aes, _ := GenerateKeyString()
	finger, _ := Fingerprint([]byte(m.Keys.Pub), "sha256")
	pki := tempDir(t)
	handle := 0
	signIn := func(t *testing.T, pki string, state KeyState, opts map[string]any, master *Master) map[string]any {
		t.Helper()
		handle++
		p := o.callMap(t, "signin_payload", map[string]any{"pki": pki, "id": "salt-minion-1", "handle": handle, "opts": opts})
		load, err := LoadsMap(unhex(t, p["load"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := master.Auth(2, load, aes, decideAs(state))
		if err != nil {
			t.Fatal(err)
		}
		if want := load["pub"]; res.Event["pub"] != want {
			t.Errorf("event pub %v", res.Event["pub"])
		}
		reply, err := Dumps(res.Reply)
		if err != nil {
			t.Fatal(err)
		}
		return o.callMap(t, "signin_response", map[string]any{"handle": handle, "reply": hex.EncodeToString(reply), "opts": opts})
	}
	withFinger := map[string]any{"master_finger": finger}

	t.Run("first contact", func(t *testing.T) {
		r := signIn(t, pki, KeyAccepted, withFinger, m)
		if r["ret"] != "creds" || r["aes"] != aes || r["publish_port"] != float64(4505) || r["master_pub"] != m.Keys.Pub {
			t.Fatalf("Salt's minion: %v", r)
		}
	})
	t.Run("with token", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(pki, "minion_master.pub")); err != nil {
			t.Fatalf("the minion kept no master key: %v", err)
		}
		r := signIn(t, pki, KeyAccepted, withFinger, m)
		if r["ret"] != "creds" || r["aes"] != aes {
			t.Fatalf("Salt's minion: %v", r)
		}
	})
	for _, c := range []struct {
		state KeyState
		want  string
	}{{KeyPending, "retry"}, {KeyRejected, "retry"}, {KeyAutoRejected, "retry"}, {KeyDenied, "retry"}, {KeyFull, "full"}} {
		t.Run(c.state.String(), func(t *testing.T) {
			r := signIn(t, pki, c.state, map[string]any{"rejected_retry": true}, m)
			if !reflect.DeepEqual(r["ret"], []any{"str", c.want}) {
				t.Errorf("Salt's minion: %v, want %q", r, c.want)
			}
		})
	}
	t.Run("wrong master_finger", func(t *testing.T) {
		r := signIn(t, tempDir(t), KeyAccepted, map[string]any{"master_finger": "00:11:22"}, m)
		if r["exit"] != float64(42) {
			t.Errorf("Salt's minion: %v, want exit 42", r)
		}
	})
	t.Run("another master", func(t *testing.T) {
		other := &Master{Keys: &MasterKeys{Key: testKey(t, 2), Pub: PublicKeyPEM(&testKey(t, 2).PublicKey)}, PublishPort: 4505}
		r := signIn(t, pki, KeyAccepted, nil, other)
		if _, ok := r["raised"]; !ok {
			t.Errorf("Salt's minion took another master's reply: %v", r)
		}
	})
	t.Run("master_sign_pubkey", func(t *testing.T) {
		signKey := testKey(t, 2)
		sig, err := SignPubkey(signKey, m.Keys.Pub)
		if err != nil {
			t.Fatal(err)
		}
		signed := &Master{Keys: m.Keys, PublishPort: 4505, PubSig: sig}
		dir := tempDir(t)
		if err := os.WriteFile(filepath.Join(dir, "master_sign.pub"), []byte(PublicKeyPEM(&signKey.PublicKey)), 0o644); err != nil {
			t.Fatal(err)
		}
		r := signIn(t, dir, KeyAccepted, map[string]any{"verify_master_pubkey_sign": true}, signed)
		if r["ret"] != "creds" || r["aes"] != aes {
			t.Fatalf("Salt's minion: %v", r)
		}
		// Signed with a key the minion does not trust: refused.
		bad, _ := SignPubkey(testKey(t, 1), m.Keys.Pub)
		r = signIn(t, tempDirWith(t, "master_sign.pub", PublicKeyPEM(&signKey.PublicKey)), KeyAccepted,
			map[string]any{"verify_master_pubkey_sign": true}, &Master{Keys: m.Keys, PublishPort: 4505, PubSig: bad})
		if r["ret"] == "creds" {
			t.Errorf("Salt's minion took a pub_sig of an untrusted key: %v", r)
		}
	})
}

func tempDirWith(t *testing.T, name, content string) string {
	t.Helper()
	d := tempDir(t)
	if err := os.WriteFile(filepath.Join(d, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}
