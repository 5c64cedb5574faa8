package natsbus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/brinehq/brine/bus"
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

func compile(pattern string) *bus.Glob {
	if pattern == "" || pattern == "*" {
		return nil
	}
	return bus.CompileGlob(pattern)
}

// durable waits, on the embedded server, until the message is on disk.
func (b *Bus) durable(ctx context.Context, md *jetstream.MsgMetadata) error {
	if b.sync == nil {
		return nil
	}
	return b.sync.durable(ctx, md.Timestamp)
}

// decode turns a stored message back into an event with its log position.
func (b *Bus) decode(m jetstream.Msg) (*bus.Event, *jetstream.MsgMetadata, error) {
	md, err := m.Metadata()
	if err != nil {
		return nil, nil, fmt.Errorf("message metadata: %w", err)
	}
	ev, err := bus.DecodeStored(m.Data())
	if err != nil {
		return nil, md, fmt.Errorf("stored event at seq %d: %w", md.Sequence.Stream, err)
	}
	ev.Seq = md.Sequence.Stream
	return ev, md, nil
}

// Subscribe delivers matching events in log order through an ordered
// consumer, which recovers from gaps itself, so a subscriber never misses an
// event that was stored while it was connected.
func (b *Bus) Subscribe(ctx context.Context, opts bus.SubscribeOptions, fn func(*bus.Event)) (bus.Subscription, error) {
	g := compile(opts.Pattern)
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{filterSubject(g)},
		DeliverPolicy:     jetstream.DeliverNewPolicy,
		InactiveThreshold: 10 * time.Second,
	}
	var skipThrough uint64
	switch since := opts.Since; {
	case since.AfterSeq > 0:
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, since.AfterSeq+1
	case since.AfterID != "":
		seq, err := b.seqOfID(ctx, since.AfterID)
		if err != nil {
			return nil, err
		}
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, seq+1
		skipThrough = seq
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
		ev, md, err := b.decode(m)
		if err != nil {
			b.cfg.Logger.Error("skipping unreadable event", "err", err)
			return
		}
		if ev.Seq <= skipThrough || (g != nil && !g.Match(ev.Tag)) {
			return
		}
		if err := b.durable(ctx, md); err != nil {
			b.cfg.Logger.Error("event store sync", "err", err)
			return
		}
		select {
		case <-s.stop:
		default:
			fn(ev)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe %q: %w", opts.Pattern, err)
	}
	return s, s.start(ctx)
}

// seqOfID finds an event's log position from its id: UUIDv7 ids carry their
// creation time, and an event is stored after it was created, so the search
// starts there.
func (b *Bus) seqOfID(ctx context.Context, id string) (uint64, error) {
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
			if m.Headers().Get(jetstream.MsgIDHeader) == id {
				md, err := m.Metadata()
				if err != nil {
					return 0, fmt.Errorf("find event %s: %w", id, err)
				}
				return md.Sequence.Stream, nil
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
		Durable:       cfg.Name,
		Description:   "brine consumer " + cfg.Name,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxAckPending: cfg.MaxInFlight,
		MaxDeliver:    -1,
		FilterSubject: filterSubject(g),
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	if cfg.DeliverNew {
		jcfg.DeliverPolicy = jetstream.DeliverNewPolicy
	}
	cons, err := b.js.Consumer(ctx, StreamName, cfg.Name)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		cons, err = b.js.CreateConsumer(ctx, StreamName, jcfg)
	} else if err == nil {
		// Keep the consumer's position; update what may change.
		jcfg.DeliverPolicy = cons.CachedInfo().Config.DeliverPolicy
		jcfg.OptStartSeq = cons.CachedInfo().Config.OptStartSeq
		jcfg.OptStartTime = cons.CachedInfo().Config.OptStartTime
		cons, err = b.js.UpdateConsumer(ctx, StreamName, jcfg)
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	s := &subscription{b: b, stop: make(chan struct{})}
	s.cc, err = cons.Consume(func(m jetstream.Msg) {
		ev, md, err := b.decode(m)
		if err != nil {
			b.cfg.Logger.Error("dropping unreadable event", "consumer", cfg.Name, "err", err)
			_ = m.Term()
			return
		}
		if g != nil && !g.Match(ev.Tag) {
			_ = m.Ack()
			return
		}
		if err := b.durable(ctx, md); err != nil {
			b.cfg.Logger.Error("event store sync; redelivering", "consumer", cfg.Name, "err", err)
			_ = m.Nak()
			return
		}
		fn(ctx, &bus.Delivery{Event: ev, Attempt: int(md.NumDelivered), Acker: acker{m}})
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
