package saltzmq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
	"github.com/go-zeromq/zmq4"
)

// echo answers "re:" + payload, authenticates a peer that sends "auth",
// fails on "fail" and panics on "panic".
func echo(ctx context.Context, remote string, payload []byte) ([]byte, error) {
	switch string(payload) {
	case "auth":
		Authenticate(ctx)
	case "fail":
		return nil, errors.New("refused")
	case "panic":
		panic("handler bug")
	}
	if remote == "" {
		return nil, errors.New("no remote address")
	}
	return append([]byte("re:"), payload...), nil
}

func startRequestServer(t *testing.T, cfg RequestConfig) (*RequestServer, string) {
	t.Helper()
	if cfg.Handler == nil {
		cfg.Handler = echo
	}
	s, err := NewRequestServer(cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	return s, serve(t, s.Serve)
}

func TestNewRequestServerNeedsHandler(t *testing.T) {
	if _, err := NewRequestServer(RequestConfig{}, nil); err == nil {
		t.Fatal("NewRequestServer without a handler succeeded")
	}
}

// TestRequestServerZMQ4 is a REQ socket of another ZMTP implementation
// (go-zeromq) asking in turn.
func TestRequestServerZMQ4(t *testing.T) {
	_, addr := startRequestServer(t, RequestConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := zmq4.NewReq(ctx)
	defer req.Close()
	if err := req.Dial("tcp://" + addr); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		payload := fmt.Appendf(nil, "request %d", i)
		if err := req.Send(zmq4.NewMsg(payload)); err != nil {
			t.Fatal(err)
		}
		wantFrames(t, recvWithin(t, req), "re:"+string(payload))
	}
}

func TestRequestServerRaw(t *testing.T) {
	_, addr := startRequestServer(t, RequestConfig{})
	p := dialRaw(t, addr, "REQ", 1)
	tests := []struct {
		name    string
		send    []byte
		want    [][]byte
		wantCmd bool
	}{
		{"REQ", zmtp.EncodeMsg(nil, []byte("hi")), [][]byte{{}, []byte("re:hi")}, false},
		{"empty payload", zmtp.EncodeMsg(nil, nil), [][]byte{{}, []byte("re:")}, false},
		{"REQ_CORRELATE", zmtp.EncodeMsg([]byte{0, 0, 0, 7}, nil, []byte("x")), [][]byte{{0, 0, 0, 7}, {}, []byte("re:x")}, false},
		{"large", zmtp.EncodeMsg(nil, bytes.Repeat([]byte("y"), 1<<20)), [][]byte{{}, append([]byte("re:"), bytes.Repeat([]byte("y"), 1<<20)...)}, false},
		{"PING", zmtp.EncodeCommand("PING", []byte{0, 1, 'c'}), [][]byte{[]byte("\x04PONGc")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.write(tt.send)
			got, cmd := p.recv()
			if cmd != tt.wantCmd || len(got) != len(tt.want) {
				t.Fatalf("got %d frames (command %v), want %d (command %v)", len(got), cmd, len(tt.want), tt.wantCmd)
			}
			for i := range got {
				if !bytes.Equal(got[i], tt.want[i]) {
					t.Fatalf("frame %d: %.40q, want %.40q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestRequestServerRefusals: what the server closes the connection on.
func TestRequestServerRefusals(t *testing.T) {
	_, addr := startRequestServer(t, RequestConfig{MaxMessageSize: 1 << 10})
	tests := []struct {
		name string
		run  func(t *testing.T) *rawPeer
	}{
		{"PUB socket", func(t *testing.T) *rawPeer {
			p := dialOnly(t, addr)
			g := greeting(0)
			p.write(append(g[:], zmtp.EncodeCommand("READY", zmtp.Properties("Socket-Type", "PUB"))...))
			return p
		}},
		{"CURVE greeting", func(t *testing.T) *rawPeer {
			p := dialOnly(t, addr)
			p.write(peerGreeting(0, "CURVE"))
			return p
		}},
		{"not ZMTP", func(t *testing.T) *rawPeer {
			p := dialOnly(t, addr)
			p.write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + strings.Repeat(" ", 64)))
			return p
		}},
		{"message before READY", func(t *testing.T) *rawPeer {
			p := dialOnly(t, addr)
			g := greeting(0)
			p.write(append(g[:], zmtp.EncodeMsg(nil, []byte("x"))...))
			return p
		}},
		{"no delimiter", func(t *testing.T) *rawPeer {
			p := dialRaw(t, addr, "DEALER", 0)
			p.send([]byte("hi"))
			return p
		}},
		{"two payload frames", func(t *testing.T) *rawPeer {
			p := dialRaw(t, addr, "REQ", 0)
			p.send(nil, []byte("a"), []byte("b"))
			return p
		}},
		{"too large", func(t *testing.T) *rawPeer {
			p := dialRaw(t, addr, "REQ", 0)
			p.send(nil, make([]byte, 2<<10))
			return p
		}},
		{"handler error", func(t *testing.T) *rawPeer {
			p := dialRaw(t, addr, "REQ", 0)
			p.send(nil, []byte("fail"))
			return p
		}},
		{"handler panic", func(t *testing.T) *rawPeer {
			p := dialRaw(t, addr, "REQ", 0)
			p.send(nil, []byte("panic"))
			return p
		}},
		{"ERROR command", func(t *testing.T) *rawPeer {
			p := dialRaw(t, addr, "REQ", 0)
			p.write(zmtp.EncodeCommand("ERROR", []byte("\x03bye")))
			return p
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.run(t)
			if !p.closedWithin(5 * time.Second) {
				t.Fatal("the server kept the connection")
			}
		})
	}
}

func TestRequestServerTimeouts(t *testing.T) {
	_, addr := startRequestServer(t, RequestConfig{HandshakeTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	t.Run("handshake", func(t *testing.T) {
		p := dialOnly(t, addr)
		start := time.Now()
		if !p.closedWithin(5 * time.Second) {
			t.Fatal("a silent connection was kept")
		}
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Fatalf("closed after %s, before the handshake timeout", d)
		}
	})
	t.Run("idle", func(t *testing.T) {
		p := dialRaw(t, addr, "REQ", 0)
		p.send(nil, []byte("hi"))
		p.recv()
		if !p.closedWithin(5 * time.Second) {
			t.Fatal("an idle unauthenticated connection was kept")
		}
	})
	t.Run("authenticated", func(t *testing.T) {
		p := dialRaw(t, addr, "REQ", 0)
		p.send(nil, []byte("auth"))
		p.recv()
		if p.closedWithin(600 * time.Millisecond) {
			t.Fatal("an authenticated connection was closed for being idle")
		}
		p.send(nil, []byte("again"))
		if got, _ := p.recv(); string(got[1]) != "re:again" {
			t.Fatalf("reply %q", got)
		}
	})
}

// TestRequestServerCaps: connections not yet authenticated are capped per
// address; one that authenticates frees its place.
func TestRequestServerCaps(t *testing.T) {
	s, addr := startRequestServer(t, RequestConfig{MaxUnauthenticatedPerAddr: 2})
	a := dialRaw(t, addr, "REQ", 0)
	dialRaw(t, addr, "REQ", 0)
	if !dialOnly(t, addr).closedWithin(5 * time.Second) {
		t.Fatal("a third unauthenticated connection from one address was served")
	}
	a.send(nil, []byte("auth"))
	a.recv()
	eventually(t, "the place to be given back", func() bool { return s.lim.count() == 1 })
	c := dialRaw(t, addr, "REQ", 0)
	c.send(nil, []byte("hi"))
	if got, _ := c.recv(); string(got[1]) != "re:hi" {
		t.Fatalf("reply %q", got)
	}
}

// TestRequestServerBudget: requests read from unauthenticated connections
// share UnauthenticatedBytes; one that finds no room waits, then is
// dropped at its idle timeout.
func TestRequestServerBudget(t *testing.T) {
	release := make(chan struct{})
	var held atomic.Bool
	handler := func(ctx context.Context, remote string, payload []byte) ([]byte, error) {
		if bytes.HasPrefix(payload, []byte("hold")) {
			held.Store(true)
			<-release
		}
		return []byte("ok"), nil
	}
	_, addr := startRequestServer(t, RequestConfig{
		Handler: handler, MaxMessageSize: 1000, UnauthenticatedBytes: 1000, IdleTimeout: 300 * time.Millisecond,
	})
	a := dialRaw(t, addr, "REQ", 0)
	a.send(nil, append([]byte("hold"), make([]byte, 800)...))
	eventually(t, "the first request to be handled", held.Load)
	b := dialRaw(t, addr, "REQ", 0)
	b.send(nil, make([]byte, 800))
	if !b.closedWithin(5 * time.Second) {
		t.Fatal("a request over the budget was served")
	}
	close(release)
	if got, _ := a.recv(); string(got[1]) != "ok" {
		t.Fatalf("reply %q", got)
	}
}

// TestRequestServerShutdown: a request in progress when the context ends
// is still answered; Serve then returns.
func TestRequestServerShutdown(t *testing.T) {
	started := make(chan struct{})
	handler := func(ctx context.Context, remote string, payload []byte) ([]byte, error) {
		close(started)
		time.Sleep(200 * time.Millisecond)
		return []byte("late"), ctx.Err()
	}
	s, err := NewRequestServer(RequestConfig{Handler: handler}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	ln := listenLocal(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	p := dialRaw(t, ln.Addr().String(), "REQ", 0)
	p.send(nil, []byte("x"))
	<-started
	cancel()
	if got, _ := p.recv(); string(got[1]) != "late" {
		t.Fatalf("reply %q", got)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if n := s.Conns(); n != 0 {
		t.Fatalf("%d connections left", n)
	}
}
