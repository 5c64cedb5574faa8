package saltfleet

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus/gateway/saltzmq"
	"github.com/brinehq/brine/saltproto"
)

// fakeMaster is the master's side of Salt's protocol in this process:
// saltproto.Master answering _auth (each key pending for its first
// sign-in, then accepted), saltproto's request codec for the aes loads,
// and saltzmq's request server and publisher on loopback ports.
type fakeMaster struct {
	t       *testing.T
	m       *saltproto.Master
	crypt   *saltproto.Crypticle
	serial  saltproto.Serial
	pub     *saltzmq.Publisher
	reqAddr string

	// acceptFirst accepts a key at its first sign-in (else it is pending
	// once); slowFirst delays the answer to each id's first sign-in.
	acceptFirst bool
	slowFirst   time.Duration

	mu      sync.Mutex
	seen    map[string]int              // sign-ins by id
	returns map[string][]map[string]any // _return loads by jid
	events  []map[string]any
	hosts   map[string]string // the host each id's requests came from
	bad     []string
}

func startFakeMaster(t *testing.T, keys KeyPair) *fakeMaster {
	t.Helper()
	return startFakeMasterWith(t, keys, saltzmq.RequestConfig{}, saltzmq.PublisherConfig{})
}

// startFakeMasterWith is startFakeMaster with the servers' bounds set.
func startFakeMasterWith(t *testing.T, keys KeyPair, rc saltzmq.RequestConfig, pc saltzmq.PublisherConfig) *fakeMaster {
	t.Helper()
	aes, err := saltproto.GenerateKeyString()
	if err != nil {
		t.Fatal(err)
	}
	crypt, err := saltproto.NewCrypticle(aes)
	if err != nil {
		t.Fatal(err)
	}
	fm := &fakeMaster{t: t, crypt: crypt, seen: map[string]int{}, returns: map[string][]map[string]any{}, hosts: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return ln
	}
	pubLn, reqLn := listen(), listen()
	fm.m = &saltproto.Master{Keys: &saltproto.MasterKeys{Key: keys.Key, Pub: keys.Pub}, PublishPort: pubLn.Addr().(*net.TCPAddr).Port}
	fm.pub = saltzmq.NewPublisher(pc, nil)
	rc.Handler = fm.handle
	rs, err := saltzmq.NewRequestServer(rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { fm.pub.Serve(ctx, pubLn) })
	wg.Go(func() { rs.Serve(ctx, reqLn) })
	fm.reqAddr = reqLn.Addr().String()
	return fm
}

// handle is ReqServerChannel.handle_message, cut down to what the fleet
// sends.
func (fm *fakeMaster) handle(ctx context.Context, remote string, payload []byte) ([]byte, error) {
	r, err := saltproto.DecodeRequest(payload, fm.crypt)
	if err != nil {
		fm.fail("decode: %v", err)
		return saltproto.Dumps("bad load")
	}
	if r.IsAuth() {
		res, err := fm.m.Auth(r.Version, r.Load, fm.crypt.KeyString(), func(a *saltproto.AuthLoad) (saltproto.KeyState, error) {
			fm.mu.Lock()
			defer fm.mu.Unlock()
			fm.seen[a.ID]++
			if fm.seen[a.ID] == 1 && !fm.acceptFirst {
				return saltproto.KeyPending, nil
			}
			return saltproto.KeyAccepted, nil
		})
		if err != nil {
			return nil, err
		}
		fm.mu.Lock()
		first := fm.seen[r.ID()] == 1
		fm.mu.Unlock()
		if first && fm.slowFirst > 0 {
			time.Sleep(fm.slowFirst)
		}
		return saltproto.Dumps(res.Reply)
	}
	if r.Enc != "aes" || r.Version != 2 || len(r.Nonce) != saltproto.NonceSize {
		fm.fail("request enc %q version %d nonce %q", r.Enc, r.Version, r.Nonce)
	}
	saltzmq.Authenticate(ctx)
	fm.mu.Lock()
	fm.hosts[r.ID()], _, _ = net.SplitHostPort(remote)
	switch r.Cmd() {
	case "_return":
		jid, _ := r.Load["jid"].(string)
		fm.returns[jid] = append(fm.returns[jid], r.Load)
	case "_minion_event":
		fm.events = append(fm.events, r.Load)
	default:
		fm.bad = append(fm.bad, "cmd "+r.Cmd())
	}
	fm.mu.Unlock()
	return r.Reply(fm.crypt, nil)
}

func (fm *fakeMaster) fail(format string, args ...any) {
	fm.mu.Lock()
	fm.bad = append(fm.bad, fmt.Sprintf(format, args...))
	fm.mu.Unlock()
}

// publish sends a job as a brine master publishes one to Salt minions.
func (fm *fakeMaster) publish(job saltproto.Ordered) int {
	fm.t.Helper()
	n, _ := fm.serial.Next()
	b, err := saltproto.WrapPublish(fm.crypt, job, n, fm.m.Keys.Key)
	if err != nil {
		fm.t.Fatal(err)
	}
	sent := 0
	for _, msg := range saltproto.PublishFrames(b, false, nil, false) {
		sent += fm.pub.Publish(msg...)
	}
	return sent
}

func (fm *fakeMaster) returned(jid string) []map[string]any {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	return append([]map[string]any(nil), fm.returns[jid]...)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startFleet makes a minion of each of keys (minion-0, minion-1, …)
// with cfg and starts them; the test's end stops them.
func startFleet(t *testing.T, cfg Config, keys []KeyPair) *Fleet {
	t.Helper()
	f, err := New(cfg, keys, func(i int) string { return "minion-" + strconv.Itoa(i) })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	t.Cleanup(func() {
		f.Stop()
		cancel()
	})
	return f
}

// TestFleet: three minions sign in (pending once, then accepted after
// acceptance_wait_time), subscribe, send their start event, and answer
// the jobs targeted at them — by list and by glob — with Salt's _return
// load, and only those.
func TestFleet(t *testing.T) {
	keys, err := Keys(t.TempDir(), 4, 1024)
	if err != nil {
		t.Fatal(err)
	}
	fm := startFakeMaster(t, keys[3])
	var calls atomic.Int64
	f := startFleet(t, Config{
		ReqAddr: fm.reqAddr, AcceptanceWait: 100 * time.Millisecond, StartEvent: true, LocalIP: LoopbackIP,
		OnReturn: func(id, jid string, at time.Time, err error) { calls.Add(1) },
	}, keys[:3])
	waitFor(t, "the minions accepted and subscribed", func() bool {
		return f.Accepted() == 3 && f.Subscribed() == 3 && fm.pub.Subscribers() == 3
	})
	waitFor(t, "the start events", func() bool {
		fm.mu.Lock()
		defer fm.mu.Unlock()
		return len(fm.events) == 3
	})
	// The subscriptions are applied once the publisher has read them.
	time.Sleep(100 * time.Millisecond)

	tests := []struct {
		name string
		job  saltproto.Ordered
		want map[string]any // return by minion id
	}{
		{"list", saltproto.Ordered{{Key: "tgt_type", Value: "list"}, {Key: "jid", Value: "20261128000000000001"},
			{Key: "tgt", Value: []any{"minion-0", "minion-2", "elsewhere"}}, {Key: "ret", Value: ""}, {Key: "user", Value: "root"},
			{Key: "arg", Value: []any{}}, {Key: "fun", Value: "test.ping"}},
			map[string]any{"minion-0": true, "minion-2": true}},
		{"glob", saltproto.Ordered{{Key: "tgt_type", Value: "glob"}, {Key: "jid", Value: "20261128000000000002"},
			{Key: "tgt", Value: "minion-*"}, {Key: "ret", Value: ""}, {Key: "user", Value: "root"},
			{Key: "arg", Value: []any{"hello"}}, {Key: "fun", Value: "test.echo"}},
			map[string]any{"minion-0": "hello", "minion-1": "hello", "minion-2": "hello"}},
		{"missing function", saltproto.Ordered{{Key: "tgt_type", Value: "list"}, {Key: "jid", Value: "20261128000000000003"},
			{Key: "tgt", Value: []any{"minion-1"}}, {Key: "ret", Value: ""}, {Key: "arg", Value: []any{}}, {Key: "fun", Value: "no.such"}},
			map[string]any{"minion-1": "'no.such' is not available."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := fm.publish(tt.job); n != 3 {
				t.Fatalf("published to %d subscribers, want 3", n)
			}
			jid := tt.job.Map()["jid"].(string)
			waitFor(t, "the returns", func() bool { return f.Returns(jid).OK == len(tt.want) })
			rets := fm.returned(jid)
			if len(rets) != len(tt.want) {
				t.Fatalf("%d returns, want %d", len(rets), len(tt.want))
			}
			job := tt.job.Map()
			for _, r := range rets {
				id, _ := r["id"].(string)
				want, ok := tt.want[id]
				if !ok {
					t.Fatalf("a return from %q, not targeted", id)
				}
				success := job["fun"] != "no.such"
				if r["return"] != want || r["success"] != success || r["fun"] != job["fun"] || r["cmd"] != "_return" {
					t.Errorf("%s returned %v", id, r)
				}
				if len(r["fun_args"].([]any)) != len(job["arg"].([]any)) {
					t.Errorf("%s: fun_args %v, want the job's arg %v", id, r["fun_args"], job["arg"])
				}
				if _, ok := r["user"]; ok != (job["user"] != nil) {
					t.Errorf("%s: user %v, the job's %v", id, r["user"], job["user"])
				}
			}
		})
	}
	c := f.Counts()
	if c.Pending != 3 || c.SignIns != 6 || c.Returned != 6 || c.Failed != 0 {
		t.Errorf("counts %+v, want 3 pending of 6 sign-ins and 6 returns", c)
	}
	if calls.Load() != 6 {
		t.Errorf("OnReturn called %d times, want 6", calls.Load())
	}
	fm.mu.Lock()
	for _, ev := range fm.events {
		if ev["tag"] != "salt/minion/"+ev["id"].(string)+"/start" || ev["tok"] == nil {
			t.Errorf("start event %v", ev)
		}
	}
	for i := range 3 {
		if h := fm.hosts["minion-"+strconv.Itoa(i)]; h != LoopbackIP(i).String() {
			t.Errorf("minion-%d's requests came from %s, want %s", i, h, LoopbackIP(i))
		}
	}
	if len(fm.bad) > 0 {
		t.Errorf("the master saw: %v", fm.bad)
	}
	fm.mu.Unlock()
	if !f.Stop() {
		t.Fatal("the minions did not stop")
	}
	if i, err := f.Err(); err != nil {
		t.Fatalf("minion %d: %v", i, err)
	}
}

func TestLoopbackIP(t *testing.T) {
	for _, tt := range []struct {
		i    int
		want string
	}{{0, "127.1.0.1"}, {253, "127.1.0.254"}, {254, "127.1.1.1"}, {999, "127.1.3.238"}, {254 * 256, "127.2.0.1"}} {
		if got := LoopbackIP(tt.i).String(); got != tt.want {
			t.Errorf("LoopbackIP(%d) = %s, want %s", tt.i, got, tt.want)
		}
	}
}

// TestFleetReconnects: a master that refuses connections over its bounds
// (one unauthenticated request connection, one subscriber handshake at a
// time) gets every minion anyway, each trying again after libzmq's
// reconnect interval as a minion's sockets do.
func TestFleetReconnects(t *testing.T) {
	keys, err := Keys(t.TempDir(), 9, 1024)
	if err != nil {
		t.Fatal(err)
	}
	fm := startFakeMasterWith(t, keys[8], saltzmq.RequestConfig{MaxUnauthenticated: 1}, saltzmq.PublisherConfig{MaxHandshakes: 1})
	f := startFleet(t, Config{ReqAddr: fm.reqAddr, AcceptanceWait: 50 * time.Millisecond, LocalIP: LoopbackIP,
		ReconDefault: 20 * time.Millisecond, ReconMax: 50 * time.Millisecond}, keys[:8])
	waitFor(t, "the minions accepted and subscribed", func() bool { return f.Accepted() == 8 && f.Subscribed() == 8 })
	if c := f.Counts(); c.ReqReconnects == 0 {
		t.Errorf("counts %+v: no request connection was refused, the test tests nothing", c)
	}
}

func TestBackoff(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name      string
		base, max time.Duration
		want      []time.Duration // the interval before the jitter, in turn
	}{
		{"REQ", reqReconnectIvl, reqReconnectIvlMax, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms, 5000 * ms, 5000 * ms}},
		{"max below base", 7000 * ms, 5000 * ms, []time.Duration{7000 * ms, 7000 * ms, 7000 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := reconnectIvl{base: tt.base, max: tt.max}
			for i, w := range tt.want {
				if d := b.next(); d < w || d >= w+b.base {
					t.Fatalf("interval %d: %s, want [%s, %s)", i, d, w, w+b.base)
				}
			}
			b.reset()
			if d := b.next(); d >= 2*b.base {
				t.Fatalf("after reset: %s, want below %s", d, 2*b.base)
			}
		})
	}
	c := Config{}
	c.setDefaults()
	for range 100 {
		if b := c.subBackoff(); b.base < time.Second || b.base > 11*time.Second || b.max != 10*time.Second {
			t.Fatalf("a SUB's interval %s (max %s), want Salt's randint(1000, 11000) ms (max 10 s)", b.base, b.max)
		}
	}
}

// TestFleetLateReplies: a sign-in answered after auth_timeout is sent
// again on the same connection once the late reply came, as Salt
// 3006.6's request client does, and the minion is accepted then, not an
// acceptance_wait_time later.
func TestFleetLateReplies(t *testing.T) {
	keys, err := Keys(t.TempDir(), 3, 1024)
	if err != nil {
		t.Fatal(err)
	}
	fm := startFakeMaster(t, keys[2])
	fm.acceptFirst, fm.slowFirst = true, 300*time.Millisecond
	start := time.Now()
	f := startFleet(t, Config{ReqAddr: fm.reqAddr, AcceptanceWait: time.Hour, AuthTimeout: 200 * time.Millisecond, LocalIP: LoopbackIP}, keys[:2])
	waitFor(t, "the minions accepted", func() bool { return f.Accepted() == 2 })
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("accepted after %s", d)
	}
	if c := f.Counts(); c.LateReplies != 2 || c.SignIns != 2 {
		t.Errorf("counts %+v, want 2 sign-ins with a late reply each", c)
	}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	for id, n := range fm.seen {
		if n != 2 {
			t.Errorf("%s signed in %d times, want the late one and the one sent again", id, n)
		}
	}
}
