package gateway

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/zmtp"
	"github.com/brinehq/brine/internal/fnmatch"
)

// liveBuffer bounds the live events a watch holds while it replays or while
// fn is busy. When it is full the master's queue for this watcher fills in
// turn and the master drops the connection; the watch then reconnects and
// fills the gap from the log, so a slow handler costs time, never events.
// A variable so that tests can make a watch fall behind quickly.
var liveBuffer = 4096

// settleAfter is how long after a catch-up the watch catches up once more,
// by when its subscription has reached the master.
const settleAfter = time.Second

// firstSubscribe bounds the first connection to the publish port: a
// watch whose master answered on the request port but whose publish port
// is wrong or closed fails (an *UnreachableError) rather than waiting in
// silence; later reconnects wait as long as the watch runs.
const firstSubscribe = 10 * time.Second

type liveItem struct {
	ev    *bus.Event
	reset bool  // the connection dropped: live delivery has a gap
	err   error // the watch cannot go on (the key was refused)
}

// Watch calls fn, in log order, for every event whose tag matches pattern (a
// Salt glob; empty matches everything), received from the master's publish
// endpoint pubAddr ("host:port", "host" for port 4505, "tcp://…" or
// "ipc://…"). The master filters by the glob's literal prefix and Watch
// by the whole glob.
//
// With since set, Watch first subscribes, then replays the stored events from
// since through the request endpoint, then continues with the live ones:
// without a gap or a duplicate, because both carry their log position. The
// same catch-up runs after every reconnect, so events published while a
// watcher was away (or too slow and dropped by the master) are delivered
// late rather than lost.
//
// Watch returns ctx.Err() when ctx ends, or the error fn returns, unchanged:
// fn stops the watch by returning an error of its own.
func (c *Client) Watch(ctx context.Context, pubAddr, pattern string, since bus.Since, fn func(*bus.Event) error) error {
	w := &watch{c: c, ep: endpoint(pubAddr, DefaultPublishPort), pattern: pattern, fn: fn}
	if pattern != "" {
		w.glob = fnmatch.Compile(pattern)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	sub, err := w.subscribe(rctx, firstSubscribe)
	if err != nil {
		return err
	}
	live := make(chan liveItem, liveBuffer)
	readerDone := make(chan struct{})
	go w.receive(rctx, sub, live, readerDone)
	defer func() {
		stop()
		<-readerDone
	}()

	trusted := since.IsZero() // live delivery continues where we are
	// settle fires once the subscription has surely reached the master:
	// an event stored after a catch-up's end but before the master knew
	// of the subscription is in neither, and would otherwise wait for the
	// next live event to be caught up.
	var settle <-chan time.Time
	if !since.IsZero() {
		if err := w.catchUp(ctx, since, 0); err != nil {
			return err
		}
		settle = time.After(settleAfter)
	}
	for {
		var it liveItem
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-settle:
			settle = nil
			if trusted {
				continue // a live event came, and the gap before it was filled
			}
			if err := w.catchUp(ctx, w.cursor(since), 0); err != nil {
				return err
			}
			continue
		case it = <-live:
		}
		if it.err != nil {
			return it.err
		}
		cursor := w.cursor(since)
		if it.reset {
			// Catch up now rather than at the next live event, which may
			// be long in coming.
			trusted = false
			if !cursor.IsZero() {
				if err := w.catchUp(ctx, cursor, 0); err != nil {
					return err
				}
				settle = time.After(settleAfter)
			}
			continue
		}
		if !trusted {
			// Events stored before the subscription reached the master
			// precede this one in the log: fetch them first.
			if !cursor.IsZero() && it.ev.Seq > 1 {
				if err := w.catchUp(ctx, cursor, it.ev.Seq-1); err != nil {
					return err
				}
			}
			trusted = true
		}
		if err := w.deliver(it.ev); err != nil {
			return err
		}
	}
}

type watch struct {
	c       *Client
	ep      string
	pattern string
	glob    *fnmatch.Glob
	fn      func(*bus.Event) error
	pos     uint64 // log position delivered (or replayed) through
}

// cursor is where a catch-up starts: after what was delivered, or since.
func (w *watch) cursor(since bus.Since) bus.Since {
	if w.pos > 0 {
		return bus.Since{AfterSeq: w.pos}
	}
	return since
}

// deliver calls fn once per log position, in order.
func (w *watch) deliver(ev *bus.Event) error {
	if ev.Seq <= w.pos {
		return nil
	}
	w.pos = ev.Seq
	return w.fn(ev)
}

// subscribe connects to the publish endpoint as a SUB and subscribes to
// the glob's literal prefix; it waits for the master until ctx ends (or
// limit passes, when set), and the connection is closed when ctx ends.
func (w *watch) subscribe(ctx context.Context, limit time.Duration) (*peerConn, error) {
	op, master := OperatorKeys(w.c.key), MasterKeys(w.c.key).Public
	dctx := ctx
	if limit > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	pc, err := connect(dctx, w.ep, func() zmq4.Security { return curve.NewClient(op, master) }, zmq4.Sub, clientQueue)
	if err != nil {
		return nil, operatorAuth(err)
	}
	context.AfterFunc(ctx, pc.close)
	prefix := ""
	if w.glob != nil {
		prefix = w.glob.Prefix()
	}
	pc.send(zmtp.EncodeMsg(append([]byte{1}, prefix...)))
	return pc, nil
}

// receive turns the subscription's messages into live items until ctx ends.
// A dropped connection (the master restarted, or cut off a watcher that
// stopped reading) is a gap: the watch connects again and catches up.
func (w *watch) receive(ctx context.Context, pc *peerConn, live chan<- liveItem, done chan<- struct{}) {
	defer close(done)
	for {
		frames, cmd, err := pc.readMsg(maxReply)
		if ctx.Err() != nil {
			return
		}
		var it liveItem
		switch {
		case err != nil:
			it.reset = true
			pc.close()
			if pc, err = w.subscribe(ctx, 0); err != nil {
				if ctx.Err() != nil {
					return
				}
				it.err = err
			}
		case cmd:
			continue
		default:
			// The tag frame comes first: events the glob rejects (the
			// master filters by its prefix only) are not decoded.
			if len(frames) == 0 || (w.glob != nil && !w.glob.Match(string(frames[0]))) {
				continue
			}
			if it.ev = decodeLive(frames); it.ev == nil {
				continue
			}
		}
		select {
		case live <- it:
		case <-ctx.Done():
			return
		}
		if it.err != nil {
			return
		}
	}
}

// decodeLive reads a published event: tag, log position, envelope. The
// master is authenticated, so the envelope is trusted as it is.
func decodeLive(frames [][]byte) *bus.Event {
	if len(frames) != 3 {
		return nil
	}
	seq, err := strconv.ParseUint(string(frames[1]), 10, 64)
	if err != nil {
		return nil
	}
	ev, err := bus.DecodeStored(frames[2])
	if err != nil {
		return nil
	}
	ev.Seq = seq
	return ev
}

// catchUp replays stored events after cursor through until (0: the head of
// the log when the replay starts), page by page, delivering those not
// delivered yet.
func (w *watch) catchUp(ctx context.Context, cursor bus.Since, until uint64) error {
	for {
		req := ReplayRequest{
			Pattern:   w.pattern,
			AfterSeq:  cursor.AfterSeq,
			AfterID:   cursor.AfterID,
			SinceTime: cursor.Time,
			UntilSeq:  until,
		}
		var rep ReplayReply
		if err := w.c.Call(ctx, "replay", req, &rep); err != nil {
			return fmt.Errorf("gateway: replay: %w", err)
		}
		if rep.Head < cursor.AfterSeq {
			// The master's log ends before what was delivered: it is a new
			// log (a fresh data directory). Start over from its beginning.
			w.pos, cursor, until = 0, bus.Since{}, 0
			continue
		}
		for _, re := range rep.Events {
			re.Event.Seq = re.Seq
			if err := w.deliver(re.Event); err != nil {
				return err
			}
		}
		w.pos = max(w.pos, rep.LastSeq)
		if rep.Done {
			return nil
		}
		if rep.LastSeq <= cursor.AfterSeq {
			return fmt.Errorf("gateway: replay made no progress after position %d", cursor.AfterSeq)
		}
		if until == 0 {
			until = rep.Head // later pages stop where the first one aimed
		}
		cursor = bus.Since{AfterSeq: rep.LastSeq}
	}
}
