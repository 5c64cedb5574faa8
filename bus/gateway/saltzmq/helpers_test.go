package saltzmq

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// testLog is a logger for servers under test: warnings and worse, through t.
func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// listenLocal listens on a free loopback port.
func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serve runs serve(ctx, ln) until the test ends, then waits for it.
func serve(t *testing.T, run func(context.Context, net.Listener) error) string {
	t.Helper()
	ln := listenLocal(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return within 10 s of its context ending")
		}
	})
	return ln.Addr().String()
}

// rawPeer is a hand-made ZMTP peer, for what libraries will not send.
type rawPeer struct {
	t *testing.T
	*conn
}

// dialRaw connects to addr and does the NULL handshake as a sock socket
// speaking ZMTP 3.minor.
func dialRaw(t *testing.T, addr, sock string, minor byte) *rawPeer {
	t.Helper()
	p := dialOnly(t, addr)
	g := greeting(minor)
	p.write(append(g[:], zmtp.EncodeCommand("READY", zmtp.Properties("Socket-Type", sock, "Identity", ""))...))
	var pg [GreetingSize]byte
	p.raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(p.br, pg[:]); err != nil {
		t.Fatalf("greeting from %s: %v", addr, err)
	}
	if err := checkGreeting(pg[:]); err != nil {
		t.Fatal(err)
	}
	frames, cmd, err := p.readMsg(maxHandshakeFrame, 1, nil)
	if err != nil || !cmd {
		t.Fatalf("READY from %s: %q %v", addr, frames, err)
	}
	if _, err := readyType(frames[0]); err != nil {
		t.Fatal(err)
	}
	p.raw.SetReadDeadline(time.Time{})
	return p
}

// dialOnly connects without a handshake.
func dialOnly(t *testing.T, addr string) *rawPeer {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawPeer{t: t, conn: &conn{raw: c, br: bufio.NewReader(c), remote: addr}}
}

func (p *rawPeer) write(b []byte) {
	p.t.Helper()
	if _, err := p.raw.Write(b); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

func (p *rawPeer) send(frames ...[]byte) { p.t.Helper(); p.write(zmtp.EncodeMsg(frames...)) }

// recv reads the next message or command within 5 s.
func (p *rawPeer) recv() ([][]byte, bool) {
	p.t.Helper()
	p.raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	frames, cmd, err := p.readMsg(1<<30, 100, nil)
	if err != nil {
		p.t.Fatalf("recv: %v", err)
	}
	return frames, cmd
}

// closedWithin reports whether the other end closes the connection within
// d, discarding what it sends meanwhile.
func (p *rawPeer) closedWithin(d time.Duration) bool {
	p.raw.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, p.br)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// subscribedTo counts the subscribers with a subscription to topic.
func (p *Publisher) subscribedTo(topic string) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	n := 0
	for s := range p.subs {
		s.smu.RLock()
		if _, ok := s.subs[topic]; ok {
			n++
		}
		s.smu.RUnlock()
	}
	return n
}
