package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

// The gateway with libzmq as a foreign peer: Debian's python3-zmq (pyzmq on
// libzmq 4.3 with libsodium) speaks CURVE to a real Server, as an operator
// publishing, as an agent with a key of its own, and as watchers. The
// package curve tests the mechanism alone against the same library; these
// test what the gateway does with the connections. They fail, not skip,
// without python3-zmq.

var (
	pyzmqOnce sync.Once
	pyzmqPath string
	pyzmqWhy  []string
)

// pyzmq is a python3 whose zmq module has CURVE: python3 on PATH may be a
// pyenv or venv interpreter without pyzmq, so Debian's /usr/bin/python3 is
// tried after it.
func pyzmq(t *testing.T) string {
	t.Helper()
	pyzmqOnce.Do(func() {
		for _, name := range []string{"python3", "/usr/bin/python3"} {
			path, err := exec.LookPath(name)
			if err == nil {
				var out []byte
				out, err = exec.Command(path, "-c", "import zmq, sys; sys.exit(0 if zmq.has('curve') else 'libzmq has no CURVE')").CombinedOutput()
				if err == nil {
					pyzmqPath = path
					return
				}
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				err = errors.New(lines[len(lines)-1])
			}
			pyzmqWhy = append(pyzmqWhy, name+": "+err.Error())
		}
	})
	if pyzmqPath == "" {
		t.Fatalf("the interop tests need python3 with pyzmq built with CURVE (Debian: apt-get install python3-zmq; make deps does): %s",
			strings.Join(pyzmqWhy, "; "))
	}
	return pyzmqPath
}

// pyPeer is testdata/pypeer.py running.
type pyPeer struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
}

// peerResult is what a peer printed.
type peerResult struct {
	public  string     // its public key
	msgs    [][][]byte // the messages it received, in order
	monitor []string   // a SUB's socket events, as libzmq's monitor names them
	done    int
}

func startPeer(t *testing.T, cfg map[string]any) *pyPeer {
	t.Helper()
	py := pyzmq(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	line, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &pyPeer{cmd: exec.CommandContext(ctx, py, "testdata/pypeer.py"), done: make(chan struct{})}
	p.cmd.Stdin = bytes.NewReader(append(line, '\n'))
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	return p
}

func (p *pyPeer) wait(t *testing.T) peerResult {
	t.Helper()
	<-p.done
	if p.err != nil {
		t.Fatalf("pyzmq peer: %v: %s\nstdout:\n%s", p.err, strings.TrimSpace(p.stderr.String()), p.stdout.String())
	}
	var r peerResult
	for _, line := range strings.Split(strings.TrimSpace(p.stdout.String()), "\n") {
		var l struct {
			Public  string   `json:"public"`
			Frames  []string `json:"frames"`
			Monitor []string `json:"monitor"`
			Done    *int     `json:"done"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("pyzmq peer printed %q: %v", line, err)
		}
		switch {
		case l.Public != "":
			r.public = l.Public
		case l.Done != nil:
			r.done = *l.Done
		case l.Monitor != nil:
			r.monitor = l.Monitor
		default:
			var msg [][]byte
			for _, f := range l.Frames {
				b, err := base64.StdEncoding.DecodeString(f)
				if err != nil {
					t.Fatal(err)
				}
				msg = append(msg, b)
			}
			r.msgs = append(r.msgs, msg)
		}
	}
	return r
}

// storedTags publishes a marker straight to the bus and returns the tags
// of every event stored before it.
func storedTags(t *testing.T, b bus.Bus) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	marker, err := bus.NewEvent("test/interop/marker", nil, bus.Origin{Source: "brine://test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, marker); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		tags []string
	)
	seen := make(chan struct{})
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Since: bus.Since{Time: time.Unix(0, 0)}}, func(ev *bus.Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.ID == marker.ID {
			close(seen)
			return
		}
		tags = append(tags, ev.Tag)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	select {
	case <-seen:
	case <-ctx.Done():
		t.Fatal("the marker event never came back from the bus")
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(tags)
}

// b64Requests encodes requests for the peer's JSON.
func b64Requests(reqs ...[][]byte) [][]string {
	out := [][]string{}
	for _, r := range reqs {
		var fs []string
		for _, f := range r {
			fs = append(fs, base64.StdEncoding.EncodeToString(f))
		}
		out = append(out, fs)
	}
	return out
}

// signed is an operator's request: correlation id, method, body, mac.
func signed(key []byte, corr, method string, body []byte) [][]byte {
	return [][]byte{[]byte(corr), []byte(method), body, []byte(Sign(key, method, body))}
}

// checkReply checks a reply's frames: corr, status and, for an error, its
// code; it returns the body.
func checkReply(t *testing.T, msg [][]byte, corr, status, code string) map[string]any {
	t.Helper()
	if len(msg) != 3 || string(msg[0]) != corr || string(msg[1]) != status {
		t.Errorf("reply %q, want [%s %s body]", msg, corr, status)
		return nil
	}
	var body map[string]any
	if err := json.Unmarshal(msg[2], &body); err != nil {
		t.Errorf("reply %s body %q: %v", corr, msg[2], err)
		return nil
	}
	if code != "" && body["code"] != code {
		t.Errorf("reply %s: %v, want code %q", corr, body, code)
	}
	return body
}

// TestInteropOperatorPublishes: a pyzmq DEALER holding the operators' key
// pair publishes a signed event and is answered once it is stored; a wrong
// mac and a reserved tag are refused with their codes.
func TestInteropOperatorPublishes(t *testing.T) {
	b := openBus(t)
	srv := startServer(t, b, nil)
	op := OperatorKeys(testKey)
	body := []byte(`{"tag": "interop/pyzmq/published", "data": {"from": "pyzmq", "n": 1, "nested": {"ok": true}}}`)
	reserved := []byte(`{"tag": "salt/auth", "data": {"act": "accept", "id": "web1"}}`)
	p := startPeer(t, map[string]any{
		"mode": "dealer", "endpoint": "tcp://" + srv.RequestAddr(), "timeout_ms": 10000,
		"server_key": MasterKeys(testKey).Public.String(), "public": op.Public.String(), "secret": op.Secret.String(),
		"requests": b64Requests(
			signed(testKey, "c1", "publish", body),
			signed([]byte("another key, another mac........"), "c2", "publish", body),
			signed(testKey, "c3", "publish", reserved),
			signed(testKey, "c4", "ping", []byte("{}")),
		),
	})
	r := p.wait(t)
	if r.public != op.Public.String() || r.done != 4 || len(r.msgs) != 4 {
		t.Fatalf("peer: key %s, %d messages (done %d), want 4 replies: %q", r.public, len(r.msgs), r.done, r.msgs)
	}
	ok := checkReply(t, r.msgs[0], "c1", "ok", "")
	checkReply(t, r.msgs[1], "c2", "error", CodeAuth)
	checkReply(t, r.msgs[2], "c3", "error", CodeReserved)
	if pong := checkReply(t, r.msgs[3], "c4", "ok", ""); pong["time"] == nil {
		t.Errorf("ping answered %v", pong)
	}

	stored := storedEvents(t, b, "interop/pyzmq/published", 1)
	if len(stored) != 1 || ok == nil || stored[0].ID != ok["id"] {
		t.Fatalf("stored %v, want the one event acknowledged with %v", stored, ok)
	}
	d, err := stored[0].DataMap()
	if err != nil {
		t.Fatal(err)
	}
	if d["from"] != "pyzmq" || d["n"] != int64(1) || d["nested"].(map[string]any)["ok"] != true ||
		!strings.HasPrefix(stored[0].Source, "zmq://127.0.0.1:") {
		t.Errorf("stored event: source %q data %v", stored[0].Source, d)
	}
	if got := storedTags(t, b); slices.Contains(got, "salt/auth") {
		t.Errorf("the refused salt/auth was stored: %v", got)
	}
}

// TestInteropAgentRequests: a pyzmq DEALER with a key pair of its own
// (made by libzmq) reaches the agent handlers, which see its key, and is
// pushed to; it never reaches the operators' methods, even with a valid mac.
func TestInteropAgentRequests(t *testing.T) {
	b := openBus(t)
	srv := startServer(t, b, nil)
	var (
		mu   sync.Mutex
		seen []string
	)
	srv.HandleAgent("test.echo", func(_ context.Context, p *Peer, body json.RawMessage) (any, error) {
		mu.Lock()
		seen = append(seen, p.Key().String())
		mu.Unlock()
		if !p.Push("test.pushed", map[string]any{"to": p.Key().String()}) {
			return nil, errors.New("push refused")
		}
		return map[string]any{"key": p.Key().String(), "body": body}, nil
	})
	body := []byte(`{"hello": "from libzmq"}`)
	p := startPeer(t, map[string]any{
		"mode": "dealer", "endpoint": "tcp://" + srv.RequestAddr(), "timeout_ms": 10000,
		"server_key": MasterKeys(testKey).Public.String(),
		"requests": b64Requests(
			[][]byte{[]byte("a1"), []byte("test.echo"), body},
			[][]byte{[]byte("a2"), []byte("test.echo"), body, nil},
			signed(testKey, "a3", "publish", []byte(`{"tag": "interop/agent/forged", "data": {}}`)),
			signed(testKey, "a4", "ping", []byte("{}")),
			[][]byte{[]byte("a5"), []byte("agent.hello"), []byte(`{"id": "web1"}`)},
		),
	})
	r := p.wait(t)
	if r.public == "" || r.public == OperatorKeys(testKey).Public.String() {
		t.Fatalf("peer key %q", r.public)
	}
	// Each echo is preceded (or followed) by its push: 2 pushes + 5 replies.
	var pushes, replies [][][]byte
	for _, m := range r.msgs {
		if len(m) > 0 && len(m[0]) == 0 {
			pushes = append(pushes, m)
		} else {
			replies = append(replies, m)
		}
	}
	if len(pushes) != 2 || len(replies) != 5 {
		t.Fatalf("%d pushes and %d replies, want 2 and 5: %q", len(pushes), len(replies), r.msgs)
	}
	for _, m := range pushes {
		var push map[string]any
		if len(m) != 3 || string(m[1]) != "test.pushed" || json.Unmarshal(m[2], &push) != nil || push["to"] != r.public {
			t.Errorf("push %q, want [\"\" test.pushed {\"to\": %q}]", m, r.public)
		}
	}
	for i, corr := range []string{"a1", "a2"} {
		echo := checkReply(t, replies[i], corr, "ok", "")
		if echo["key"] != r.public || echo["body"].(map[string]any)["hello"] != "from libzmq" {
			t.Errorf("echo %s = %v; want the peer's key %s and its body", corr, echo, r.public)
		}
	}
	for i, corr := range []string{"a3", "a4", "a5"} {
		e := checkReply(t, replies[2+i], corr, "error", CodeUnknown)
		if !strings.Contains(e["error"].(string), "for agents") {
			t.Errorf("reply %s: %v", corr, e)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != r.public || seen[1] != r.public {
		t.Errorf("the handler saw keys %v, want the peer's %s twice", seen, r.public)
	}
	if got := storedTags(t, b); len(got) != 0 {
		t.Errorf("an agent's requests stored events: %v", got)
	}
}

// TestInteropWatchers: a pyzmq SUB holding the operators' key pair receives
// a published event in Salt's framing; a SUB with another key pair is
// refused and receives nothing.
func TestInteropWatchers(t *testing.T) {
	b := openBus(t)
	srv := startServer(t, b, nil)
	op := OperatorKeys(testKey)
	sub := func(keys map[string]any, wait int) *pyPeer {
		cfg := map[string]any{"mode": "sub", "endpoint": "tcp://" + srv.PublishAddr(), "server_key": MasterKeys(testKey).Public.String(),
			"subscribe": "interop/", "count": 1, "timeout_ms": wait}
		for k, v := range keys {
			cfg[k] = v
		}
		return startPeer(t, cfg)
	}
	stranger := sub(nil, 3000)
	good := sub(map[string]any{"public": op.Public.String(), "secret": op.Secret.String()}, 20000)
	waitWatchers(t, srv.Server, 1)

	c := dialClient(t, srv.RequestAddr(), testKey)
	ctx := testContext(t)
	if _, err := c.Publish(ctx, "other/not/subscribed", nil); err != nil {
		t.Fatal(err)
	}
	id, err := c.Publish(ctx, "interop/watch/me", map[string]any{"n": 7})
	if err != nil {
		t.Fatal(err)
	}
	r := good.wait(t)
	if r.done != 1 || len(r.msgs) != 1 {
		t.Fatalf("the operator's SUB received %d messages, want 1: %q", len(r.msgs), r.msgs)
	}
	m := r.msgs[0]
	if !slices.Contains(r.monitor, "HANDSHAKE_SUCCEEDED") {
		t.Errorf("the operator's SUB: libzmq reported %v, want HANDSHAKE_SUCCEEDED", r.monitor)
	}
	if len(m) != 3 || string(m[0]) != "interop/watch/me" {
		t.Fatalf("frames %q, want [tag position envelope]", m)
	}
	ev, err := bus.Decode(m[2], 0)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := ev.DataMap(); ev.ID != id || ev.Tag != "interop/watch/me" || d["n"] != int64(7) {
		t.Errorf("event %+v data %v, want id %s", ev, d, id)
	}

	// The stranger, still trying, was never admitted as a watcher.
	if n := srv.Watchers(); n > 1 {
		t.Errorf("%d watchers connected, want at most the operator's", n)
	}
	s := stranger.wait(t)
	if s.done != 0 || len(s.msgs) != 0 {
		t.Errorf("a SUB with another key received %q", s.msgs)
	}
	// It did reach the master, which refused it in the handshake.
	if !slices.Contains(s.monitor, "CONNECTED") || !slices.Contains(s.monitor, "DISCONNECTED") || slices.Contains(s.monitor, "HANDSHAKE_SUCCEEDED") {
		t.Errorf("a SUB with another key: libzmq reported %v, want CONNECTED and DISCONNECTED without HANDSHAKE_SUCCEEDED", s.monitor)
	}
}
