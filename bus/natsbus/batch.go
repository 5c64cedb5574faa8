package natsbus

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/brinehq/brine/bus"
)

// On the embedded server, concurrent Publish calls are stored together: the
// events that queue up while earlier messages are on their way to the server
// become one JetStream message (a batch), so the server's per-message work
// (ingest, store, acknowledge, deliver to each consumer) is paid once per
// batch instead of once per event. A lone event is stored as it always was,
// one message with its id as Nats-Msg-Id, so an idle or lightly loaded bus
// adds no latency and its log reads the same to any NATS tool.
//
// A batch is a message on batchSubject with the header batchHeader (the
// number of events) whose body is the events' stored encodings, one per
// line. The events keep one log position each: Seq = stream sequence ×
// posScale + index in the message.
const (
	// batchSubject holds batches. No tag maps to it: an escaped segment
	// never yields `%%`.
	batchSubject = subjectPrefix + ".%%"
	batchHeader  = "Brine-Batch"
	// posScale bounds a batch: it is also the most events one holds.
	posScale = 1000
	// batchInFlight is how many messages may wait for the server's
	// acknowledgement before publishing waits; events queue meanwhile and
	// leave together in the next message.
	batchInFlight = 4
)

// Position is the log position (bus.Event.Seq) of the index-th event of the
// stream message seq; tools and tests that read the stream directly use it.
func Position(seq uint64, index int) uint64 { return seq*posScale + uint64(index) }

// splitPosition is the inverse of position.
func splitPosition(pos uint64) (seq uint64, index int) { return pos / posScale, int(pos % posScale) }

// decode turns a stored message into its events with their log positions.
func (b *Bus) decode(m jetstream.Msg) ([]*bus.Event, *jetstream.MsgMetadata, error) {
	md, err := m.Metadata()
	if err != nil {
		return nil, nil, fmt.Errorf("message metadata: %w", err)
	}
	evs, err := decodeMessage(m.Headers(), m.Data(), md.Sequence.Stream)
	return evs, md, err
}

func decodeMessage(h nats.Header, data []byte, seq uint64) ([]*bus.Event, error) {
	if h.Get(batchHeader) == "" {
		ev, err := bus.DecodeStored(data)
		if err != nil {
			return nil, fmt.Errorf("stored event at seq %d: %w", seq, err)
		}
		ev.Seq = Position(seq, 0)
		return []*bus.Event{ev}, nil
	}
	n, err := strconv.Atoi(h.Get(batchHeader))
	if err != nil || n < 1 || n > posScale {
		return nil, fmt.Errorf("stored batch at seq %d: bad %s header %q", seq, batchHeader, h.Get(batchHeader))
	}
	evs := make([]*bus.Event, 0, n)
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		ev, err := bus.DecodeStored(line)
		if err != nil {
			return nil, fmt.Errorf("stored batch at seq %d, event %d: %w", seq, len(evs), err)
		}
		ev.Seq = Position(seq, len(evs))
		evs = append(evs, ev)
	}
	if len(evs) != n {
		return nil, fmt.Errorf("stored batch at seq %d: %d events, header says %d", seq, len(evs), n)
	}
	return evs, nil
}

// queued is one Publish waiting for its message to be acknowledged.
type queued struct {
	id, tag string
	data    []byte
	done    chan stored
}

// stored is the server's answer for a queued event: the stream sequence of
// the message holding it (0 for a duplicate, stored before), or an error.
type stored struct {
	seq uint64
	err error
}

// batcher is the embedded bus's single publisher.
type batcher struct {
	js      jetstream.JetStream
	maxSize int
	seen    *idIndex

	mu     sync.Mutex
	queue  []*queued
	closed bool
	wake   chan struct{}
	slots  chan struct{}
	wg     sync.WaitGroup
	exited chan struct{}
}

func newBatcher(js jetstream.JetStream, maxSize int, seen *idIndex) *batcher {
	t := &batcher{js: js, maxSize: maxSize, seen: seen,
		wake: make(chan struct{}, 1), slots: make(chan struct{}, batchInFlight), exited: make(chan struct{})}
	go t.run()
	return t
}

// publish queues an event and returns the stream sequence of the message
// holding it once the server acknowledged it (the caller then waits for the
// sync).
func (t *batcher) publish(ctx context.Context, ev *bus.Event, data []byte) (uint64, error) {
	q := &queued{id: ev.ID, tag: ev.Tag, data: data, done: make(chan stored, 1)}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return 0, bus.ErrClosed
	}
	t.queue = append(t.queue, q)
	select {
	case t.wake <- struct{}{}:
	default:
	}
	t.mu.Unlock()
	select {
	case r := <-q.done:
		return r.seq, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (t *batcher) run() {
	defer close(t.exited)
	for range t.wake {
		for {
			// Wait for a slot before taking from the queue, so that what
			// arrives meanwhile leaves in this message.
			t.slots <- struct{}{}
			batch := t.take()
			if len(batch) == 0 {
				<-t.slots
				break
			}
			t.send(batch)
		}
		t.mu.Lock()
		closed := t.closed && len(t.queue) == 0
		t.mu.Unlock()
		if closed {
			return
		}
	}
}

// take removes the next message's worth of events from the queue.
func (t *batcher) take() []*queued {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, size := 0, 0
	for n < len(t.queue) && n < posScale {
		size += len(t.queue[n].data) + 1
		if n > 0 && size > t.maxSize {
			break
		}
		n++
	}
	batch := make([]*queued, n)
	copy(batch, t.queue)
	t.queue = t.queue[n:]
	if len(t.queue) == 0 {
		t.queue = nil
	}
	return batch
}

// send publishes batch as one message, leaving out the events already
// stored (a re-sent id), and settles every caller when the server answers.
func (t *batcher) send(batch []*queued) {
	keep := batch[:0]
	var dups []*queued
	now := time.Now()
	for _, q := range batch {
		if !t.seen.add(q.id, now) {
			dups = append(dups, q)
			continue
		}
		keep = append(keep, q)
	}
	for _, q := range dups {
		q.done <- stored{} // stored before; the caller's sync covers it
	}
	if len(keep) == 0 {
		<-t.slots
		return
	}
	var msg *nats.Msg
	if len(keep) == 1 {
		msg = &nats.Msg{Subject: Subject(keep[0].tag), Data: keep[0].data, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, keep[0].id)
	} else {
		size := 0
		for _, q := range keep {
			size += len(q.data) + 1
		}
		data := make([]byte, 0, size)
		for i, q := range keep {
			if i > 0 {
				data = append(data, '\n')
			}
			data = append(data, q.data...)
		}
		msg = &nats.Msg{Subject: batchSubject, Data: data, Header: nats.Header{}}
		msg.Header.Set(batchHeader, strconv.Itoa(len(keep)))
	}
	f, err := t.js.PublishMsgAsync(msg, jetstream.WithStallWait(time.Minute))
	if err != nil {
		t.settle(keep, stored{err: err})
		return
	}
	t.wg.Go(func() {
		select {
		case ack := <-f.Ok():
			t.settle(keep, stored{seq: ack.Sequence})
		case err := <-f.Err():
			t.settle(keep, stored{err: err})
		}
	})
}

func (t *batcher) settle(batch []*queued, r stored) {
	<-t.slots
	for _, q := range batch {
		if r.err != nil {
			// Not stored: a retry must not be taken for a duplicate.
			t.seen.remove(q.id)
		}
		q.done <- r
	}
}

// close refuses new events, publishes those queued and waits for every
// acknowledgement.
func (t *batcher) close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	close(t.wake)
	t.mu.Unlock()
	<-t.exited
	t.wg.Wait()
}
