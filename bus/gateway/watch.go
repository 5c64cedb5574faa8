package gateway

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-zeromq/zmq4"

	"github.com/brinehq/brine/bus"
)

// liveBuffer bounds the live events a watch holds while it replays. When it
// is full the master's queue for this watcher fills in turn and the master
// drops the connection; the watch then reconnects and fills the gap from the
// log, so a slow handler costs time, never events.
const liveBuffer = 4096

type liveItem struct {
	ev    *bus.Event
	reset bool // the connection dropped: live delivery has a gap
}

// Watch calls fn, in log order, for every event whose tag matches pattern (a
// Salt glob; empty matches everything), received from the master's publish
// endpoint pubAddr. The master filters by the glob's literal prefix and Watch
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
	w := &watch{c: c, pattern: pattern, fn: fn}
	if pattern != "" {
		w.glob = bus.CompileGlob(pattern)
	}
	sub := zmq4.NewSub(context.Background(), socketOptions(zmq4.WithSecurity(keySecurity{key: c.key}))...)
	prefix := ""
	if w.glob != nil {
		prefix = w.glob.Prefix()
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, prefix); err != nil {
		sub.Close()
		return fmt.Errorf("gateway: subscribe: %w", err)
	}
	if err := dial(ctx, sub, endpoint(pubAddr)); err != nil {
		return err
	}
	live := make(chan liveItem, liveBuffer)
	rctx, stop := context.WithCancel(ctx)
	readerDone := make(chan struct{})
	go w.receive(rctx, sub, live, readerDone)
	defer func() {
		stop()
		sub.Close()
		<-readerDone
		drainClosed(sub)
	}()

	trusted := since.IsZero() // live delivery continues where we are
	if !since.IsZero() {
		if err := w.catchUp(ctx, since, 0); err != nil {
			return err
		}
	}
	for {
		var it liveItem
		select {
		case <-ctx.Done():
			return ctx.Err()
		case it = <-live:
		}
		cursor := since
		if w.pos > 0 {
			cursor = bus.Since{AfterSeq: w.pos}
		}
		if it.reset {
			// Catch up now rather than at the next live event, which may
			// be long in coming.
			trusted = false
			if !cursor.IsZero() {
				if err := w.catchUp(ctx, cursor, 0); err != nil {
					return err
				}
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
	pattern string
	glob    *bus.Glob
	fn      func(*bus.Event) error
	pos     uint64 // log position delivered (or replayed) through
}

// deliver calls fn once per log position, in order.
func (w *watch) deliver(ev *bus.Event) error {
	if ev.Seq <= w.pos {
		return nil
	}
	w.pos = ev.Seq
	return w.fn(ev)
}

// receive turns the subscription's messages into live items. zmq4 reports a
// dropped connection as a receive error after it has reconnected.
func (w *watch) receive(ctx context.Context, sub zmq4.Socket, live chan<- liveItem, done chan<- struct{}) {
	defer close(done)
	for {
		msg, err := sub.Recv()
		if ctx.Err() != nil {
			return
		}
		var it liveItem
		if err != nil {
			it.reset = true
		} else if it.ev = decodeLive(msg.Frames); it.ev == nil || (w.glob != nil && !w.glob.Match(it.ev.Tag)) {
			continue
		}
		select {
		case live <- it:
		case <-ctx.Done():
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
	ev, err := decodeEnvelope(frames[2])
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
