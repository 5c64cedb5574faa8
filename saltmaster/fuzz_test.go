package saltmaster

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/brinehq/brine/saltproto"
)

// FuzzAESLoad runs every AESFuncs command on loads of any shape, as a
// minion holding the session key may send them: nothing a minion sends
// may crash the master. The load is msgpack; its cmd is taken from the
// table in turn, and its id and tok are made those of an accepted minion
// proven at the sender's address, so that each command's own reading of
// its fields is what is fuzzed.
func FuzzAESLoad(f *testing.F) {
	for _, seed := range []saltproto.Ordered{
		kv("path", "salt://top.sls", "saltenv", "base", "loc", int64(0), "gzip", int64(5)),
		kv("return", map[string]any{"a": []any{int64(1), nil}}, "jid", "20261128000000000001", "fun_args", []any{"x"}, "retcode", int64(2)),
		kv("events", []any{map[string]any{"tag": "salt/beacon/web1/x/", "data": map[string]any{"k": "v"}}}, "pretag", "p"),
		kv("grains", map[string]any{"os": "Debian"}, "pillar_override", map[string]any{"a": []byte{0xff}}),
		kv("data", map[string]any{"network.ip_addrs": []any{"10.0.0.1"}}, "tgt", []any{"web1"}, "fun", "x", "tgt_type", "list"),
		kv("path", []any{"a", "..", "b"}, "size", int64(-1), "data", []byte("x"), "prefix", int64(3)),
	} {
		b, err := saltproto.Dumps(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		load, err := saltproto.LoadsMap(b)
		if err != nil {
			return
		}
		r := fuzzRig(t)
		r.fm.mu.Lock()
		r.fm.calls = nil // what the fake master records is not what is fuzzed
		r.fm.mu.Unlock()
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				buf := make([]byte, 1<<20)
				panic("stuck:\n" + string(buf[:runtime.Stack(buf, true)]))
			}
		}()
		for cmd := range aesFuncs {
			l := make(map[string]any, len(load)+3)
			for k, v := range load {
				l[k] = v
			}
			l["cmd"], l["id"], l["tok"] = cmd, "web1", r.tok
			r.tr.aes(context.Background(), "127.0.0.1:4000", &saltproto.Request{Enc: "aes", Load: l, Version: 2, Nonce: "0123456789abcdef0123456789abcdef"})
		}
	})
}

type fuzzed struct {
	tr  *Transport
	fm  *fakeMaster
	tok []byte
}

var fuzzState *fuzzed

// fuzzRig is one transport for the whole fuzz run, with web1 signed in
// and proven at 127.0.0.1.
func fuzzRig(t *testing.T) *fuzzed {
	if fuzzState != nil {
		return fuzzState
	}
	r := newRig(t, "", "web1")
	m := r.minion("web1", 1)
	if err := m.signIn(); err != nil {
		t.Fatal(err)
	}
	m.send(kv("cmd", "_minion_event", "id", "web1", "tok", m.tok, "tag", "salt/minion/web1/start", "data", "x"))
	fuzzState = &fuzzed{tr: r.tr, fm: r.fm, tok: m.tok}
	return fuzzState
}
