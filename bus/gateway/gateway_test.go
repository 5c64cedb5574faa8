package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/zmtp"
	"github.com/brinehq/brine/bus/natsbus"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openBus(t testing.TB) *natsbus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatalf("open bus: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// running is a Server started by startServer.
type running struct {
	*Server
	stop func() error
}

func startServer(t testing.TB, b bus.Bus, mod func(*Config)) *running {
	t.Helper()
	return startServerLog(t, b, mod, quiet)
}

// startServerLog is startServer with the server's log going to log.
func startServerLog(t testing.TB, b bus.Bus, mod func(*Config), log *slog.Logger) *running {
	t.Helper()
	cfg := Config{
		Key:             testKey,
		PublishEndpoint: "tcp://127.0.0.1:0",
		RequestEndpoint: "tcp://127.0.0.1:0",
	}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg, b, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- srv.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-errc:
			case <-time.After(30 * time.Second):
				runErr = errors.New("Run did not return within 30s of its context ending")
			}
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return &running{Server: srv, stop: stop}
}

func dialClient(t testing.TB, addr string, key []byte) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, key)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testContext bounds a test; generous, because the race detector on a
// busy 2-core machine slows the bulk tests tenfold.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// waitWatchers waits until n watchers have subscribed on srv, so that a test
// publishing next knows they are live.
func waitWatchers(t testing.TB, srv *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		subscribed := 0
		srv.wmu.RLock()
		for w := range srv.watchers {
			if len(w.subscriptions()) > 0 {
				subscribed++
			}
		}
		srv.wmu.RUnlock()
		if subscribed >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %d watchers subscribed after 10s", n)
}

// storedEvents reads every stored event matching pattern back from the bus.
func storedEvents(t testing.TB, b bus.Bus, pattern string, want int) []*bus.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []*bus.Event
	enough := make(chan struct{})
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: pattern, Since: bus.Since{Time: time.Unix(0, 0)}}, func(ev *bus.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
		if len(got) == want {
			close(enough)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	select {
	case <-enough:
	case <-ctx.Done():
	}
	// Anything beyond want would show up now.
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	return append([]*bus.Event(nil), got...)
}

// collector gathers what a Watch delivers.
type collector struct {
	mu     sync.Mutex
	events []*bus.Event
	notify chan struct{}
}

func newCollector() *collector { return &collector{notify: make(chan struct{}, 1)} }

func (c *collector) add(ev *bus.Event) error {
	c.mu.Lock()
	c.events = append(c.events, ev)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return nil
}

func (c *collector) snapshot() []*bus.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*bus.Event(nil), c.events...)
}

// waitFor waits until cond holds for the collected events.
func (c *collector) waitFor(t testing.TB, d time.Duration, what string, cond func([]*bus.Event) bool) []*bus.Event {
	t.Helper()
	deadline := time.After(d)
	for {
		evs := c.snapshot()
		if cond(evs) {
			return evs
		}
		select {
		case <-c.notify:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; have %d events", what, len(evs))
		}
	}
}

func atLeast(n int) func([]*bus.Event) bool {
	return func(evs []*bus.Event) bool { return len(evs) >= n }
}

// startWatch runs c.Watch in the background; the returned function stops it
// and returns Watch's error.
func startWatch(t testing.TB, c *Client, pubAddr, pattern string, since bus.Since, col *collector) func() error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Watch(ctx, pubAddr, pattern, since, col.add) }()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() {
			cancel()
			err = <-errc
			if errors.Is(err, context.Canceled) {
				err = nil
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// rawConn is a connection driven frame by frame, as a foreign ZeroMQ
// peer's would be.
type rawConn struct{ pc *peerConn }

// Recv reads the next message.
func (r *rawConn) Recv() (zmq4.Msg, error) {
	frames, _, err := r.pc.readMsg(maxReply)
	return zmq4.Msg{Frames: frames}, err
}

// Close drops the connection.
func (r *rawConn) Close() error { r.pc.close(); return nil }

// operatorSec is the CURVE client of an operator holding key.
func operatorSec(key []byte) func() zmq4.Security {
	return func() zmq4.Security { return curve.NewClient(OperatorKeys(key), MasterKeys(key).Public) }
}

// rawSub subscribes to prefix as a bare SUB holding key would, and never
// reads unless asked.
func rawSub(t testing.TB, addr string, key []byte, prefix string) (*rawConn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := connect(ctx, endpoint(addr, DefaultPublishPort), operatorSec(key), zmq4.Sub, clientQueue)
	if err != nil {
		return nil, operatorAuth(err)
	}
	pc.send(zmtp.EncodeMsg(append([]byte{1}, prefix...)))
	t.Cleanup(pc.close)
	return &rawConn{pc}, nil
}
