package saltproto

import (
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"
)

var testJob = Ordered{
	{"fun", "test.ping"}, {"arg", []any{}}, {"tgt", "salt-minion-1"}, {"tgt_type", "glob"},
	{"jid", "20260101000000000001"}, {"ret", ""}, {"user", "root"},
}

func TestTopic(t *testing.T) {
	// hashlib.sha1(b"salt-minion-1").hexdigest()
	if got := Topic("salt-minion-1"); len(got) != 40 || got != Topic("salt-minion-1") || got == Topic("salt-minion-2") {
		t.Errorf("Topic = %s", got)
	}
	if got := Topic(""); got != "da39a3ee5e6b4b0d3255bfef95601890afd80709" {
		t.Errorf("Topic of nothing = %s", got)
	}
}

func TestSerial(t *testing.T) {
	var s Serial
	for want := int64(1); want <= 3; want++ {
		if n, ex := s.Next(); n != want || ex {
			t.Fatalf("Next = %d, %t; want %d", n, ex, want)
		}
	}
	s.n = math.MaxInt64
	if _, ex := s.Next(); !ex {
		t.Error("no exhaustion at MaxInt64")
	}
	s.Reset()
	if n, _ := s.Next(); n != 1 {
		t.Errorf("after Reset: %d", n)
	}
}

func TestPublishFrames(t *testing.T) {
	p := []byte("payload")
	for _, c := range []struct {
		name      string
		filtering bool
		topics    []string
		syndic    bool
		want      [][]string
	}{
		{"unfiltered", false, []string{"a"}, false, [][]string{{"payload"}}},
		{"broadcast", true, nil, false, [][]string{{"broadcast", "payload"}}},
		{"topics", true, []string{"a", "b"}, false, [][]string{{Topic("a"), "payload"}, {Topic("b"), "payload"}}},
		{"topics and syndic", true, []string{"a"}, true, [][]string{{Topic("a"), "payload"}, {"syndic", "payload"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got [][]string
			for _, msg := range PublishFrames(p, c.filtering, c.topics, c.syndic) {
				var frames []string
				for _, f := range msg {
					frames = append(frames, string(f))
				}
				got = append(got, frames)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestPublish(t *testing.T) {
	m := testMaster(t)
	master := newCrypticle(t)
	want := testJob.Map()
	pub := func(serial int64, key *rsa.PrivateKey) []byte {
		b, err := WrapPublish(master, testJob, serial, key)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	minionFor := func() *Crypticle {
		c, err := NewCrypticle(master.KeyString())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	mpub := &m.Keys.Key.PublicKey
	signed := pub(1, m.Keys.Key)
	for _, msg := range PublishFrames(signed, true, []string{"salt-minion-1", "other"}, false) {
		got, err := DecodePublish(msg, "salt-minion-1", minionFor(), mpub, true)
		if string(msg[0]) == Topic("other") {
			if !errors.Is(err, ErrNotForMe) {
				t.Errorf("another minion's publish: %v", err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("decoded %v, %v", got, err)
		}
	}
	minion := minionFor()
	if _, err := DecodePublish([][]byte{signed}, "salt-minion-1", minion, mpub, true); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodePublish([][]byte{signed}, "salt-minion-1", minion, mpub, true); !errors.Is(err, ErrSerial) {
		t.Errorf("replay: %v", err)
	}
	if _, err := DecodePublish([][]byte{pub(2, nil)}, "salt-minion-1", minionFor(), mpub, true); !errors.Is(err, ErrAuthentication) {
		t.Errorf("unsigned with sign_pub_messages: %v", err)
	}
	if _, err := DecodePublish([][]byte{pub(2, nil)}, "salt-minion-1", minionFor(), mpub, false); err != nil {
		t.Errorf("unsigned without sign_pub_messages: %v", err)
	}
	if _, err := DecodePublish([][]byte{pub(2, testKey(t, 2))}, "salt-minion-1", minionFor(), mpub, true); !errors.Is(err, ErrAuthentication) {
		t.Errorf("signed by another key: %v", err)
	}
	if _, err := WrapPublish(master, []any{1}, 1, nil); err == nil {
		t.Error("a list load: no error")
	}
	// The caller's load is not changed.
	mload := map[string]any{"fun": "x"}
	if _, err := WrapPublish(master, mload, 9, nil); err != nil || len(mload) != 1 {
		t.Errorf("load changed: %v, %v", mload, err)
	}
}

// TestPublishPython: Salt's minion code (PublishClient._decode_messages,
// AsyncPubChannel._verify_master_signature, Crypticle.loads with its
// serial) reads WrapPublish's payload in each framing, drops another
// minion's, refuses an unsigned one when sign_pub_messages is on, and
// ignores a replay.
func TestPublishPython(t *testing.T) {
	o := python(t)
	m := testMaster(t)
	masterPub := filepath.Join(tempDirWith(t, "minion_master.pub", m.Keys.Pub), "minion_master.pub")
	key := o.callString(t, "genkey", nil)
	c, err := NewCrypticle(key)
	if err != nil {
		t.Fatal(err)
	}
	want := canon(t, testJob.Map())
	empty := canon(t, map[string]any{})
	decode := func(msg [][]byte, sign bool) map[string]any {
		var frames []any
		for _, f := range msg {
			frames = append(frames, hex.EncodeToString(f))
		}
		return o.callMap(t, "pub_decode", map[string]any{"frames": frames, "id": "salt-minion-1", "key": key, "master_pub": masterPub, "sign": sign})
	}
	var serial Serial
	next := func(signKey *rsa.PrivateKey) []byte {
		n, _ := serial.Next()
		b, err := WrapPublish(c, testJob, n, signKey)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, mode := range []struct {
		name      string
		filtering bool
		topics    []string
	}{{"unfiltered", false, nil}, {"broadcast", true, nil}, {"topic", true, []string{"salt-minion-1"}}} {
		t.Run(mode.name, func(t *testing.T) {
			msg := PublishFrames(next(m.Keys.Key), mode.filtering, mode.topics, false)[0]
			r := decode(msg, true)
			if r["for_me"] != true || !reflect.DeepEqual(r["load"], want) {
				t.Fatalf("Salt's minion: %v", r)
			}
			if r := decode(msg, true); !reflect.DeepEqual(r["load"], empty) {
				t.Errorf("replay: Salt's minion took %v", r)
			}
		})
	}
	if r := decode(PublishFrames(next(m.Keys.Key), true, []string{"other"}, false)[0], true); r["for_me"] != false {
		t.Errorf("another minion's topic: %v", r)
	}
	if r := decode([][]byte{next(nil)}, true); r["raised"] == nil {
		t.Errorf("unsigned with sign_pub_messages: %v", r)
	}
	if r := decode([][]byte{next(testKey(t, 2))}, true); r["raised"] == nil {
		t.Errorf("signed by another key: %v", r)
	}
	if r := decode([][]byte{next(nil)}, false); !reflect.DeepEqual(r["load"], want) {
		t.Errorf("unsigned without sign_pub_messages: %v", r)
	}
}
