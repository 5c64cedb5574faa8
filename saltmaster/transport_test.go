package saltmaster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus/gateway/saltzmq"
	"github.com/brinehq/brine/saltproto"
	"github.com/brinehq/brine/wire"
)

// fakeMaster is the master's agent methods as the transport sees them:
// hello accepts the ids in accepted, every other method is recorded with
// the id its Conn was accepted under.
type fakeMaster struct {
	mu       sync.Mutex
	accepted map[string]bool
	bound    map[wire.Conn]string
	calls    []call
	pillar   map[string]any
	files    map[string]string
}

type call struct {
	method, id string
	body       json.RawMessage
}

func (f *fakeMaster) methods() map[string]wire.Handler {
	ms := map[string]wire.Handler{
		wire.MethodHello: func(_ context.Context, c wire.Conn, body json.RawMessage) (any, error) {
			var h wire.Hello
			json.Unmarshal(body, &h)
			f.mu.Lock()
			defer f.mu.Unlock()
			if !f.accepted[h.ID] {
				return wire.HelloReply{State: wire.StatePending}, nil
			}
			f.bound[c] = h.ID
			return wire.HelloReply{State: wire.StateAccepted}, nil
		},
	}
	for _, m := range []string{wire.MethodEvent, wire.MethodReturn, wire.MethodMine, wire.MethodJobState, wire.MethodMineGet,
		wire.MethodPillar, wire.MethodFileList, wire.MethodFileStat, wire.MethodFileRead, wire.MethodFileEnvs, wire.MethodFilePush} {
		ms[m] = func(_ context.Context, c wire.Conn, body json.RawMessage) (any, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			id, ok := f.bound[c]
			if !ok {
				return nil, wire.ErrNotAccepted
			}
			f.calls = append(f.calls, call{m, id, body})
			switch m {
			case wire.MethodPillar:
				return f.pillar, nil
			case wire.MethodFileList:
				return []string{"top.sls", "web/init.sls"}, nil
			case wire.MethodFileStat:
				var r wire.FileRequest
				json.Unmarshal(body, &r)
				if _, ok := f.files[r.Path]; !ok {
					return nil, errors.New("not found")
				}
				return wire.FileStat{Size: int64(len(f.files[r.Path])), Hash: "ab12", Mode: 0o644}, nil
			case wire.MethodFileRead:
				var r wire.FileRequest
				json.Unmarshal(body, &r)
				data := f.files[r.Path]
				if r.Offset < 0 || r.Offset > int64(len(data)) {
					return nil, errors.New("bad offset")
				}
				return wire.FileChunk{Data: []byte(data[r.Offset:]), EOF: true}, nil
			case wire.MethodFileEnvs:
				return []string{"base", "dev"}, nil
			}
			return map[string]any{}, nil
		}
	}
	return ms
}

func (f *fakeMaster) gone(c wire.Conn) {
	f.mu.Lock()
	delete(f.bound, c)
	f.mu.Unlock()
}

// called returns the calls of method so far.
func (f *fakeMaster) called(method string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

var (
	keyOnce sync.Once
	keyPool []*rsa.PrivateKey
)

// testKey is one of a few 2048-bit keys made once per test binary (Salt's
// session key does not fit OAEP under smaller ones).
func testKey(t *testing.T, i int) *rsa.PrivateKey {
	keyOnce.Do(func() {
		for range 4 {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			keyPool = append(keyPool, k)
		}
	})
	return keyPool[i]
}

type rig struct {
	t      *testing.T
	tr     *Transport
	fm     *fakeMaster
	reqAt  string
	pubAt  string
	mkeys  *saltproto.MasterKeys
	cancel context.CancelFunc
}

// newRig runs a transport on loopback ports with a fake master behind it.
func newRig(t *testing.T, stateFile string, accepted ...string) *rig {
	t.Helper()
	mk := &saltproto.MasterKeys{Key: testKey(t, 0), Pub: saltproto.PublicKeyPEM(&testKey(t, 0).PublicKey)}
	fm := &fakeMaster{accepted: map[string]bool{}, bound: map[wire.Conn]string{}, pillar: map[string]any{"z": 1, "a": "x"},
		files: map[string]string{"web/init.sls": "hello"}}
	for _, id := range accepted {
		fm.accepted[id] = true
	}
	tr, err := New(Config{Keys: mk, SignPubMessages: true, RotateAESKey: true, StateFile: stateFile,
		MasterOpts: map[string]any{"state_top": "salt://top.sls"}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	tr.ServeAgents(fm.methods(), fm.gone)
	ctx, cancel := context.WithCancel(context.Background())
	lreq, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lpub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); tr.RequestServer().Serve(ctx, lreq) }()
	go func() { defer wg.Done(); tr.Publisher().Serve(ctx, lpub) }()
	go func() { defer wg.Done(); tr.Run(ctx) }()
	r := &rig{t: t, tr: tr, fm: fm, reqAt: lreq.Addr().String(), pubAt: lpub.Addr().String(), mkeys: mk, cancel: cancel}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return r
}

// testMinion is a salt-minion's protocol, as saltproto's minion side and
// saltzmq's clients speak it.
type testMinion struct {
	r     *rig
	id    string
	key   *rsa.PrivateKey
	req   *saltzmq.ReqClient
	crypt *saltproto.Crypticle
	tok   []byte
}

func (r *rig) minion(id string, key int) *testMinion {
	m := &testMinion{r: r, id: id, key: testKey(r.t, key), req: saltzmq.NewReqClient(r.reqAt)}
	r.t.Cleanup(func() { m.req.Close() })
	tok, err := saltproto.PrivateEncrypt(m.key, []byte("salt"))
	if err != nil {
		r.t.Fatal(err)
	}
	m.tok = tok
	return m
}

// signIn runs _auth and returns the outcome (nil: accepted).
func (m *testMinion) signIn() error {
	m.r.t.Helper()
	s, err := saltproto.NewSignIn(m.id, saltproto.PublicKeyPEM(&m.key.PublicKey), &m.r.mkeys.Key.PublicKey)
	if err != nil {
		m.r.t.Fatal(err)
	}
	frame, err := s.Frame()
	if err != nil {
		m.r.t.Fatal(err)
	}
	b, err := m.req.Request(ctxT(m.r.t), frame)
	if err != nil {
		m.r.t.Fatal(err)
	}
	reply, err := saltproto.LoadsMap(b)
	if err != nil {
		m.r.t.Fatal(err)
	}
	creds, err := s.HandleReply(reply, m.key, m.r.mkeys.Pub, "")
	if err != nil {
		return err
	}
	m.crypt, err = saltproto.NewCrypticle(creds.AES)
	if err != nil {
		m.r.t.Fatal(err)
	}
	return nil
}

// send sends an aes load and returns the master's answer.
func (m *testMinion) send(load saltproto.Ordered) (any, error) {
	m.r.t.Helper()
	frame, nonce, err := saltproto.AESRequest(m.crypt, load)
	if err != nil {
		m.r.t.Fatal(err)
	}
	b, err := m.req.Request(ctxT(m.r.t), frame)
	if err != nil {
		m.r.t.Fatal(err)
	}
	return saltproto.OpenReply(m.crypt, b, nonce)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func kv(pairs ...any) saltproto.Ordered {
	var o saltproto.Ordered
	for i := 0; i < len(pairs); i += 2 {
		o = append(o, saltproto.KV{Key: pairs[i].(string), Value: pairs[i+1]})
	}
	return o
}

func TestSignInAndIdentity(t *testing.T) {
	r := newRig(t, "", "web1", "web2")
	if err := r.minion("stranger", 3).signIn(); !errors.Is(err, saltproto.ErrPending) {
		t.Fatalf("a key not accepted: %v, want pending", err)
	}
	if r.tr.accepted("stranger") != nil {
		t.Fatal("a pending minion has a session")
	}
	w1, w2 := r.minion("web1", 1), r.minion("web2", 2)
	for _, m := range []*testMinion{w1, w2} {
		if err := m.signIn(); err != nil {
			t.Fatalf("%s: %v", m.id, err)
		}
	}
	if k := r.tr.accepted("web1").Key(); k != saltproto.PublicKeyPEM(&w1.key.PublicKey) {
		t.Fatalf("session key text %q", k)
	}

	// An event with the minion's tok is fired under its id, without the
	// tok; a load claiming web1 with web2's tok is refused.
	ev := kv("cmd", "_minion_event", "id", "web1", "tok", w1.tok, "tag", "myco/deploy/x", "data", map[string]any{"v": int64(2)}, "pretag", nil)
	if got, err := w1.send(ev); err != nil || got != true {
		t.Fatalf("event: %v %v", got, err)
	}
	forged := kv("cmd", "_minion_event", "id", "web1", "tok", w2.tok, "tag", "myco/evil", "data", map[string]any{})
	if got, err := w2.send(forged); err != nil || got != false {
		t.Fatalf("forged event answered %v %v, want False", got, err)
	}
	evs := r.fm.called(wire.MethodEvent)
	if len(evs) != 1 || evs[0].id != "web1" {
		t.Fatalf("events %+v", evs)
	}
	var e wire.Event
	json.Unmarshal(evs[0].body, &e)
	if e.Tag != "myco/deploy/x" || e.Load["tok"] != nil || e.Load["data"].(map[string]any)["v"] != float64(2) {
		t.Fatalf("event %+v", e)
	}

	// A return is taken from an address the id's tok proved (web1's
	// event above proved 127.0.0.1), and refused for an id that proved
	// none: web2 has sent no load with its tok yet, but web1's address is
	// web2's too here, so web2 is refused only until it proves itself.
	ret := kv("cmd", "_return", "id", "web1", "jid", "20261128000000000001", "fun", "test.ping", "fun_args", []any{},
		"return", true, "retcode", int64(0), "success", true)
	if _, err := w1.send(ret); err != nil {
		t.Fatal(err)
	}
	ret2 := slices.Clone(ret)
	ret2[1].Value = "web2"
	if got, _ := w2.send(ret2); got != false {
		t.Fatalf("a return from web2, not proven, answered %v", got)
	}
	rets := r.fm.called(wire.MethodReturn)
	if len(rets) != 1 || rets[0].id != "web1" {
		t.Fatalf("returns %+v", rets)
	}

	// A clear load other than _auth is never run.
	b, err := saltproto.Dumps(kv("enc", "clear", "load", kv("cmd", "publish", "fun", "cmd.run", "tgt", "*"), "version", int64(2)))
	if err != nil {
		t.Fatal(err)
	}
	reply, err := w1.req.Request(ctxT(t), b)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := saltproto.Loads(reply); len(v.(map[string]any)) != 0 {
		t.Fatalf("clear publish answered %v", v)
	}
}

func TestPillarOnlyItsMinionReads(t *testing.T) {
	r := newRig(t, "", "web1")
	m := r.minion("web1", 1)
	if err := m.signIn(); err != nil {
		t.Fatal(err)
	}
	frame, nonce, err := saltproto.AESRequest(m.crypt, kv("cmd", "_pillar", "id", "web1", "grains", map[string]any{"os": "Debian"},
		"saltenv", "base", "pillar_override", map[string]any{"o": "v"}, "ver", "2"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.req.Request(ctxT(t), frame)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := saltproto.LoadsMap(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := saltproto.DecryptPrivate(reply, "pillar", testKey(t, 2), &r.mkeys.Key.PublicKey, nonce); err == nil {
		t.Fatal("another key opened the pillar")
	}
	p, err := saltproto.DecryptPrivate(reply, "pillar", m.key, &r.mkeys.Key.PublicKey, nonce)
	if err != nil {
		t.Fatal(err)
	}
	got := p.(map[string]any)
	if got["a"] != "x" || got["z"] != int64(1) || got["o"] != "v" {
		t.Fatalf("pillar %v", got)
	}
	// The grains wait until the minion's address is proven by its tok.
	if n := len(r.fm.called(wire.MethodMine)); n != 0 {
		t.Fatalf("grains recorded before the address was proven (%d)", n)
	}
	if _, err := m.send(kv("cmd", "_minion_event", "id", "web1", "tok", m.tok, "tag", "salt/minion/web1/start", "data", "started")); err != nil {
		t.Fatal(err)
	}
	mines := r.fm.called(wire.MethodMine)
	if len(mines) != 1 {
		t.Fatalf("grains not recorded once proven: %v", mines)
	}
}

func TestFileServer(t *testing.T) {
	r := newRig(t, "", "web1")
	m := r.minion("web1", 1)
	if err := m.signIn(); err != nil {
		t.Fatal(err)
	}
	// Before any load with its tok, no minion is proven at this address:
	// the file server, whose loads carry no id, answers False.
	if got, _ := m.send(kv("cmd", "_file_envs")); got != false {
		t.Fatalf("file server before proof: %v", got)
	}
	m.send(kv("cmd", "_minion_event", "id", "web1", "tok", m.tok, "tag", "salt/minion/web1/start", "data", "x"))
	for _, c := range []struct {
		load saltproto.Ordered
		want string
	}{
		{kv("cmd", "_file_envs"), `["base","dev"]`},
		{kv("cmd", "_file_list", "saltenv", "base", "prefix", ""), `["top.sls","web/init.sls"]`},
		{kv("cmd", "_dir_list", "saltenv", "base", "prefix", ""), `["web"]`},
		{kv("cmd", "_file_hash", "path", "salt://web/init.sls", "saltenv", "base"), `{"hash_type":"sha256","hsum":"ab12"}`},
		{kv("cmd", "_file_hash", "path", "missing.sls", "saltenv", "base"), `""`},
		{kv("cmd", "_serve_file", "path", "web/init.sls", "saltenv", "base", "loc", int64(2)), `{"data":"llo","dest":"web/init.sls"}`},
		{kv("cmd", "_master_opts", "env_only", true), `{"default_top":null,"env_order":null,"file_roots":{"base":[],"dev":[]},"top_file_merging_strategy":null}`},
		{kv("cmd", "_no_such_thing"), `false`},
	} {
		got, err := m.send(c.load)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(plain(got))
		if string(b) != c.want {
			t.Errorf("%v: got %s, want %s", c.load[0].Value, b, c.want)
		}
	}
}

// plain makes decoded bytes strings, for comparing as JSON.
func plain(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case map[string]any:
		for k, e := range x {
			x[k] = plain(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plain(e)
		}
	}
	return v
}

// sub is a minion's SUB socket, receiving publishes with its session key.
func (m *testMinion) sub() func() (map[string]any, error) {
	m.r.t.Helper()
	s, err := saltzmq.DialSub(ctxT(m.r.t), m.r.pubAt, "")
	if err != nil {
		m.r.t.Fatal(err)
	}
	m.r.t.Cleanup(func() { s.Close() })
	return func() (map[string]any, error) {
		frames, err := s.Recv(ctxT(m.r.t))
		if err != nil {
			return nil, err
		}
		return saltproto.DecodePublish(frames, m.id, m.crypt, &m.r.mkeys.Key.PublicKey, true)
	}
}

func TestJobsPublishedOnceAndKeyRotation(t *testing.T) {
	r := newRig(t, "", "web1", "web2")
	w1, w2 := r.minion("web1", 1), r.minion("web2", 2)
	for _, m := range []*testMinion{w1, w2} {
		if err := m.signIn(); err != nil {
			t.Fatal(err)
		}
	}
	recv := w1.sub()
	waitFor(t, "subscriber", func() bool { return r.tr.Publisher().Subscribers() == 1 })
	time.Sleep(50 * time.Millisecond) // the subscription is applied once read
	job, _ := json.Marshal(wire.Job{JID: "20261128000000000002", Fun: "test.ping", Arg: []any{}, Tgt: "*", TgtType: "glob", User: "root"})
	for _, id := range []string{"web1", "web2"} {
		if !r.tr.accepted(id).Push(wire.PushJob, json.RawMessage(job)) {
			t.Fatal("push refused")
		}
	}
	load, err := recv()
	if err != nil {
		t.Fatal(err)
	}
	if load["fun"] != "test.ping" || load["tgt_type"] != "list" || !slices.Equal(load["tgt"].([]any), []any{"web1", "web2"}) {
		t.Fatalf("publish %v", load)
	}

	// The master pushes a live job again to a minion that signs in again;
	// a salt-minion still holds the first copy: it is not published twice
	// (a second copy's serial would make the minion drop the first).
	r.tr.accepted("web1").Push(wire.PushJob, json.RawMessage(job))

	// find_job is a saltutil.find_job of its own, whose _return is the
	// master's answer.
	r.tr.accepted("web1").Push(wire.PushFindJob, wire.FindJob{JID: "20261128000000000002", Req: "7"})
	fj, err := recv()
	if err != nil {
		t.Fatal(err)
	}
	if fj["fun"] != "saltutil.find_job" || fj["arg"].([]any)[0] != "20261128000000000002" {
		t.Fatalf("find_job publish %v", fj)
	}
	w1.send(kv("cmd", "_minion_event", "id", "web1", "tok", w1.tok, "tag", "salt/minion/web1/start", "data", "x"))
	w1.send(kv("cmd", "_return", "id", "web1", "jid", fj["jid"], "fun", "saltutil.find_job", "return", map[string]any{"jid": "x"}))
	states := r.fm.called(wire.MethodJobState)
	var st wire.JobState
	if len(states) != 1 || json.Unmarshal(states[0].body, &st) != nil || !st.Running || st.Req != "7" || st.JID != "20261128000000000002" {
		t.Fatalf("job state %+v", states)
	}

	// The master cuts web2 off: the session key changes, and what web1
	// holds no longer opens a publish nor a request's answer: it signs in
	// again (and gets the new key); web2, no longer accepted, cannot.
	r.fm.mu.Lock()
	r.fm.accepted["web2"] = false
	r.fm.mu.Unlock()
	r.tr.accepted("web2").Close()
	if r.tr.accepted("web2") != nil {
		t.Fatal("web2's session outlived its key")
	}
	job2, _ := json.Marshal(wire.Job{JID: "20261128000000000004", Fun: "test.ping", Arg: []any{}, User: "root"})
	r.tr.accepted("web1").Push(wire.PushJob, json.RawMessage(job2))
	if _, err := recv(); !errors.Is(err, saltproto.ErrAuthentication) {
		t.Fatalf("publish after rotation opened with the old key: %v", err)
	}
	if _, err := w1.send(kv("cmd", "_file_envs")); !errors.Is(err, saltproto.ErrAuthentication) {
		t.Fatalf("request with the old key: %v", err)
	}
	if err := w1.signIn(); err != nil {
		t.Fatal(err)
	}
	if err := w2.signIn(); !errors.Is(err, saltproto.ErrPending) {
		t.Fatalf("web2 signed in again: %v", err)
	}

	// --kill-after, which a salt-minion does not know, is a
	// saltutil.kill_job published when the time is up.
	killed, _ := json.Marshal(wire.Job{JID: "20261128000000000003", Fun: "test.sleep", Arg: []any{int64(60)}, User: "root", KillAfter: 0.05})
	r.tr.accepted("web1").Push(wire.PushJob, json.RawMessage(killed))
	for _, want := range []string{"test.sleep", "saltutil.kill_job"} {
		load, err := recv()
		if err != nil {
			t.Fatal(err)
		}
		if load["fun"] != want || (want == "saltutil.kill_job" && load["arg"].([]any)[0] != "20261128000000000003") {
			t.Fatalf("got %v, want %s", load, want)
		}
	}
}

func TestSessionsSurviveARestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "salt-sessions.json")
	r := newRig(t, state, "web1")
	m := r.minion("web1", 1)
	if err := m.signIn(); err != nil {
		t.Fatal(err)
	}
	m.send(kv("cmd", "_minion_event", "id", "web1", "tok", m.tok, "tag", "salt/minion/web1/start", "data", "x"))
	r.cancel() // Run saves as it stops
	waitFor(t, "the sessions saved", func() bool {
		b, err := os.ReadFile(state)
		return err == nil && strings.Contains(string(b), `"id":"web1"`)
	})

	r2 := newRig(t, state, "web1")
	waitFor(t, "the session restored", func() bool { return r2.tr.accepted("web1") != nil })
	m.req = saltzmq.NewReqClient(r2.reqAt)
	// The minion goes on with the key it holds, without signing in.
	if got, err := m.send(kv("cmd", "_file_envs")); err != nil || len(got.([]any)) != 2 {
		t.Fatalf("after a restart: %v %v", got, err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLiveness(t *testing.T) {
	r := newRig(t, "", "web1", "web2")
	w1, w2 := r.minion("web1", 1), r.minion("web2", 2)
	for _, m := range []*testMinion{w1, w2} {
		if err := m.signIn(); err != nil {
			t.Fatal(err)
		}
	}
	// web1 listens (a subscriber from its address); web2 is reached by
	// address too here, so it is given another one.
	if m := r.tr.accepted("web2"); m != nil {
		m.mu.Lock()
		m.host = "192.0.2.7"
		m.mu.Unlock()
	}
	recv := w1.sub()
	waitFor(t, "subscriber", func() bool { return r.tr.Publisher().Subscribers() == 1 })
	time.Sleep(50 * time.Millisecond)

	// A job goes at once to the minions listening; to web2, which has no
	// subscriber, once it has one (or after awaitSubscriber).
	job, _ := json.Marshal(wire.Job{JID: "20261128000000000009", Fun: "test.ping", Arg: []any{}, User: "root"})
	for _, id := range []string{"web1", "web2"} {
		r.tr.accepted(id).Push(wire.PushJob, json.RawMessage(job))
	}
	load, err := recv()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(load["tgt"].([]any), []any{"web1"}) {
		t.Fatalf("published to %v before web2 listens", load["tgt"])
	}

	later := time.Now().Add(31 * time.Second)
	r.tr.sweep(later)
	if r.tr.accepted("web1") == nil {
		t.Fatal("a listening minion's session ended")
	}
	if r.tr.accepted("web2") != nil {
		t.Fatal("a minion without a subscriber nor a request for the grace period still has a session")
	}
	r.fm.mu.Lock()
	defer r.fm.mu.Unlock()
	if len(r.fm.bound) != 1 {
		t.Fatalf("the master was not told web2 is gone: %v", r.fm.bound)
	}
}

// TestSignInDoesNotMoveASession: anyone may send a minion's public key in
// an _auth (it is public); it gains nothing it can open, and it does not
// move the minion's session to the sender's address, which would make the
// minion count as gone and its jobs wait for a subscriber there.
func TestSignInDoesNotMoveASession(t *testing.T) {
	r := newRig(t, "", "web1")
	m := r.minion("web1", 1)
	if err := m.signIn(); err != nil {
		t.Fatal(err)
	}
	m.send(kv("cmd", "_minion_event", "id", "web1", "tok", m.tok, "tag", "salt/minion/web1/start", "data", "x"))
	if got := r.tr.accepted("web1").where(); got != "127.0.0.1" {
		t.Fatalf("web1 at %q", got)
	}
	d := &saltzmq.ClientDialer{}
	d.LocalAddr = &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}
	other := &testMinion{r: r, id: "web1", key: m.key, req: d.NewReqClient(r.reqAt)}
	t.Cleanup(func() { other.req.Close() })
	if err := other.signIn(); err != nil {
		t.Fatal(err) // accepted: the key is web1's; only web1 can open the reply
	}
	if got := r.tr.accepted("web1").where(); got != "127.0.0.1" {
		t.Fatalf("a sign-in from 127.0.0.2 moved web1's session to %q", got)
	}
	// Without web1's tok, a load from there is not web1's.
	ret := kv("cmd", "_return", "id", "web1", "jid", "20261128000000000005", "fun", "test.ping", "return", true)
	if got, _ := other.send(ret); got != false {
		t.Fatalf("a return for web1 from an address its tok never came from: %v", got)
	}
}
