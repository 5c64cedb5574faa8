package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/pyjson"
)

// DroppedComment is the last line a stream client that fell behind gets
// before its connection is closed (one that stopped reading altogether
// gets nothing more); the events it did receive carry ids, so it resumes
// with Last-Event-ID and misses nothing.
const DroppedComment = ": dropped: this client did not keep up; reconnect with Last-Event-ID to resume\n\n"

// maxBatch bounds the bytes of queued events a stream client's handler
// writes at once: a client behind by a burst gets it in a few large writes
// and flushes rather than one per event, which at a thousand clients and a
// thousand events a second is what the master's CPU goes to.
const maxBatch = 64 << 10

// coalesce is the least time between two writes to one stream client:
// events that arrive meanwhile wait for the next write. At a thousand
// events a second, waking each client's handler for every event cost more
// than writing them; a client now wakes at most a hundred times a second,
// and an event waits at most this much more.
const coalesce = 10 * time.Millisecond

// streamItem is one event on its way to stream clients. It is framed once,
// by the first handler that writes it, however many clients of the shared
// subscription it is offered to: salt-api's framing re-encodes the data
// (Python's json.dumps spacing), which costs more than the write itself.
type streamItem struct {
	ev   *bus.Event
	once sync.Once
	b    []byte
	err  error
}

// framed is the item in salt-api's framing (frame).
func (it *streamItem) framed() ([]byte, error) {
	it.once.Do(func() {
		var buf bytes.Buffer
		it.err = frame(&buf, it.ev)
		it.b = buf.Bytes()
	})
	return it.b, it.err
}

// streamClient is one GET /events connection: the bus subscription offers
// events, the handler writes them.
type streamClient struct {
	queue   chan *streamItem
	dropped chan struct{}
	once    sync.Once
	wait    time.Duration
}

// offer queues ev, waiting up to c.wait for room: a burst or a replay is
// absorbed, a client that reads too slowly is dropped. Only this client's
// own subscription waits; publishers and other clients never do. A client
// that stopped reading is caught by the write deadline (streamWriter), as
// its handler is then blocked in a write and never sees the drop.
func (c *streamClient) offer(ev *bus.Event) {
	it := &streamItem{ev: ev}
	select {
	case <-c.dropped:
		return
	case c.queue <- it:
		return
	default:
	}
	t := time.NewTimer(c.wait)
	defer t.Stop()
	select {
	case c.queue <- it:
	case <-c.dropped:
	case <-t.C:
		c.close()
	}
}

// close ends the client's delivery; offers return at once from then on.
func (c *streamClient) close() { c.once.Do(func() { close(c.dropped) }) }

// EventStream serves GET /events: Server-Sent Events in salt-api's
// framing ("retry: 400", then per event "tag: <tag>" and "data: {"tag":
// …, "data": …}" as Python's json.dumps prints it), with an "id: <event
// id>" line so that a client reconnecting with Last-Event-ID continues
// from the durable log without a gap or a duplicate, also after a master
// restart. brine's API and salt-api (package saltapi) each serve one,
// after their own authentication.
type EventStream struct {
	Bus interface {
		Subscribe(ctx context.Context, opts bus.SubscribeOptions, fn func(*bus.Event)) (bus.Subscription, error)
	}
	Log *slog.Logger
	// MaxStreams, ClientQueue, StreamWait, WriteTimeout and Heartbeat are
	// Config's of the same names.
	MaxStreams   int
	ClientQueue  int
	StreamWait   time.Duration
	WriteTimeout time.Duration
	Heartbeat    time.Duration
	// LimitKey names the option that sets MaxStreams, for the refusal.
	LimitKey string
	// Done ends every stream when it ends (a server shutting down, which
	// http.Server.Shutdown does not do for long-lived responses).
	Done context.Context
	// Opened, Dropped and Sent, when set, count the streams, the clients
	// dropped and the events sent (by tag).
	Opened  func(delta int)
	Dropped func()
	Sent    func(tag string)
	// Shared serves the clients that start from now (no Last-Event-ID)
	// from one subscription of the bus, fanned out by tag, so that a
	// thousand clients (SaltGUI tabs) cost one consumer of the bus, not a
	// thousand. One slow client may then not hold the others back: a
	// client whose queue is full is dropped at once and resumes with
	// Last-Event-ID (which gets a subscription of its own).
	Shared bool

	n atomic.Int64

	hubMu  sync.Mutex
	hub    map[*streamClient]*fnmatch.Glob
	hubSub bus.Subscription
}

// join adds c, for the tags pattern matches, to the shared subscription,
// started with the first client and kept for the stream's life (Done).
func (es *EventStream) join(c *streamClient, pattern string) error {
	es.hubMu.Lock()
	defer es.hubMu.Unlock()
	if es.hubSub == nil {
		ctx := es.Done
		if ctx == nil {
			ctx = context.Background()
		}
		sub, err := es.Bus.Subscribe(ctx, bus.SubscribeOptions{}, es.fanout)
		if err != nil {
			return err
		}
		es.hubSub = sub
		es.hub = map[*streamClient]*fnmatch.Glob{}
	}
	var g *fnmatch.Glob
	if pattern != "" {
		g = fnmatch.Compile(pattern)
	}
	es.hub[c] = g
	return nil
}

// leave removes c from the shared subscription.
func (es *EventStream) leave(c *streamClient) {
	es.hubMu.Lock()
	delete(es.hub, c)
	es.hubMu.Unlock()
}

// fanout offers ev to every shared client whose pattern matches it, as
// one item framed once for all of them, dropping a client whose queue is
// full.
func (es *EventStream) fanout(ev *bus.Event) {
	it := &streamItem{ev: ev}
	es.hubMu.Lock()
	defer es.hubMu.Unlock()
	for c, g := range es.hub {
		if g != nil && !g.Match(ev.Tag) {
			continue
		}
		select {
		case c.queue <- it:
		case <-c.dropped:
		default:
			c.close()
		}
	}
}

// Serve streams the events of the request's tag pattern (?tag=) to an
// authenticated client.
func (es *EventStream) Serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since bus.Since
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = q.Get("last_event_id")
	}
	if last != "" {
		if _, err := bus.IDTime(last); err != nil {
			writeError(w, http.StatusBadRequest, "GET /events: Last-Event-ID: %v", err)
			return
		}
		since.AfterID = last
	}
	if n := es.n.Add(1); n > int64(es.MaxStreams) {
		es.n.Add(-1)
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, "GET /events: too many event streams open; the limit is %d (%s)", es.MaxStreams, es.LimitKey)
		return
	}
	defer es.n.Add(-1)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if es.Done != nil {
		stop := context.AfterFunc(es.Done, cancel)
		defer stop()
	}

	c := &streamClient{queue: make(chan *streamItem, es.ClientQueue), dropped: make(chan struct{}), wait: es.StreamWait}
	if es.Shared && last == "" {
		if err := es.join(c, q.Get("tag")); err != nil {
			writeError(w, http.StatusServiceUnavailable, "GET /events: %v", err)
			return
		}
		defer es.leave(c)
	} else {
		sub, err := es.Bus.Subscribe(ctx, bus.SubscribeOptions{Pattern: q.Get("tag"), Since: since}, c.offer)
		if err != nil {
			if last != "" {
				writeError(w, http.StatusGone, "GET /events: cannot resume after event %s: %v", last, err)
				return
			}
			writeError(w, http.StatusServiceUnavailable, "GET /events: %v", err)
			return
		}
		defer sub.Stop()
	}
	defer c.close() // before Stop: an offer waiting for room gives up
	if es.Opened != nil {
		es.Opened(1)
		defer es.Opened(-1)
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), timeout: es.WriteTimeout}
	if err := sw.write([]byte("retry: 400\n"), true); err != nil {
		es.failed(r, err)
		return
	}
	beat := time.NewTicker(es.Heartbeat)
	defer beat.Stop()
	var buf bytes.Buffer
	for {
		select {
		case <-c.dropped:
			es.drop(r, sw)
			return
		default:
		}
		select {
		case <-ctx.Done():
			return
		case <-c.dropped:
			es.drop(r, sw)
			return
		case <-beat.C:
			if err := sw.write([]byte(": ping\n\n"), true); err != nil {
				es.failed(r, err)
				return
			}
		case it := <-c.queue:
			// What else is queued goes in the same write and flush.
			buf.Reset()
			es.append(&buf, it)
		batch:
			for buf.Len() < maxBatch {
				select {
				case it = <-c.queue:
					es.append(&buf, it)
				default:
					break batch
				}
			}
			if buf.Len() == 0 {
				continue
			}
			if err := sw.write(buf.Bytes(), true); err != nil {
				es.failed(r, err)
				return
			}
			time.Sleep(coalesce)
		}
	}
}

// append adds item it, framed, to buf and counts it as sent (the write
// that follows failing ends the stream, so the count is at most one batch
// ahead). An event that cannot be framed is logged and left out.
func (es *EventStream) append(buf *bytes.Buffer, it *streamItem) {
	b, err := it.framed()
	if err != nil {
		es.Log.Error("event not streamed", "id", it.ev.ID, "tag", it.ev.Tag, "err", err)
		return
	}
	buf.Write(b)
	if es.Sent != nil {
		es.Sent(it.ev.Tag)
	}
}

// streamEvents serves brine's GET /events, for a token of the api:
// section.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) {
	if err := s.checkToken(r, true); err != nil {
		writeError(w, authStatus(err), "GET /events: %v", err)
		return
	}
	s.events.Serve(w, r)
}

// errStalled marks a write to a stream client that did not complete within
// the write timeout: the client stopped reading.
var errStalled = errors.New("the client stopped reading")

// streamWriter writes to one event-stream client. A client that stops
// reading fills the socket buffers, after which a write blocks in the kernel
// where neither the client's queue nor the request's context can reach it:
// only a write deadline ends that write, so every write has one.
type streamWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// write writes b, and sends it to the client at once when flush is set,
// within the write timeout. A write failing at or past its deadline returns
// an error wrapping errStalled: HTTP/1 reports os.ErrDeadlineExceeded, but
// HTTP/2 only a closed stream, so the clock decides too.
func (sw *streamWriter) write(b []byte, flush bool) error {
	deadline := time.Now().Add(sw.timeout)
	// http.ErrNotSupported comes only from writers that are no connection
	// (httptest's recorder), which do not block; Run's server supports
	// deadlines over HTTP/1 and HTTP/2, reached through recorder.Unwrap.
	if err := sw.rc.SetWriteDeadline(deadline); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("setting the write deadline: %w", err)
	}
	_, err := sw.w.Write(b)
	if err == nil && flush {
		err = sw.rc.Flush()
	}
	if err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || !time.Now().Before(deadline)) {
		return fmt.Errorf("%w: a write waited %s (%w)", errStalled, sw.timeout, err)
	}
	return err
}

// failed ends a stream whose write failed. A stalled client is a
// dropped one, counted and logged like a client whose queue overflowed
// (net/http closes its connection); any other failure is the client
// leaving.
func (es *EventStream) failed(r *http.Request, err error) {
	if !errors.Is(err, errStalled) {
		es.Log.Debug("event stream client left", "remote", r.RemoteAddr, "err", err)
		return
	}
	if es.Dropped != nil {
		es.Dropped()
	}
	es.Log.Warn("event stream client dropped", "remote", r.RemoteAddr, "reason", err)
}

// drop ends the stream of a client whose queue stayed full for
// StreamWait: it is counted, and told so in a last comment line, which it
// gets if it still reads.
func (es *EventStream) drop(r *http.Request, sw *streamWriter) {
	if es.Dropped != nil {
		es.Dropped()
	}
	es.Log.Warn("event stream client dropped", "remote", r.RemoteAddr, "reason", "too slow: its queue stayed full")
	_ = sw.write([]byte(DroppedComment), true)
}

// frame writes one event in salt-api's framing plus its id.
func frame(buf *bytes.Buffer, ev *bus.Event) error {
	tag, err := json.Marshal(ev.Tag)
	if err != nil {
		return err
	}
	data := ev.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	full := make([]byte, 0, len(tag)+len(data)+20)
	full = append(full, `{"tag":`...)
	full = append(full, tag...)
	full = append(full, `,"data":`...)
	full = append(full, data...)
	full = append(full, '}')
	py, err := pyjson.Format(full, false)
	if err != nil {
		return fmt.Errorf("event data: %w", err)
	}
	if bytes.ContainsAny(py, "\r\n") {
		return errors.New("encoded event holds a line break")
	}
	buf.WriteString("id: ")
	buf.WriteString(ev.ID)
	buf.WriteString("\ntag: ")
	buf.WriteString(ev.Tag)
	buf.WriteString("\ndata: ")
	buf.Write(py)
	buf.WriteString("\n\n")
	return nil
}
