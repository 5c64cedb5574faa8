package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// logBuffer collects a server's log lines for a test to read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the lines holding every one of subs.
func (l *logBuffer) lines(subs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range strings.Split(l.b.String(), "\n") {
		for _, s := range subs {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// dialRaw is a TCP connection to addr from the loopback address from
// (127.0.0.x), which says nothing unless the test makes it.
func dialRaw(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// nullConn completes the NULL handshake on the request endpoint, as an
// agent fetching the master's key does, and is then driven by the test.
func nullConn(t *testing.T, addr string) (*peerConn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	pc, err := connect(ctx, "tcp://"+addr, func() zmq4.Security { return null.Security() }, zmq4.Dealer, 16)
	if err != nil {
		return nil, err
	}
	t.Cleanup(pc.close)
	return pc, nil
}

// curveConn completes a CURVE handshake on addr with keys.
func curveConn(t *testing.T, addr string, keys curve.KeyPair, typ zmq4.SocketType) *peerConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := connect(ctx, "tcp://"+addr, func() zmq4.Security { return curve.NewClient(keys, MasterKeys(testKey).Public) }, typ, 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.close)
	return pc
}

// closedWithin reports whether the master closes c within d (reading and
// discarding what it sends).
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestEmptyFrameFloodDropped: a stranger completes the NULL handshake, then
// streams empty frames flagged MORE (2 bytes each), which once grew the
// master by 1.4 GiB for 32 MiB sent. The master drops it after maxFrames,
// says so naming the peer, and its heap does not grow.
func TestEmptyFrameFloodDropped(t *testing.T) {
	b := openBus(t)
	var logs logBuffer
	srv := startServerLog(t, b, nil, logs.logger())
	pc, err := nullConn(t, srv.RequestAddr())
	if err != nil {
		t.Fatal(err)
	}
	before := heapInuse()

	const flood = 32 << 20
	chunk := bytes.Repeat([]byte{zmtp.FlagMore, 0}, 32<<10)
	pc.raw.SetWriteDeadline(time.Now().Add(time.Minute))
	sent := 0
	var werr error
	for sent < flood && werr == nil {
		var n int
		n, werr = pc.raw.Write(chunk)
		sent += n
	}
	// Measured before the connection is closed here: the old master still
	// held every frame then.
	after := heapInuse()
	growth := int64(after) - int64(before)
	t.Logf("sent %d bytes of empty frames (write error: %v); master heap in use %d → %d MiB (%+d KiB)",
		sent, werr, before>>20, after>>20, growth>>10)

	if werr == nil {
		t.Errorf("the master read all %d bytes of empty frames without dropping the connection", sent)
	}
	if !closedWithin(pc.raw, 10*time.Second) {
		t.Error("connection still open")
	}
	if growth > 64<<20 {
		t.Errorf("master heap grew by %d MiB for %d bytes sent", growth>>20, sent)
	}
	if got := logs.lines("level=WARN", "requester dropped", "remote="+pc.raw.LocalAddr().String(), "more than 8"); len(got) != 1 {
		t.Errorf("want one WARN naming the peer and the frame bound, got %q", logs.lines("dropped"))
	}
}

// TestUnauthenticatedTimeouts: a NULL connection is closed after
// BootstrapIdle without a request, and after BootstrapLifetime however
// busy; a connection still in its handshake after HandshakeTimeout;
// authenticated ones (operator, agent, watcher) idle through all of these.
func TestUnauthenticatedTimeouts(t *testing.T) {
	const (
		idle      = 300 * time.Millisecond
		lifetime  = 1500 * time.Millisecond
		handshake = 500 * time.Millisecond
	)
	b := openBus(t)
	var logs logBuffer
	srv := startServerLog(t, b, func(c *Config) {
		c.BootstrapIdle, c.BootstrapLifetime, c.HandshakeTimeout = idle, lifetime, handshake
	}, logs.logger())

	// Authenticated connections, idle from now on.
	op := curveConn(t, srv.RequestAddr(), OperatorKeys(testKey), zmq4.Dealer)
	agentKeys, err := curve.GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	agent := curveConn(t, srv.RequestAddr(), agentKeys, zmq4.Dealer)
	// An agent's connection is one once it asks something (its hello).
	agent.send(zmtp.EncodeMsg([]byte("h"), []byte("agent.hello"), []byte("{}")))
	agent.raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := agent.readMsg(maxReply); err != nil {
		t.Fatalf("agent's first request: %v", err)
	}
	watcher, err := rawSub(t, srv.PublishAddr(), testKey, "app/")
	if err != nil {
		t.Fatal(err)
	}
	waitWatchers(t, srv.Server, 1)

	tests := []struct {
		name     string
		run      func(t *testing.T) (start time.Time, c net.Conn)
		min, max time.Duration // when the master closes it, from start
	}{
		{"NULL, silent after the handshake", func(t *testing.T) (time.Time, net.Conn) {
			pc, err := nullConn(t, srv.RequestAddr())
			if err != nil {
				t.Fatal(err)
			}
			return time.Now(), pc.raw
		}, idle / 2, idle + 3*time.Second},
		{"NULL, asking for the key every 100 ms", func(t *testing.T) (time.Time, net.Conn) {
			start := time.Now()
			pc, err := nullConn(t, srv.RequestAddr())
			if err != nil {
				t.Fatal(err)
			}
			asked := 0
			for {
				pc.send(zmtp.EncodeMsg([]byte("k"), []byte(MethodMasterKey), []byte("{}")))
				pc.raw.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, _, err := pc.readMsg(maxReply); err != nil {
					break
				}
				asked++
				time.Sleep(100 * time.Millisecond)
			}
			if asked < 5 {
				t.Errorf("answered only %d times before being closed", asked)
			}
			return start, pc.raw
		}, lifetime - 200*time.Millisecond, lifetime + 3*time.Second},
		{"CURVE with a fresh key, never asking anything", func(t *testing.T) (time.Time, net.Conn) {
			kp, err := curve.GenerateKeyPair()
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			return start, curveConn(t, srv.RequestAddr(), kp, zmq4.Dealer).raw
		}, handshake / 2, handshake + 3*time.Second},
		{"greeting sent, handshake not finished", func(t *testing.T) (time.Time, net.Conn) {
			c := dialRaw(t, "127.0.0.1", srv.RequestAddr())
			start := time.Now()
			greeting := make([]byte, zmtp.GreetingSize)
			greeting[0], greeting[9], greeting[10] = 0xff, 0x7f, 3
			copy(greeting[12:], "CURVE")
			// A byte at a time, each within the timeout: only a bound from
			// accept ends it.
			for _, g := range greeting[:zmtp.GreetingSize-1] {
				if _, err := c.Write([]byte{g}); err != nil {
					break
				}
				time.Sleep(handshake / 20)
			}
			return start, c
		}, handshake / 2, handshake + 3*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, c := tt.run(t)
			if !closedWithin(c, tt.max) {
				t.Fatalf("still open after %s", tt.max)
			}
			if took := time.Since(start); took < tt.min || took > tt.max {
				t.Errorf("closed after %s, want between %s and %s", took, tt.min, tt.max)
			}
		})
	}
	if len(logs.lines("unauthenticated connection closed")) < 2 {
		t.Errorf("closings not logged: %q", logs.lines("closed"))
	}

	// Long past every bound above, the authenticated connections still
	// work, on the same connections.
	time.Sleep(lifetime)
	op.send(zmtp.EncodeMsg(signed(testKey, "p", "ping", []byte("{}"))...))
	op.raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if msg, _, err := op.readMsg(maxReply); err != nil {
		t.Errorf("operator connection cut: %v", err)
	} else {
		checkReply(t, msg, "p", statusOK, "")
	}
	agent.send(zmtp.EncodeMsg([]byte("a"), []byte("agent.nothing"), []byte("{}")))
	agent.raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if msg, _, err := agent.readMsg(maxReply); err != nil {
		t.Errorf("agent connection cut: %v", err)
	} else {
		checkReply(t, msg, "a", statusError, CodeUnknown)
	}
	ev, err := bus.NewEvent("app/late", nil, bus.Origin{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(testContext(t), ev); err != nil {
		t.Fatal(err)
	}
	watcher.pc.raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if msg, err := watcher.Recv(); err != nil || len(msg.Frames) == 0 || string(msg.Frames[0]) != "app/late" {
		t.Errorf("watcher: %q, %v; want app/late", msg.Frames, err)
	}
}

// TestUnauthenticatedCaps: connections that have not authenticated are
// capped per address and in total; one over a cap is closed at once, with
// one log line however many there are; authenticated ones do not count.
func TestUnauthenticatedCaps(t *testing.T) {
	const perAddr, total = 3, 5
	b := openBus(t)
	var logs logBuffer
	srv := startServerLog(t, b, func(c *Config) {
		c.MaxUnauthenticatedPerAddr, c.MaxUnauthenticated = perAddr, total
		// Long enough that no connection ends by itself during the test.
		c.HandshakeTimeout, c.BootstrapIdle, c.BootstrapLifetime = time.Minute, time.Minute, time.Minute
	}, logs.logger())
	addr := srv.RequestAddr()

	waitCounts := func(wantTotal int, from string, wantFrom int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, m := srv.unauthReq.counts(from)
			if n == wantTotal && m == wantFrom {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("unauthenticated: %d in total, %d from %s; want %d and %d", n, m, from, wantTotal, wantFrom)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	refused := func(c net.Conn) bool { return closedWithin(c, 2*time.Second) }
	held := func(c net.Conn) bool { return !closedWithin(c, 100*time.Millisecond) }

	// perAddr from one address, in their handshake: the next is refused.
	var first []net.Conn
	for range perAddr {
		first = append(first, dialRaw(t, "127.0.0.1", addr))
	}
	waitCounts(perAddr, "127.0.0.1", perAddr)
	if c := dialRaw(t, "127.0.0.1", addr); !refused(c) {
		t.Errorf("connection %d from one address admitted", perAddr+1)
	}
	// Other addresses fill the total; then everyone is refused.
	for range total - perAddr {
		dialRaw(t, "127.0.0.2", addr)
	}
	waitCounts(total, "127.0.0.2", total-perAddr)
	if c := dialRaw(t, "127.0.0.3", addr); !refused(c) {
		t.Errorf("connection %d in total admitted", total+1)
	}
	// Each endpoint has its own count: a full request endpoint does not
	// keep subscribers out (nor a flood of subscribers agents).
	if c := dialRaw(t, "127.0.0.3", srv.PublishAddr()); !held(c) {
		t.Error("the publish endpoint refused a connection while only the request endpoint is full")
	}
	for _, c := range first {
		if !held(c) {
			t.Error("an admitted connection was closed")
		}
	}
	// A flood over the caps is logged once. Each is seen refused before
	// a place is freed below: one the server had not yet accepted would
	// take it.
	var flood []net.Conn
	for range 20 {
		flood = append(flood, dialRaw(t, "127.0.0.1", addr))
	}
	for i, c := range flood {
		if !refused(c) {
			t.Errorf("flood connection %d admitted", i)
		}
	}
	if got := logs.lines("level=WARN", "connection refused", "too many unauthenticated"); len(got) != 1 {
		t.Errorf("%d log lines for the refusals, want 1: %q", len(got), got)
	}

	// A closed one frees its place.
	first[0].Close()
	waitCounts(total-1, "127.0.0.1", perAddr-1)
	again := dialRaw(t, "127.0.0.1", addr)
	if !held(again) {
		t.Error("refused after a place was freed")
	}
	waitCounts(total, "127.0.0.1", perAddr)
	for _, c := range first[1:] {
		c.Close()
	}
	waitCounts(total-perAddr+1, "127.0.0.1", 1)

	// NULL connections stay unauthenticated: perAddr-1 more fill the
	// address, and the next cannot even finish its handshake.
	var nulls []*peerConn
	for range perAddr - 1 {
		pc, err := nullConn(t, addr)
		if err != nil {
			t.Fatal(err)
		}
		nulls = append(nulls, pc)
	}
	waitCounts(total, "127.0.0.1", perAddr)
	if _, err := nullConn(t, addr); err == nil {
		t.Error("NULL connection over the cap completed its handshake")
	}

	// Authenticated connections hold no place: with two left in total,
	// more operators, an agent and a watcher than either cap connect from
	// one address, and the count is as before.
	again.Close()
	for _, pc := range nulls[1:] {
		pc.close()
	}
	waitCounts(total-perAddr+1, "127.0.0.1", 1)
	for range 2 * total {
		curveConn(t, addr, OperatorKeys(testKey), zmq4.Dealer)
	}
	agentKeys, err := curve.GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	curveConn(t, addr, agentKeys, zmq4.Dealer)
	if _, err := rawSub(t, srv.PublishAddr(), testKey, ""); err != nil {
		t.Fatal(err)
	}
	waitCounts(total-perAddr+1, "127.0.0.1", 1)
}
