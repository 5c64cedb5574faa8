package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/zmtp"
	"github.com/brinehq/brine/bus/natsbus"
)

func TestPublishDurableThenWatched(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	srv := startServer(t, b, nil)
	c := dialClient(t, srv.RequestAddr(), testKey)

	col := newCollector()
	startWatch(t, c, srv.PublishAddr(), "salt/cloud/*/created", bus.Since{}, col)
	raw, err := rawSub(t, srv.PublishAddr(), testKey, "salt/cloud/")
	if err != nil {
		t.Fatal(err)
	}
	waitWatchers(t, srv.Server, 2)

	if _, err := c.Publish(ctx, "salt/cloud/web1/creating", map[string]any{"name": "web1"}); err != nil {
		t.Fatal(err)
	}
	id, err := c.Publish(ctx, "salt/cloud/web1/created", map[string]any{"name": "web1", "instance_id": "i-1", "count": 3})
	if err != nil {
		t.Fatal(err)
	}

	// Durable: the bus has it.
	stored := storedEvents(t, b, "salt/cloud/web1/created", 1)
	if len(stored) != 1 || stored[0].ID != id {
		t.Fatalf("stored %d events (%v), want the one with id %s", len(stored), stored, id)
	}
	data, err := stored[0].DataMap()
	if err != nil {
		t.Fatal(err)
	}
	if data["name"] != "web1" || data["count"] != int64(3) || data["_stamp"] == nil {
		t.Fatalf("stored data = %v", data)
	}

	// Watched through the glob: only the created event.
	evs := col.waitFor(t, 10*time.Second, "the created event", atLeast(1))
	if evs[0].ID != id || evs[0].Tag != "salt/cloud/web1/created" || evs[0].Seq != stored[0].Seq {
		t.Fatalf("watched %+v, want id %s tag salt/cloud/web1/created seq %d", evs[0], id, stored[0].Seq)
	}

	// A bare SUB sees Salt's framing: tag first, then position and envelope.
	for _, wantTag := range []string{"salt/cloud/web1/creating", "salt/cloud/web1/created"} {
		msg, err := raw.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.Frames) != 3 || string(msg.Frames[0]) != wantTag {
			t.Fatalf("raw frames %q, want tag %q first", msg.Frames, wantTag)
		}
		if _, err := strconv.ParseUint(string(msg.Frames[1]), 10, 64); err != nil {
			t.Fatalf("position frame %q: %v", msg.Frames[1], err)
		}
		ev, err := bus.Decode(msg.Frames[2], 0)
		if err != nil || ev.Tag != wantTag {
			t.Fatalf("envelope %s: %v", msg.Frames[2], err)
		}
	}
	if got := col.snapshot(); len(got) != 1 {
		t.Fatalf("the glob let through %d events, want 1", len(got))
	}
}

func TestWrongKeyRefused(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	srv := startServer(t, b, nil)

	// Request side: Dial checks the key and reports the master's refusal.
	_, err := Dial(ctx, srv.RequestAddr(), []byte("not the key"))
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "authentication failed: wrong key") {
		t.Fatalf("Dial with a wrong key: %v", err)
	}

	// A request without a mac gets an error reply, not silence.
	dealer := zmq4.NewDealer(ctx)
	defer dealer.Close()
	if err := dealer.Dial(endpoint(srv.RequestAddr(), DefaultRequestPort)); err != nil {
		t.Fatal(err)
	}
	if err := dealer.Send(zmq4.NewMsgFrom([]byte("c1"), []byte("ping"), []byte("{}"), nil)); err != nil {
		t.Fatal(err)
	}
	msg, err := dealer.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Frames) != 3 || string(msg.Frames[0]) != "c1" || string(msg.Frames[1]) != "error" || !strings.Contains(string(msg.Frames[2]), "authentication failed") {
		t.Fatalf("unsigned request: reply %q", msg.Frames)
	}

	// Publish side: the handshake fails on the client with the reason.
	_, err = rawSub(t, srv.PublishAddr(), []byte("not the key"), "")
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "authentication failed: wrong key") {
		t.Fatalf("watcher with a wrong key: %v", err)
	}
	// And Watch says the same.
	good := dialClient(t, srv.RequestAddr(), testKey)
	bad := &Client{key: []byte("not the key")}
	err = bad.Watch(ctx, srv.PublishAddr(), "", bus.Since{}, func(*bus.Event) error { return nil })
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "authentication failed: wrong key") {
		t.Fatalf("Watch with a wrong key: %v", err)
	}
	// The right key still works after the refusals.
	if err := good.Call(ctx, "ping", struct{}{}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRefusals(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	srv := startServer(t, b, func(c *Config) { c.MaxEventSize = 8 << 10 })
	c := dialClient(t, srv.RequestAddr(), testKey)

	for _, tag := range []string{"salt/job/1/new", "salt/run/2/ret", "salt/auth", "salt/key", "brine/x", "brine/bus/watcher/dropped"} {
		_, err := c.Publish(ctx, tag, map[string]any{"x": 1})
		if !errors.Is(err, ErrReservedTag) || !strings.Contains(err.Error(), tag) {
			t.Errorf("publish %q: %v, want a reserved-prefix refusal naming the tag", tag, err)
		}
	}
	// A whole envelope under a reserved prefix is refused too.
	ev, err := bus.NewEvent("salt/job/20261122/new", nil, bus.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PublishEvent(ctx, ev); !errors.Is(err, ErrReservedTag) {
		t.Errorf("publish envelope salt/job/…: %v", err)
	}
	// So is the tag/data form of the request.
	var rep PublishReply
	err = c.Call(ctx, "publish", map[string]any{"tag": "brine/reactor/error", "data": map[string]any{}}, &rep)
	if !errors.Is(err, ErrReservedTag) {
		t.Errorf("publish {tag, data} brine/…: %v", err)
	}

	_, err = c.Publish(ctx, "app/big", map[string]any{"blob": strings.Repeat("x", 9<<10)})
	if !errors.Is(err, bus.ErrTooLarge) || !strings.Contains(err.Error(), "limit is 8192") {
		t.Errorf("oversize publish: %v", err)
	}
	err = c.Call(ctx, "publish", map[string]any{"tag": "app/big", "data": map[string]any{"blob": strings.Repeat("x", 9<<10)}}, &rep)
	if !errors.Is(err, bus.ErrTooLarge) {
		t.Errorf("oversize {tag, data} publish: %v", err)
	}
	err = c.Call(ctx, "publish", map[string]any{"tag": "app/x", "data": []int{1}}, &rep)
	if err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("publish with list data: %v", err)
	}
	err = c.Call(ctx, "no.such", struct{}{}, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown method "no.such"`) {
		t.Errorf("unknown method: %v", err)
	}

	// The same tag/data form succeeds where allowed.
	if err := c.Call(ctx, "publish", map[string]any{"tag": "app/ok", "data": map[string]any{"n": 1}}, &rep); err != nil || rep.ID == "" {
		t.Fatalf("publish {tag, data}: %v %+v", err, rep)
	}
	head, err := b.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if head != natsbus.Position(1, 0) {
		t.Fatalf("the log ends at %d, want only app/ok", head)
	}
}

func TestPipelinedPublishes(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	srv := startServer(t, b, nil)
	c := dialClient(t, srv.RequestAddr(), testKey)

	const goroutines, per = 8, 125
	ids := make(chan string, goroutines*per)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				id, err := c.Publish(ctx, fmt.Sprintf("app/load/%d", g), map[string]any{"i": i})
				if err != nil {
					errs <- err
					return
				}
				ids <- id
			}
		}()
	}
	wg.Wait()
	close(ids)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %s acknowledged twice", id)
		}
		seen[id] = true
	}
	if len(seen) != goroutines*per {
		t.Fatalf("%d distinct ids, want %d", len(seen), goroutines*per)
	}
	stored := storedEvents(t, b, "app/load/*", goroutines*per)
	if len(stored) != goroutines*per {
		t.Fatalf("%d events stored, want %d", len(stored), goroutines*per)
	}
	for _, ev := range stored {
		if !seen[ev.ID] {
			t.Fatalf("stored event %s was never acknowledged", ev.ID)
		}
	}
}

func TestHandlersRunConcurrently(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	release := make(chan struct{})
	entered := make(chan string, 1)
	srv := startServer(t, b, nil)
	srv.Handle("test.slow", func(ctx context.Context, body json.RawMessage) (any, error) {
		entered <- RemoteAddr(ctx)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var in map[string]string
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, err
		}
		return map[string]string{"echo": in["say"]}, nil
	})
	srv.Handle("test.fail", func(context.Context, json.RawMessage) (any, error) {
		return nil, errors.New("the frobnicator is offline")
	})
	srv.Handle("test.panic", func(context.Context, json.RawMessage) (any, error) {
		panic("bug")
	})
	c := dialClient(t, srv.RequestAddr(), testKey)

	slow := make(chan error, 1)
	var out map[string]string
	go func() { slow <- c.Call(ctx, "test.slow", map[string]string{"say": "hi"}, &out) }()
	if remote := <-entered; !strings.HasPrefix(remote, "127.0.0.1:") {
		t.Errorf("RemoteAddr = %q", remote)
	}
	// While test.slow holds a worker, publishes on the same connection go on.
	for i := range 20 {
		if _, err := c.Publish(ctx, "app/fast", map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-slow:
		t.Fatalf("slow call returned early: %v", err)
	default:
	}
	close(release)
	if err := <-slow; err != nil || out["echo"] != "hi" {
		t.Fatalf("slow call: %v %v", err, out)
	}
	err := c.Call(ctx, "test.fail", nil, nil)
	var re *RemoteError
	if !errors.As(err, &re) || re.Message != "the frobnicator is offline" || re.Code != CodeFailed {
		t.Fatalf("failing handler: %#v", err)
	}
	if err := c.Call(ctx, "test.panic", nil, nil); err == nil || err.Error() != "test.panic: internal error" {
		t.Fatalf("panicking handler: %v", err)
	}
	if err := c.Call(ctx, "ping", nil, nil); err != nil {
		t.Fatalf("after a handler panicked: %v", err)
	}
}

func TestClientRecoversFromTruncatedReply(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	// A master that dies while writing a reply leaves half a frame behind.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	dying := make(chan error, 1)
	go func() {
		dying <- fakeMaster(ctx, ln, func(raw net.Conn, pc *peerConn) error {
			frames, _, err := pc.readMsg(1 << 20)
			if err != nil {
				return err
			}
			reply := sealMsg(pc.sess, nil, zmtp.EncodeMsg(frames[0], []byte(statusOK), []byte(`{"time":"x"}`)))
			_, err = raw.Write(reply[:len(reply)-3])
			return err
		})
	}()

	dialed := make(chan error, 1)
	go func() {
		c, err := Dial(ctx, addr, testKey)
		if err == nil {
			err = c.Call(ctx, "ping", nil, nil)
			c.Close()
		}
		dialed <- err
	}()
	if err := <-dying; err != nil {
		t.Fatal(err)
	}
	// The real master comes back on the same address; the client's ping,
	// whose reply was cut, is answered by it.
	startServer(t, b, func(c *Config) { c.RequestEndpoint = "tcp://" + addr })
	select {
	case err := <-dialed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the client did not recover from a connection cut mid-frame")
	}
}

func TestEndpoint(t *testing.T) {
	cases := []struct {
		addr string
		want string
	}{
		{"master1", "tcp://master1:4506"},
		{"master1:5506", "tcp://master1:5506"},
		{"10.0.0.1", "tcp://10.0.0.1:4506"},
		{"::1", "tcp://[::1]:4506"},
		{"[::1]", "tcp://[::1]:4506"},
		{"[::1]:99", "tcp://[::1]:99"},
		{"tcp://h:1", "tcp://h:1"},
		{"ipc:///run/brine/req.ipc", "ipc:///run/brine/req.ipc"},
	}
	for _, c := range cases {
		if got := endpoint(c.addr, DefaultRequestPort); got != c.want {
			t.Errorf("endpoint(%q) = %q, want %q", c.addr, got, c.want)
		}
	}
}

func TestConnectionLostDuringCall(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	// A master that answers the ping, takes the next request and dies.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	took := make(chan error, 1)
	go func() {
		took <- fakeMaster(ctx, ln, func(raw net.Conn, pc *peerConn) error {
			ping, _, err := pc.readMsg(1 << 20)
			if err != nil {
				return err
			}
			if _, err := raw.Write(sealMsg(pc.sess, nil, zmtp.EncodeMsg(ping[0], []byte(statusOK), []byte(`{}`)))); err != nil {
				return err
			}
			_, _, err = pc.readMsg(1 << 20)
			return err
		})
	}()
	c := dialClient(t, addr, testKey)
	called := make(chan error, 1)
	go func() { called <- c.Call(ctx, "reactor.redrive", map[string]string{"id": "x"}, nil) }()
	if err := <-took; err != nil {
		t.Fatal(err)
	}
	// zmq4 reports the drop once it has reconnected.
	startServer(t, b, func(c *Config) { c.RequestEndpoint = "tcp://" + addr })
	select {
	case err := <-called:
		if !errors.Is(err, ErrConnLost) {
			t.Fatalf("call cut by a lost connection: %v, want ErrConnLost", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call cut by a lost connection never returned")
	}
	// Publishing, which is safe to re-send, goes on over the new connection.
	if _, err := c.Publish(ctx, "app/after", nil); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureKeyRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "master.key")
	keys := make(chan string, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := EnsureKey(path)
			if err != nil {
				t.Error(err)
			}
			keys <- string(k)
		}()
	}
	wg.Wait()
	close(keys)
	first := <-keys
	for k := range keys {
		if k != first {
			t.Fatalf("racing EnsureKey calls returned %q and %q", first, k)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("%d files next to the key, want only the key", len(entries))
	}
}

// fakeMaster accepts one request connection on ln, runs serve on it, then
// closes the connection and the listener (so that a real master can bind
// the address as soon as it returns).
func fakeMaster(ctx context.Context, ln net.Listener, serve func(net.Conn, *peerConn) error) error {
	defer ln.Close()
	raw, err := ln.Accept()
	if err != nil {
		return err
	}
	defer raw.Close()
	pc, err := handshake(ctx, raw, nil, 0, curve.NewServer(MasterKeys(testKey), nil), zmq4.Router, true, time.Second)
	if err != nil {
		return err
	}
	pc.start(1, 1<<20)
	defer pc.close()
	return serve(raw, pc)
}

func TestDialGivesUpWithItsContext(t *testing.T) {
	// Something that accepts connections but never speaks ZMTP.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Dial(ctx, ln.Addr().String(), testKey)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not reachable") {
			t.Fatalf("Dial to a silent peer: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Dial to a silent peer did not return when its context ended")
	}
}

func TestShutdownNotHeldByARequesterThatStoppedReading(t *testing.T) {
	b := openBus(t)
	srv := startServer(t, b, nil)
	raw, err := net.Dial("tcp", srv.RequestAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	pc, err := handshake(context.Background(), raw, nil, 0, operatorSec(testKey)(), zmq4.Dealer, false, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Requests whose error replies (naming the method) add up to far more
	// than the socket buffers hold; this peer never reads them.
	method := strings.Repeat("m", 60<<10)
	body := []byte("{}")
	for range 300 {
		req := sealMsg(pc.sess, nil, zmtp.EncodeMsg([]byte("c"), []byte(method), body, []byte(Sign(testKey, method, body))))
		if _, err := raw.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // let the replies pile up
	start := time.Now()
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > flushTimeout+5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
}
