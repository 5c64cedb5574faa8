package natsbus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/fnmatch"
)

type subscription struct {
	b    *Bus
	cc   jetstream.ConsumeContext
	once sync.Once
	stop chan struct{}
}

func (s *subscription) Stop() {
	s.once.Do(func() {
		close(s.stop)
		s.cc.Stop()
		<-s.cc.Closed()
		s.b.untrack(s)
	})
}

// start wires ctx cancellation to Stop and registers s with the bus.
func (s *subscription) start(ctx context.Context) error {
	if err := s.b.track(s); err != nil {
		s.cc.Stop()
		return err
	}
	go func() {
		select {
		case <-ctx.Done():
			s.Stop()
		case <-s.stop:
		}
	}()
	return nil
}

func compile(pattern string) *fnmatch.Glob {
	if pattern == "" || pattern == "*" {
		return nil
	}
	return fnmatch.Compile(pattern)
}

// durable waits, on the embedded server, until the message received at got
// is on disk.
func (b *Bus) durable(ctx context.Context, md *jetstream.MsgMetadata, got time.Time) error {
	if b.sync == nil {
		return nil
	}
	return b.sync.stored(ctx, md.Sequence.Stream, got)
}

// filterSubjects is what a consumer for g asks the server for: the events
// under filterSubject(g), and the batches, which any event may be in.
func filterSubjects(g *fnmatch.Glob) []string {
	f := filterSubject(g)
	if f == subjectPrefix+".>" {
		return []string{f}
	}
	return []string{f, batchSubject}
}

// matching keeps the events after position after that g matches.
func matching(evs []*bus.Event, g *fnmatch.Glob, after uint64) []*bus.Event {
	keep := evs[:0]
	for _, ev := range evs {
		if ev.Seq > after && (g == nil || g.Match(ev.Tag)) {
			keep = append(keep, ev)
		}
	}
	return keep
}

// Subscribe delivers matching events in log order through an ordered
// consumer, which recovers from gaps itself, so a subscriber never misses an
// event that was stored while it was connected.
func (b *Bus) Subscribe(ctx context.Context, opts bus.SubscribeOptions, fn func(*bus.Event)) (bus.Subscription, error) {
	g := compile(opts.Pattern)
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects:    filterSubjects(g),
		DeliverPolicy:     jetstream.DeliverNewPolicy,
		InactiveThreshold: 10 * time.Second,
	}
	var skipThrough uint64
	switch since := opts.Since; {
	case since.AfterSeq > 0:
		seq, _ := splitPosition(since.AfterSeq)
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, max(seq, 1)
		skipThrough = since.AfterSeq
	case since.AfterID != "":
		pos, err := b.positionOfID(ctx, since.AfterID)
		if err != nil {
			return nil, err
		}
		seq, _ := splitPosition(pos)
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, seq
		skipThrough = pos
	case !since.Time.IsZero():
		t := since.Time
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &t
	}
	cons, err := b.js.OrderedConsumer(ctx, StreamName, cfg)
	if err != nil {
		return nil, fmt.Errorf("subscribe %q: %w", opts.Pattern, err)
	}
	s := &subscription{b: b, stop: make(chan struct{})}
	s.cc, err = cons.Consume(func(m jetstream.Msg) {
		got := time.Now()
		evs, md, err := b.decode(m)
		if err != nil {
			b.cfg.Logger.Error("skipping unreadable event", "err", err)
			return
		}
		if evs = matching(evs, g, skipThrough); len(evs) == 0 {
			return
		}
		if err := b.durable(ctx, md, got); err != nil {
			b.cfg.Logger.Error("event store sync", "err", err)
			return
		}
		for _, ev := range evs {
			select {
			case <-s.stop:
				return
			default:
				fn(ev)
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe %q: %w", opts.Pattern, err)
	}
	return s, s.start(ctx)
}

// positionOfID finds an event's log position from its id: UUIDv7 ids carry
// their creation time, and an event is stored after it was created, so the
// search starts there.
func (b *Bus) positionOfID(ctx context.Context, id string) (uint64, error) {
	t, err := bus.IDTime(id)
	if err != nil {
		return 0, err
	}
	t = t.Add(-time.Millisecond)
	cons, err := b.js.OrderedConsumer(ctx, StreamName, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &t,
	})
	if err != nil {
		return 0, fmt.Errorf("find event %s: %w", id, err)
	}
	for {
		batch, err := cons.Fetch(512, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return 0, fmt.Errorf("find event %s: %w", id, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			if single := m.Headers().Get(jetstream.MsgIDHeader); single != "" && single != id {
				continue
			}
			evs, _, err := b.decode(m)
			if err != nil {
				return 0, fmt.Errorf("find event %s: %w", id, err)
			}
			for _, ev := range evs {
				if ev.ID == id {
					return ev.Seq, nil
				}
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("find event %s: %w", id, err)
		}
		if n == 0 {
			return 0, fmt.Errorf("event %s is not in the log (expired or never stored)", id)
		}
	}
}

// Consume runs a durable, explicitly acknowledged consumer. Events the
// pattern does not match are acknowledged without calling fn.
func (b *Bus) Consume(ctx context.Context, cfg bus.ConsumerConfig, fn func(context.Context, *bus.Delivery)) (bus.Subscription, error) {
	if cfg.Name == "" {
		return nil, errors.New("consume: a consumer name is required")
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 30 * time.Second
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 1024
	}
	g := compile(cfg.Pattern)
	jcfg := jetstream.ConsumerConfig{
		Durable:        cfg.Name,
		Description:    "brine consumer " + cfg.Name,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        cfg.AckWait,
		MaxAckPending:  cfg.MaxInFlight,
		MaxDeliver:     -1,
		FilterSubjects: filterSubjects(g),
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	}
	if cfg.DeliverNew {
		jcfg.DeliverPolicy = jetstream.DeliverNewPolicy
	}
	var cons jetstream.Consumer
	err := b.admin(ctx, func(ctx context.Context) error {
		c, err := b.js.Consumer(ctx, StreamName, cfg.Name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			c, err = b.js.CreateConsumer(ctx, StreamName, jcfg)
			if errors.Is(err, jetstream.ErrConsumerExists) {
				return errAgain // another master created it meanwhile
			}
		} else if err == nil {
			// Keep the consumer's position; update what may change.
			upd := jcfg
			upd.DeliverPolicy = c.CachedInfo().Config.DeliverPolicy
			upd.OptStartSeq = c.CachedInfo().Config.OptStartSeq
			upd.OptStartTime = c.CachedInfo().Config.OptStartTime
			c, err = b.js.UpdateConsumer(ctx, StreamName, upd)
		}
		cons = c
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	s := &subscription{b: b, stop: make(chan struct{})}
	settled := &batchAcks{done: make(map[uint64]map[uint64]bool)}
	s.cc, err = cons.Consume(func(m jetstream.Msg) {
		got := time.Now()
		evs, md, err := b.decode(m)
		if err != nil {
			b.cfg.Logger.Error("dropping unreadable event", "consumer", cfg.Name, "err", err)
			_ = m.Term()
			return
		}
		single := len(evs) == 1
		if evs = matching(evs, g, 0); len(evs) == 0 {
			_ = m.Ack()
			return
		}
		if err := b.durable(ctx, md, got); err != nil {
			b.cfg.Logger.Error("event store sync; redelivering", "consumer", cfg.Name, "err", err)
			_ = m.Nak()
			return
		}
		if single {
			fn(ctx, &bus.Delivery{Event: evs[0], Attempt: int(md.NumDelivered), Acker: acker{m}})
			return
		}
		for _, ea := range settled.track(m, md.Sequence.Stream, evs) {
			fn(ctx, &bus.Delivery{Event: ea.ev, Attempt: int(md.NumDelivered), Acker: ea})
		}
	},
		// The server never has more than MaxInFlight unacknowledged, so a
		// larger pull costs nothing; a pull no larger than MaxInFlight can
		// be left waiting on the server until it expires (observed: 30 s
		// stalls with a backlog and one in flight), and a short expiry
		// bounds whatever else might strand a pull.
		jetstream.PullMaxMessages(1024), jetstream.PullExpiry(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	return s, s.start(ctx)
}

// acker adapts a JetStream message to bus.Acker.
type acker struct{ m jetstream.Msg }

func (a acker) Ack() error { return a.m.Ack() }

func (a acker) Nak(delay time.Duration) error {
	if delay <= 0 {
		return a.m.Nak()
	}
	return a.m.NakWithDelay(delay)
}

func (a acker) InProgress() error { return a.m.InProgress() }

// batchAcks settles batches for a durable consumer: a batch is acknowledged
// once each of its events is, and when one asks for redelivery the whole
// message comes back, so the events acknowledged before are remembered and
// not handed out again.
type batchAcks struct {
	mu   sync.Mutex
	done map[uint64]map[uint64]bool // stream seq → positions acknowledged
}

// track returns an acker for each event of the batch at seq not yet
// acknowledged in an earlier delivery.
func (a *batchAcks) track(m jetstream.Msg, seq uint64, evs []*bus.Event) []*eventAck {
	a.mu.Lock()
	done := a.done[seq]
	a.mu.Unlock()
	ma := &msgAck{m: m, seq: seq, acks: a}
	out := make([]*eventAck, 0, len(evs))
	for _, ev := range evs {
		if !done[ev.Seq] {
			out = append(out, &eventAck{ma: ma, ev: ev})
		}
	}
	ma.pending = len(out)
	if len(out) == 0 {
		_ = m.Ack()
		a.forget(seq)
	}
	return out
}

func (a *batchAcks) forget(seq uint64) {
	a.mu.Lock()
	delete(a.done, seq)
	a.mu.Unlock()
}

func (a *batchAcks) remember(seq uint64, acked []uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	done := a.done[seq]
	if done == nil {
		done = make(map[uint64]bool, len(acked))
		a.done[seq] = done
	}
	for _, pos := range acked {
		done[pos] = true
	}
}

// msgAck is one delivery of a batch, settled when all its events are.
type msgAck struct {
	m    jetstream.Msg
	seq  uint64
	acks *batchAcks

	mu      sync.Mutex
	pending int
	acked   []uint64
	nak     bool
	delay   time.Duration
}

func (ma *msgAck) settle(pos uint64, nak bool, delay time.Duration) error {
	ma.mu.Lock()
	if nak {
		ma.nak, ma.delay = true, max(ma.delay, delay)
	} else {
		ma.acked = append(ma.acked, pos)
	}
	ma.pending--
	last := ma.pending == 0
	ma.mu.Unlock()
	if !last {
		return nil
	}
	if !ma.nak {
		ma.acks.forget(ma.seq)
		return ma.m.Ack()
	}
	ma.acks.remember(ma.seq, ma.acked)
	return acker{ma.m}.Nak(ma.delay)
}

// eventAck is the bus.Acker of one event in a batch.
type eventAck struct {
	ma   *msgAck
	ev   *bus.Event
	once sync.Once
}

func (e *eventAck) Ack() error { return e.settle(false, 0) }

func (e *eventAck) Nak(delay time.Duration) error { return e.settle(true, delay) }

func (e *eventAck) InProgress() error { return e.ma.m.InProgress() }

func (e *eventAck) settle(nak bool, delay time.Duration) error {
	var err error
	e.once.Do(func() { err = e.ma.settle(e.ev.Seq, nak, delay) })
	return err
}
