package natsbus

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

const (
	// maxRememberedIDs bounds the duplicate index (about 40 MB when full):
	// at sustained full speed it covers less than the window, at any
	// ordinary rate all of it.
	maxRememberedIDs = 1 << 20
	// rescanMessages is how far back Open looks to rebuild the index.
	rescanMessages = 1 << 16
)

// idIndex remembers the ids of the events stored in the last window, which
// JetStream's own duplicate detection (one Nats-Msg-Id per message) cannot do
// for events stored in a batch. It keys by a 64-bit hash of the id: a false
// match needs a collision among about a million ids, odds of 1 in 10^13.
type idIndex struct {
	window time.Duration
	seed   maphash.Seed

	mu   sync.Mutex
	at   map[uint64]int64 // id hash → when it was stored (Unix ns)
	fifo []idEntry        // in the order added; head is the oldest
	head int
}

type idEntry struct {
	h  uint64
	at int64
}

func newIDIndex(window time.Duration) *idIndex {
	return &idIndex{window: window, seed: maphash.MakeSeed(), at: make(map[uint64]int64)}
}

// add records id as stored at now; false means it already was.
func (x *idIndex) add(id string, now time.Time) bool {
	h := maphash.String(x.seed, id)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.expire(now)
	if _, ok := x.at[h]; ok {
		return false
	}
	t := now.UnixNano()
	x.at[h] = t
	x.fifo = append(x.fifo, idEntry{h, t})
	return true
}

// remove forgets id: its store failed, and a retry is not a duplicate.
func (x *idIndex) remove(id string) {
	h := maphash.String(x.seed, id)
	x.mu.Lock()
	delete(x.at, h)
	x.mu.Unlock()
}

func (x *idIndex) expire(now time.Time) {
	cutoff := now.Add(-x.window).UnixNano()
	for x.head < len(x.fifo) {
		e := x.fifo[x.head]
		if e.at >= cutoff && len(x.fifo)-x.head <= maxRememberedIDs {
			break
		}
		if x.at[e.h] == e.at {
			delete(x.at, e.h)
		}
		x.head++
	}
	if x.head > 4096 && x.head > len(x.fifo)/2 {
		x.fifo = append(x.fifo[:0], x.fifo[x.head:]...)
		x.head = 0
	}
}

// rememberStored fills the index from the newest messages of the log, so a
// client that re-sends after a restart of the master is still recognised.
func (b *Bus) rememberStored(ctx context.Context) error {
	info, err := b.stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream info: %w", err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 {
		return nil
	}
	start := info.State.FirstSeq
	if last > rescanMessages && last-rescanMessages+1 > start {
		start = last - rescanMessages + 1
	}
	cons, err := b.js.OrderedConsumer(ctx, StreamName, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start,
	})
	if err != nil {
		return fmt.Errorf("read recent events: %w", err)
	}
	cutoff := time.Now().Add(-b.cfg.Duplicates)
	for seq := start - 1; seq < last; {
		// Asking for no more than remain keeps the last batch from waiting
		// out FetchMaxWait for messages that do not exist (a second on
		// every restart).
		batch, err := cons.Fetch(int(min(1024, last-seq)), jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return fmt.Errorf("read recent events: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("read recent events: %w", err)
			}
			seq = md.Sequence.Stream
			if md.Timestamp.Before(cutoff) {
				continue
			}
			if id := m.Headers().Get(jetstream.MsgIDHeader); id != "" {
				b.seen.add(id, md.Timestamp)
				continue
			}
			evs, err := decodeMessage(m.Headers(), m.Data(), seq)
			if err != nil {
				b.cfg.Logger.Warn("unreadable stored message; its ids are not remembered", "err", err)
				continue
			}
			for _, ev := range evs {
				b.seen.add(ev.ID, md.Timestamp)
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("read recent events: %w", err)
		}
		if n == 0 {
			break
		}
	}
	return nil
}
