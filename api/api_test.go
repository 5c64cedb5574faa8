package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
)

// Test credentials; long enough for MinTokenLen.
const (
	testToken  = "tok-0123456789abcdef"
	testSecret = "github-secret-0123456789"
	brineSec   = "brine-secret-0123456789"
)

// fixture is a running API on a real embedded JetStream bus.
type fixture struct {
	t     *testing.T
	bus   *natsbus.Bus
	srv   *Server
	url   string
	stop  func()
	clock *testClock // the server's clock (Config.Now)
}

// testClock follows the real clock from an offset tests move.
type testClock struct {
	offset atomic.Int64 // nanoseconds
}

func (c *testClock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

func testConfig() Config {
	return Config{
		Tokens: [][]byte{[]byte(testToken)},
		Hooks: []Hook{
			{Path: "github/*", Auth: AuthHMAC, Secret: []byte(testSecret), SignatureHeader: GitHubSignatureHeader},
			{Path: "signed/*", Auth: AuthHMAC, Secret: []byte(brineSec), SignatureHeader: BrineSignatureHeader},
			{Path: "ci/**", Auth: AuthToken},
			{Path: "public/ping", Auth: AuthNone},
		},
		PublicHealth: true,
	}
}

func openBus(t *testing.T, dir string) *natsbus.Bus {
	t.Helper()
	b, err := natsbus.Open(context.Background(), natsbus.Config{Dir: dir, Logger: quiet()})
	if err != nil {
		t.Fatalf("open bus: %v", err)
	}
	return b
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// start runs a Server for cfg on b (a new bus when nil) on a real
// loopback listener.
func start(t *testing.T, cfg Config, b *natsbus.Bus) *fixture {
	t.Helper()
	return startLogged(t, cfg, b, quiet())
}

// startLogged is start with the server logging to log.
func startLogged(t *testing.T, cfg Config, b *natsbus.Bus, log *slog.Logger) *fixture {
	t.Helper()
	return startClocked(t, cfg, b, log, nil)
}

// startClocked is startLogged with the server on clock (a new one when
// nil). The clock is moved SignatureMaxAhead and a second on once the
// server answers, past the start-up time in which X-Brine-Signatures are
// refused, so that tests sign with f.clock.Now().
func startClocked(t *testing.T, cfg Config, b *natsbus.Bus, log *slog.Logger, clock *testClock) *fixture {
	t.Helper()
	if clock == nil {
		clock = new(testClock)
	}
	cfg.Now = clock.Now
	if b == nil {
		b = openBus(t, t.TempDir())
		t.Cleanup(func() { b.Close() })
	}
	srv, err := New(cfg, b, log)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln) }()
	f := &fixture{t: t, bus: b, srv: srv, url: "http://" + ln.Addr().String(), clock: clock}
	var once bool
	f.stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("Run did not return within 15s of its context ending")
		}
	}
	t.Cleanup(f.stop)
	// Run subscribes for its metrics before it serves: once it answers,
	// every event published from now on is counted.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(f.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			clock.advance(SignatureMaxAhead + time.Second)
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not answer: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// do sends a request and returns the status and the decoded JSON body.
func (f *fixture) do(method, path string, body []byte, header map[string]string) (int, map[string]any) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.url+path, bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v any
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		if err := json.Unmarshal(raw, &v); err != nil {
			f.t.Errorf("%s %s: response is not JSON: %v: %s", method, path, err, raw)
		}
	}
	out, _ := v.(map[string]any) // lists (GET /jobs) come back as nil
	return resp.StatusCode, out
}

// lastSeq is the newest log position: unchanged when nothing was stored.
func (f *fixture) lastSeq() uint64 {
	f.t.Helper()
	seq, err := f.bus.LastSeq(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return seq
}

// event reads the stored event with id from the log.
func (f *fixture) event(id string) *bus.Event {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan *bus.Event, 1)
	sub, err := f.bus.Subscribe(ctx, bus.SubscribeOptions{Since: bus.Since{AfterSeq: 0, Time: time.Unix(1, 0)}}, func(ev *bus.Event) {
		if ev.ID == id {
			select {
			case got <- ev:
			default:
			}
		}
	})
	if err != nil {
		f.t.Fatal(err)
	}
	defer sub.Stop()
	select {
	case ev := <-got:
		return ev
	case <-ctx.Done():
		f.t.Fatalf("event %s is not in the log", id)
		return nil
	}
}

// sseReader reads a text/event-stream line by line.
type sseReader struct {
	t    *testing.T
	resp *http.Response
	br   *bufio.Reader
}

// openStream starts GET path and fails the test unless it is answered 200.
func (f *fixture) openStream(ctx context.Context, path string, header map[string]string) *sseReader {
	f.t.Helper()
	r, err := f.dialStream(ctx, path, header)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// dialStream starts GET path; it may run outside the test's goroutine.
func (f *fixture) dialStream(ctx context.Context, path string, header map[string]string) (*sseReader, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+path, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: status %d: %s", path, resp.StatusCode, b)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return &sseReader{t: f.t, resp: resp, br: bufio.NewReader(resp.Body)}, nil
}

// sseEvent is one dispatched event block.
type sseEvent struct {
	ID, Tag, Data string
}

// next returns the next event block, skipping comments and retry lines.
func (r *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if ev.Data != "" {
				return ev, nil
			}
		case strings.HasPrefix(line, "id: "):
			ev.ID = line[4:]
		case strings.HasPrefix(line, "tag: "):
			ev.Tag = line[5:]
		case strings.HasPrefix(line, "data: "):
			ev.Data = line[6:]
		}
	}
}

func publish(t *testing.T, b bus.Bus, tag string, data map[string]any) *bus.Event {
	t.Helper()
	ev, err := bus.NewEvent(tag, data, bus.Origin{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}
