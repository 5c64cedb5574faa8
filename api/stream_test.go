package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/syncbuf"
)

func TestStreamFraming(t *testing.T) {
	f := start(t, testConfig(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url+"/events?token="+testToken, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	if err != nil || first != "retry: 400\n" {
		t.Fatalf("first line %q (%v), want salt-api's retry: 400", first, err)
	}
	ev := publish(t, f.bus, "myco/x", map[string]any{"b": 1, "a": "é"})
	want := fmt.Sprintf("id: %s\ntag: myco/x\ndata: {\"tag\": \"myco/x\", \"data\": {\"_stamp\": \"%s\", \"a\": \"\\u00e9\", \"b\": 1}}\n\n",
		ev.ID, ev.Time.Format(bus.StampLayout))
	got := ""
	for len(got) < len(want) {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got += line
	}
	if got != want {
		t.Errorf("framed event\n got %q\nwant %q", got, want)
	}
}

func TestStreamAuth(t *testing.T) {
	f := start(t, testConfig(), nil)
	tests := []struct {
		name   string
		path   string
		header map[string]string
		want   int
	}{
		{"bearer", "/events", map[string]string{"Authorization": "Bearer " + testToken}, 200},
		{"X-Auth-Token", "/events", map[string]string{"X-Auth-Token": testToken}, 200},
		{"query token", "/events?token=" + testToken, nil, 200},
		{"query salt_token", "/events?salt_token=" + testToken, nil, 200},
		{"none", "/events", nil, 401},
		{"wrong", "/events?token=wrong-token-0123456789", nil, 403},
		{"bad Last-Event-ID", "/events", map[string]string{"Authorization": "Bearer " + testToken, "Last-Event-ID": "42"}, 400},
		{"unknown Last-Event-ID", "/events", map[string]string{"Authorization": "Bearer " + testToken, "Last-Event-ID": "0193a3f4-1d2e-7c3b-8a4d-5e6f70819203"}, 410},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url+tc.path, nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.want {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, b)
			}
		})
	}
}

func TestStreamFilterAndResume(t *testing.T) {
	f := start(t, testConfig(), nil)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	var sent []*bus.Event
	for i := range 6 {
		tag := "myco/a"
		if i%2 == 1 {
			tag = "other/b"
		}
		sent = append(sent, publish(t, f.bus, tag, map[string]any{"i": i}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Resume after the first event, only myco/*: events 2 and 4.
	s := f.openStream(ctx, "/events?tag=myco/*", map[string]string{"Authorization": "Bearer " + testToken, "Last-Event-ID": sent[0].ID})
	for _, want := range []*bus.Event{sent[2], sent[4]} {
		got, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != want.ID || got.Tag != "myco/a" {
			t.Fatalf("got %s %s, want %s myco/a", got.ID, got.Tag, want.ID)
		}
	}
	live := publish(t, f.bus, "myco/live", nil)
	publish(t, f.bus, "other/live", nil)
	got, err := s.next()
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != live.ID {
		t.Fatalf("live event %s, want %s", got.ID, live.ID)
	}
	// last_event_id in the query does what the header does.
	q := f.openStream(ctx, "/events?last_event_id="+sent[4].ID, auth)
	for _, want := range []*bus.Event{sent[5], live} {
		got, err := q.next()
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != want.ID {
			t.Fatalf("got %s, want %s", got.ID, want.ID)
		}
	}
	body := f.waitMetric(`brine_api_events_out_total{prefix="myco/live"} 2`)
	for _, want := range []string{`brine_api_events_out_total{prefix="myco/a"} 2`, `brine_api_events_out_total{prefix="other/b"} 1`, `brine_api_stream_clients 2`} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, grepBrine(body))
		}
	}
}

// TestStreamResumeAcrossRestart follows the stream, stops the master (API
// and bus) mid-way, fires events while no API runs, reopens the bus on the
// same directory and resumes with Last-Event-ID: every event arrives once,
// in order.
func TestStreamResumeAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	b1 := openBus(t, dir)
	f1 := start(t, testConfig(), b1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	s := f1.openStream(ctx, "/events?tag=myco/restart", auth)
	var want []string
	for i := range 5 {
		want = append(want, publish(t, b1, "myco/restart", map[string]any{"i": i}).ID)
	}
	var got []string
	for range 3 {
		ev, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.ID)
	}
	last := got[len(got)-1]
	f1.stop()
	s.resp.Body.Close()
	for i := 5; i < 8; i++ {
		want = append(want, publish(t, b1, "myco/restart", map[string]any{"i": i}).ID)
	}
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}

	b2 := openBus(t, dir)
	defer b2.Close()
	f2 := start(t, testConfig(), b2)
	for i := 8; i < 10; i++ {
		want = append(want, publish(t, b2, "myco/restart", map[string]any{"i": i}).ID)
	}
	s2 := f2.openStream(ctx, "/events?tag=myco/restart", map[string]string{"Authorization": "Bearer " + testToken, "Last-Event-ID": last})
	for len(got) < len(want) {
		ev, err := s2.next()
		if err != nil {
			t.Fatalf("after %d events: %v", len(got), err)
		}
		got = append(got, ev.ID)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("resumed stream\n got %v\nwant %v", got, want)
	}
	// Nothing more: no duplicate follows.
	extra := publish(t, b2, "myco/restart", map[string]any{"i": "end"})
	ev, err := s2.next()
	if err != nil || ev.ID != extra.ID {
		t.Fatalf("next event %s (%v), want the new %s and no duplicate", ev.ID, err, extra.ID)
	}
}

// TestSlowStreamClientDropped: a client that reads too slowly is dropped
// with a final comment line, while a fast client gets every event and the
// publisher is never held up.
func TestSlowStreamClientDropped(t *testing.T) {
	cfg := testConfig()
	cfg.ClientQueue = 8
	cfg.StreamWait = time.Second
	cfg.WriteTimeout = 5 * time.Minute // only the full queue drops it, however slow the flood
	f := start(t, cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The slow client: a raw connection that reads nothing during the
	// flood (16 MB, more than the socket buffers hold).
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /events?tag=myco/flood HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", testToken)

	// The fast client reads all the time. Should a starved machine make it
	// fall behind too, it does what a client is told to: reconnect with
	// Last-Event-ID. Either way it ends with every event exactly once.
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	fast := f.openStream(ctx, "/events?tag=myco/flood", auth)
	const n = 1000
	type fastResult struct {
		ids     []string
		resumes int
		err     error
	}
	fastGot := make(chan fastResult, 1)
	go func() {
		var res fastResult
		for len(res.ids) < n {
			ev, err := fast.next()
			if err == nil {
				res.ids = append(res.ids, ev.ID)
				continue
			}
			if len(res.ids) == 0 || res.resumes == 10 {
				res.err = err
				break
			}
			res.resumes++
			fast.resp.Body.Close()
			if fast, res.err = f.dialStream(ctx, "/events?tag=myco/flood&last_event_id="+res.ids[len(res.ids)-1], auth); res.err != nil {
				break
			}
		}
		fastGot <- res
	}()
	// Let both subscriptions attach before the flood.
	time.Sleep(500 * time.Millisecond)
	pad := strings.Repeat("x", 16<<10)
	start := time.Now()
	for i := range n {
		publish(t, f.bus, "myco/flood", map[string]any{"i": i, "pad": pad})
	}
	t.Logf("published %d events of 16 KiB in %s", n, time.Since(start))

	// The slow client has not read a byte yet: its queue filled long ago.
	// Now it reads what it was sent, which ends with the drop notice.
	time.Sleep(2 * cfg.StreamWait)
	var slow strings.Builder
	buf := make([]byte, 64<<10)
	_ = conn.SetReadDeadline(time.Now().Add(120 * time.Second))
	for !strings.Contains(slow.String(), DroppedComment) {
		k, err := conn.Read(buf)
		slow.Write(buf[:k])
		if err != nil {
			t.Logf("slow client read: %v", err)
			break
		}
	}
	if !strings.Contains(slow.String(), DroppedComment) {
		tail := slow.String()[max(0, slow.Len()-300):]
		t.Fatalf("slow client got %d bytes without the dropped comment; it ends %q", slow.Len(), tail)
	}
	res := <-fastGot
	seen := map[string]bool{}
	for _, id := range res.ids {
		if seen[id] {
			t.Errorf("fast client got %s twice", id)
		}
		seen[id] = true
	}
	if len(res.ids) != n || res.err != nil {
		t.Errorf("fast client got %d events (%d resumes, %v), want %d", len(res.ids), res.resumes, res.err, n)
	}
	if res.resumes > 0 {
		t.Logf("the fast client was dropped and resumed %d times (a starved machine)", res.resumes)
	}
	status, _ := f.do(http.MethodGet, "/healthz", nil, nil)
	if status != 200 {
		t.Errorf("healthz %d after the drop", status)
	}
}

func TestStreamHeartbeat(t *testing.T) {
	cfg := testConfig()
	cfg.Heartbeat = 100 * time.Millisecond
	f := start(t, cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := f.openStream(ctx, "/events", map[string]string{"Authorization": "Bearer " + testToken})
	for want := range strings.SplitSeq("retry: 400\n|: ping\n|\n|: ping\n", "|") {
		line, err := s.br.ReadString('\n')
		if err != nil || line != want {
			t.Fatalf("line %q (%v), want %q", line, err, want)
		}
	}
}

// TestAccessLogKeepsSecrets: every request is logged, and a token passed
// in the query string (as browsers must) is not.
func TestAccessLogKeepsSecrets(t *testing.T) {
	var logbuf syncbuf.Buffer
	f := startLogged(t, testConfig(), nil, slog.New(slog.NewJSONHandler(&logbuf, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	s := f.openStream(ctx, "/events?tag=x&token="+testToken, nil)
	s.resp.Body.Close()
	cancel()
	f.do(http.MethodPost, "/hook/ci/x", nil, map[string]string{"Authorization": "Bearer " + testToken})
	f.do(http.MethodPost, "/hook/ci/x", nil, map[string]string{"Authorization": "Bearer wrong-but-secret-0123456789"})
	f.stop()
	log := logbuf.String()
	for _, want := range []string{`"path":"/events"`, `"query":"tag=x&token=REDACTED"`, `"path":"/hook/ci/x","query":"","status":200`, `"status":403`} {
		if !strings.Contains(log, want) {
			t.Errorf("access log lacks %s:\n%s", want, log)
		}
	}
	for _, secret := range []string{testToken, "wrong-but-secret"} {
		if strings.Contains(log, secret) {
			t.Errorf("access log holds a credential:\n%s", log)
		}
	}
}

func TestStreamLimit(t *testing.T) {
	cfg := testConfig()
	cfg.MaxStreams = 2
	f := start(t, cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	a := f.openStream(ctx, "/events", auth)
	f.openStream(ctx, "/events", auth)
	if _, err := f.dialStream(ctx, "/events", auth); err == nil || !strings.Contains(err.Error(), "status 503") {
		t.Fatalf("third stream: %v, want 503", err)
	}
	a.resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := f.dialStream(ctx, "/events", auth)
		if err == nil {
			r.resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream slot was not freed when a client left: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStalledStreamClientDropped: a client that reads the start of GET
// /events over loopback and then never reads again (its socket buffers
// fill, the server's writes block in the kernel) is dropped within a
// bounded time and counted, its handler ends, and another client keeps
// receiving events.
func TestStalledStreamClientDropped(t *testing.T) {
	cfg := testConfig()
	cfg.ClientQueue = 256
	cfg.StreamWait = time.Second
	cfg.WriteTimeout = 2 * time.Second // the bound of a stall; the healthy client may lag as long
	var logbuf syncbuf.Buffer
	f := startLogged(t, cfg, nil, slog.New(slog.NewTextHandler(&logbuf, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	auth := map[string]string{"Authorization": "Bearer " + testToken}

	// The healthy client reads all the time and reports the markers it sees.
	fast := f.openStream(ctx, "/events?tag=myco/stall/*", auth)
	markers := make(chan string, 16)
	go func() {
		defer close(markers)
		for {
			ev, err := fast.next()
			if err != nil {
				return
			}
			if ev.Tag == "myco/stall/marker" {
				markers <- ev.ID
			}
		}
	}()

	// The stalled client: a raw connection that reads the response head
	// and the first line, then nothing more.
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /events?tag=myco/stall/* HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", testToken)
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stalled client, before it stalls: %v", err)
		}
		if line == "retry: 400\n" {
			break
		}
	}
	f.waitMetric("brine_api_stream_clients 2")

	// Flood until the stalled client is dropped: 32 KiB events, paced so
	// that the healthy client keeps up on a loaded machine.
	stop := make(chan struct{})
	flooded := make(chan int, 1)
	go func() {
		pad := strings.Repeat("x", 32<<10)
		n := 0
		defer func() { flooded <- n }()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			ev, err := bus.NewEvent("myco/stall/flood", map[string]any{"i": n, "pad": pad}, bus.Origin{Source: "test"})
			if err == nil {
				err = f.bus.Publish(ctx, ev)
			}
			if err != nil {
				t.Errorf("publish: %v", err)
				return
			}
			n++
		}
	}()
	began := time.Now()
	const bound = 20 * time.Second
	for {
		_, body := f.scrape(auth)
		if strings.Contains(body, "brine_api_stream_clients_dropped_total 1\n") {
			break
		}
		if time.Since(began) > bound {
			close(stop)
			t.Fatalf("the stalled client was not dropped within %s of the flood (%d events):\n%s", bound, <-flooded, grepBrine(body))
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	t.Logf("stalled client dropped %s after the flood began, after %d events", time.Since(began).Round(time.Millisecond), <-flooded)

	// Its handler ended: one stream is left, the healthy one.
	f.waitMetric("brine_api_stream_clients 1")
	// the count the server keeps, which its handler's end lowers a moment
	// after or before the gauge (seen apart under load)
	for deadline := time.Now().Add(5 * time.Second); f.srv.events.n.Load() != 1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := f.srv.events.n.Load(); n != 1 {
		t.Errorf("%d streams counted, want 1", n)
	}
	// The server closed the stalled connection: reading drains what the
	// buffers held, then ends.
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.Copy(io.Discard, br); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("the stalled connection is still open: %v", err)
		}
	}
	// The healthy client still gets events.
	marker := publish(t, f.bus, "myco/stall/marker", nil)
	select {
	case id, ok := <-markers:
		if !ok || id != marker.ID {
			t.Fatalf("healthy client: marker %q (open %v), want %s", id, ok, marker.ID)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the healthy client did not receive the marker after the drop")
	}
	_, body := f.scrape(auth)
	if !strings.Contains(body, "brine_api_stream_clients_dropped_total 1\n") {
		t.Errorf("want exactly one client dropped:\n%s", grepBrine(body))
	}
	if log := logbuf.String(); !strings.Contains(log, "event stream client dropped") || !strings.Contains(log, "stopped reading") {
		t.Errorf("the drop is not logged with its reason:\n%s", log)
	}
}
