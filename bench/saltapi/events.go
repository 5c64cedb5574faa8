package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bench/internal/runner"
	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
)

// eventTag is the tag of the events fired at the clients.
const eventTag = "bench/saltapi/sse"

// stalledRcvBuf is the stalled client's socket receive buffer: small, so
// that the master's writes to it block soon after it stops reading.
const stalledRcvBuf = 4096

// Events is many clients on GET /events while events are fired at a
// fixed rate, one of them stalled.
type Events struct {
	// Attempted clients (besides the stalled one), Connected those
	// answered 200 (the stalled one included), Refused those answered
	// otherwise: RefusedStatus and RefusedReply say how.
	Attempted     int    `json:"clients_attempted"`
	Connected     int    `json:"connected"`
	Refused       int    `json:"refused"`
	RefusedStatus int    `json:"refused_status,omitempty"`
	RefusedReply  string `json:"refused_reply,omitempty"`
	Rate          int    `json:"events_per_second"`
	// Fired is every event fired, WindowEvents those of the first
	// -duration (Window); the rest (Stall) were fired until the stalled
	// client was dropped.
	Fired         int     `json:"fired"`
	WindowEvents  int     `json:"window_events"`
	FireSeconds   float64 `json:"fire_seconds"`
	PublishErrors int64   `json:"publish_errors"`
	PublishError  string  `json:"first_publish_error,omitempty"`
	// FireSlipMaxMs is the most a publish started after its turn (this
	// process falling behind the rate).
	FireSlipMaxMs float64 `json:"fire_slip_max_ms"`
	// PublishMs is each publish's round trip to the operator's
	// connection's durable acknowledgement.
	PublishMs report.Dist `json:"publish_ms"`
	Window    lagStats    `json:"window"`
	Stall     lagStats    `json:"stall"`
	Stalled   stalled     `json:"stalled_client"`
	// OthersDropped counts the master's drops of reading clients (its log;
	// Drops quotes the first ten, and the first of the clients' own ends),
	// EndedEarly the reading clients whose stream ended before the bench
	// closed it, Missed the events stored (publishes that failed left
	// out) that reading clients still connected did not receive.
	OthersDropped int      `json:"others_dropped"`
	Drops         []string `json:"master_drops,omitempty"`
	EndedEarly    int      `json:"ended_early"`
	Missed        int      `json:"missed"`
	// MasterCPUPercent and BenchCPUPercent are the master's and this
	// process's CPU over the firing, in percent of one core.
	MasterCPUPercent float64 `json:"master_cpu_percent"`
	BenchCPUPercent  float64 `json:"bench_cpu_percent"`
}

// lagStats is the lag of the events of one window: from the start of the
// event's publish to a client's reading its data line.
type lagStats struct {
	Events   int `json:"events"`
	Receipts int `json:"receipts"`
	// P99LagMs and MaxLagMs are distributions over the clients of each
	// client's p99 and max lag.
	P99LagMs report.Dist `json:"per_client_p99_lag_ms"`
	MaxLagMs report.Dist `json:"per_client_max_lag_ms"`
	// Over1s counts clients with an event lagging beyond 1 s.
	Over1s int `json:"clients_lagging_over_1s"`
}

// stalled is the client that reads its response's headers and then
// nothing.
type stalled struct {
	Remote  string `json:"remote"`
	RcvBuf  int    `json:"so_rcvbuf"`
	Dropped bool   `json:"dropped"`
	// DroppedSeconds is from the first event fired until the master's
	// log said it was dropped (polled every 250 ms), Reason the log's reason.
	DroppedSeconds float64 `json:"dropped_after_seconds,omitempty"`
	Reason         string  `json:"reason,omitempty"`
	// Drained is what it read afterwards until its connection ended
	// (EOF: the master closed it), End how it ended.
	DrainedBytes int64  `json:"drained_bytes"`
	End          string `json:"end"`
}

// sseClient is one reading client's receipts: per event its lag in
// microseconds, for the window and for the stall phase.
type sseClient struct {
	window, stall []int32
	received      atomic.Int64
	ended         atomic.Bool // the stream ended before the bench closed it
	endErr        string
}

// events connects the stalled client, then o.clients reading ones, fires
// o.rate events a second for o.duration (and on until the stalled client
// is dropped), and measures each receipt's lag.
func events(ctx context.Context, o options, m *fleet.Master, base, tok string) (Events, error) {
	e := Events{Attempted: o.clients, Rate: o.rate}
	host := strings.TrimPrefix(base, "http://")
	path := "/events?salt_token=" + url.QueryEscape(tok)

	// The stalled client first, so that no limit keeps it out.
	st, err := dialStalled(ctx, host, path)
	if err != nil {
		return e, err
	}
	defer st.conn.Close()
	e.Stalled.Remote, e.Stalled.RcvBuf = st.conn.LocalAddr().String(), stalledRcvBuf
	e.Connected = 1

	// The reading clients, several at a time.
	cctx, stopClients := context.WithCancel(ctx)
	defer stopClients()
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	base0 := time.Now()
	window := int(float64(o.rate) * o.duration.Seconds())
	clients := make([]*sseClient, o.clients)
	var mu sync.Mutex
	var readers sync.WaitGroup
	err = runner.Each(32, o.clients, func(i int) error {
		req, err := http.NewRequestWithContext(cctx, http.MethodGet, base+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("event client %d: %w", i, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			e.Refused++
			e.RefusedStatus, e.RefusedReply = resp.StatusCode, report.Clip(bytes.TrimSpace(b), 300)
			return nil
		}
		e.Connected++
		c := &sseClient{}
		clients[i] = c
		readers.Add(1)
		go func() {
			defer readers.Done()
			c.read(cctx, resp.Body, base0, window)
		}()
		return nil
	})
	if err != nil {
		return e, err
	}
	reading := slices.DeleteFunc(slices.Clone(clients), func(c *sseClient) bool { return c == nil })
	fmt.Fprintf(os.Stderr, "bench/saltapi: %d event clients reading, %d refused\n", len(reading), e.Refused)
	// The stalled client's drop, as the master logs it.
	log := m.Logs[len(m.Logs)-1]
	var droppedAt atomic.Int64
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		for masterproc.Sleep(watchCtx, 250*time.Millisecond) {
			for _, d := range logDrops(log) {
				if d.remote == e.Stalled.Remote {
					e.Stalled.Reason = d.reason
					droppedAt.Store(time.Now().UnixNano())
					return
				}
			}
		}
	}()

	// Fire.
	pid := m.PID()
	c0, b0 := report.ProcCPU(pid), report.ProcCPU(0)
	interval := time.Second / time.Duration(o.rate)
	var pubs sync.WaitGroup
	var slip, pubErrs atomic.Int64
	pubTimes := make([]time.Duration, 0, window*2)
	var pubMu sync.Mutex
	sem := make(chan struct{}, 512)
	t0 := time.Now()
	var windowEnd time.Time
	n := 0
	for ; ctx.Err() == nil; n++ {
		at := t0.Add(time.Duration(n) * interval)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		if n == window {
			windowEnd = time.Now()
		}
		if n >= window && (droppedAt.Load() != 0 || time.Since(windowEnd) >= o.stallCap) {
			break
		}
		sem <- struct{}{}
		pubs.Add(1)
		go func(seq int) {
			defer func() { <-sem; pubs.Done() }()
			now := time.Now()
			for s := int64(now.Sub(at)); ; {
				old := slip.Load()
				if s <= old || slip.CompareAndSwap(old, s) {
					break
				}
			}
			data := map[string]any{"seq": seq, "sent_us": now.Sub(base0).Microseconds()}
			if _, err := m.Op.Publish(ctx, eventTag, data); err != nil {
				if pubErrs.Add(1) == 1 {
					pubMu.Lock()
					e.PublishError = err.Error()
					pubMu.Unlock()
				}
				return
			}
			d := time.Since(now)
			pubMu.Lock()
			pubTimes = append(pubTimes, d)
			pubMu.Unlock()
		}(n)
	}
	pubs.Wait()
	e.PublishErrors = pubErrs.Load()
	fireWall := time.Since(t0)
	e.Fired, e.WindowEvents, e.FireSeconds = n, min(n, window), report.Round(fireWall.Seconds(), 3)
	e.FireSlipMaxMs = report.Round(float64(slip.Load())/float64(time.Millisecond), 3)
	e.PublishMs = report.DistOf(pubTimes)
	e.MasterCPUPercent = report.Round(100*(report.ProcCPU(pid)-c0).Seconds()/fireWall.Seconds(), 1)
	e.BenchCPUPercent = report.Round(100*(report.ProcCPU(0)-b0).Seconds()/fireWall.Seconds(), 1)

	// Let the reading clients catch up, then close them.
	_ = masterproc.Poll(ctx, 30*time.Second, 50*time.Millisecond, func() bool {
		for _, c := range reading {
			if !c.ended.Load() && c.received.Load() < int64(e.Fired)-e.PublishErrors {
				return false
			}
		}
		return true
	})
	stopClients()
	readers.Wait()
	stopWatch()

	// The stalled client: dropped? Then what it still reads ends with the
	// connection's end.
	if at := droppedAt.Load(); at != 0 {
		e.Stalled.Dropped = true
		e.Stalled.DroppedSeconds = report.Round(time.Unix(0, at).Sub(t0).Seconds(), 3)
		e.Stalled.DrainedBytes, e.Stalled.End = st.drain(30 * time.Second)
	} else {
		e.Stalled.End = fmt.Sprintf("not dropped within %s of the window's end", o.stallCap)
	}
	for _, d := range logDrops(log) {
		if d.remote != e.Stalled.Remote {
			e.OthersDropped++
			if len(e.Drops) < 10 {
				e.Drops = append(e.Drops, d.remote+": "+d.reason)
			}
		}
	}
	var win, stall [][]int32
	for _, c := range reading {
		win, stall = append(win, c.window), append(stall, c.stall)
		if c.ended.Load() {
			e.EndedEarly++
			if len(e.Drops) < 20 {
				e.Drops = append(e.Drops, "client side: "+c.endErr)
			}
			continue
		}
		e.Missed += max(0, e.Fired-int(e.PublishErrors)-int(c.received.Load()))
	}
	e.Window, e.Stall = lagsOf(win, e.WindowEvents), lagsOf(stall, e.Fired-e.WindowEvents)
	return e, nil
}

// read reads one client's stream until it ends, noting each fired
// event's lag: its data line's receipt minus the sent_us it carries
// (both from base, this process's clock). Events numbered below window
// are the window's.
func (c *sseClient) read(ctx context.Context, body io.ReadCloser, base time.Time, window int) {
	defer body.Close()
	br := bufio.NewReaderSize(body, 64<<10)
	marker := []byte(`"tag": "` + eventTag + `"`)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				c.ended.Store(true)
				c.endErr = err.Error()
			}
			return
		}
		if bytes.HasPrefix(line, []byte(strings.TrimSuffix(api.DroppedComment, "\n\n"))) {
			c.ended.Store(true)
			c.endErr = "dropped by the master: " + strings.TrimSpace(string(line))
			return
		}
		if !bytes.HasPrefix(line, []byte("data: ")) || !bytes.Contains(line, marker) {
			continue
		}
		now := time.Since(base).Microseconds()
		seq, ok1 := intAfter(line, `"seq":`)
		sent, ok2 := intAfter(line, `"sent_us":`)
		if !ok1 || !ok2 {
			continue
		}
		lag := int32(min(now-sent, 1<<31-1))
		if seq < int64(window) {
			c.window = append(c.window, lag)
		} else {
			c.stall = append(c.stall, lag)
		}
		c.received.Add(1)
	}
}

// intAfter is the integer following key (and spaces) in line.
func intAfter(line []byte, key string) (int64, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(line[i+len(key):], " ")
	j := 0
	for j < len(rest) && (rest[j] >= '0' && rest[j] <= '9' || j == 0 && rest[j] == '-') {
		j++
	}
	v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return v, err == nil
}

// lagsOf summarises the clients' lags (microseconds) of events events.
func lagsOf(clients [][]int32, events int) lagStats {
	s := lagStats{Events: events}
	var p99s, maxes []time.Duration
	for _, lags := range clients {
		if len(lags) == 0 {
			continue
		}
		s.Receipts += len(lags)
		slices.Sort(lags)
		p := report.Percentile(float64s(lags), 0.99)
		mx := lags[len(lags)-1]
		p99s = append(p99s, time.Duration(p)*time.Microsecond)
		maxes = append(maxes, time.Duration(mx)*time.Microsecond)
		if time.Duration(mx)*time.Microsecond > targetLagMaxSeconds*time.Second {
			s.Over1s++
		}
	}
	s.P99LagMs, s.MaxLagMs = report.DistOf(p99s), report.DistOf(maxes)
	return s
}

func float64s(v []int32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// stalledClient is a GET /events connection whose response headers were
// read, and nothing since.
type stalledClient struct {
	conn net.Conn
	br   *bufio.Reader
}

// dialStalled opens the stalled client's stream with a small receive
// buffer and reads its response's headers.
func dialStalled(ctx context.Context, host, path string) (*stalledClient, error) {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, stalledRcvBuf)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("the stalled event client: %w", err)
	}
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", path, host)
	if _, err := io.WriteString(conn, req); err != nil {
		conn.Close()
		return nil, fmt.Errorf("the stalled event client: %w", err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("the stalled event client: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("the stalled event client: GET /events: %s", resp.Status)
	}
	return &stalledClient{conn: conn, br: br}, nil
}

// drain reads what is left until the connection ends, or timeout: the
// bytes read and how it ended.
func (s *stalledClient) drain(timeout time.Duration) (int64, string) {
	_ = s.conn.SetReadDeadline(time.Now().Add(timeout))
	n, err := io.Copy(io.Discard, s.br)
	switch {
	case err == nil:
		return n, "EOF: the master closed the connection"
	case os.IsTimeout(err):
		return n, fmt.Sprintf("still open %s after the drop: %v", timeout, err)
	}
	return n, "the connection ended: " + err.Error()
}

// logDrop is one "event stream client dropped" line of the master's log.
type logDrop struct{ remote, reason string }

// logDrops reads the master's log for its dropped stream clients.
func logDrops(path string) []logDrop {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []logDrop
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, `msg="event stream client dropped"`) {
			continue
		}
		out = append(out, logDrop{remote: logValue(line, "remote="), reason: logValue(line, "reason=")})
	}
	return out
}

// logValue is a key=value's value in a slog text line, quoted or not.
func logValue(line, key string) string {
	i := strings.Index(line, " "+key)
	if i < 0 {
		return ""
	}
	v := line[i+1+len(key):]
	if strings.HasPrefix(v, `"`) {
		if s, err := strconv.QuotedPrefix(v); err == nil {
			if u, err := strconv.Unquote(s); err == nil {
				return u
			}
		}
	}
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}
