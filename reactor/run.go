package reactor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/internal/workers"
)

// runtime is what Run attaches: the bus and the dead-letter store, which
// redrive needs too, and the worker slots.
type runtime struct {
	bus   bus.Bus
	dlq   DeadLetters
	slots chan struct{}
}

// Run reacts to events from b until ctx ends. Events come from the durable
// consumer cfg.Consumer; each is handled in its own goroutine, at most
// cfg.MaxInFlight at once, and reaction functions run in cfg.Workers slots.
// When all are busy the consumer stops pulling (back-pressure; the bus holds
// the rest, nothing is dropped). An event is acknowledged once all its
// reactions finished or were dead-lettered; when Run stops, unfinished
// events are handed back and redelivered to the next reactor. dlq may be
// nil: exhausted reactions are then only reported.
func (r *Reactor) Run(ctx context.Context, b bus.Bus, dlq DeadLetters) error {
	cfg := r.Config()
	if !r.runtime.CompareAndSwap(nil, &runtime{bus: b, dlq: dlq, slots: make(chan struct{}, cfg.Workers)}) {
		return errors.New("reactor: already running")
	}
	defer func() {
		r.runtime.Store(nil)
		r.applied.stop()
	}()
	inflight := make(chan struct{}, cfg.MaxInFlight)
	pool := workers.New()
	defer pool.Close()
	handler := func(ctx context.Context, d *bus.Delivery) {
		select {
		case inflight <- struct{}{}:
		case <-ctx.Done():
			// Stopping: hand it back now rather than after AckWait.
			_ = d.Nak(0)
			return
		}
		pool.Go(func() {
			defer func() { <-inflight }()
			r.handle(ctx, b, dlq, d)
		})
	}
	r.log.Info("reactor running", "consumer", cfg.Consumer, "workers", cfg.Workers, "max_depth", cfg.MaxDepth)
	pattern := ""
	var sub bus.Subscription
	defer func() {
		if sub != nil {
			sub.Stop()
		}
	}()
	for {
		// The bus filters by the mapping's common prefix, so the reactor is
		// not handed (and need not acknowledge) events no entry can match,
		// such as its own job events.
		g := r.generation.Load()
		if p := consumerPattern(r.Config().Mapping); sub == nil || p != pattern {
			if sub != nil {
				sub.Stop()
			}
			pattern = p
			var err error
			if sub, err = b.Consume(ctx, bus.ConsumerConfig{
				Name:        cfg.Consumer,
				Pattern:     pattern,
				AckWait:     cfg.AckWait,
				MaxInFlight: cap(inflight),
			}, handler); err != nil {
				return fmt.Errorf("reactor: %w", err)
			}
		}
		r.applied.set(g)
		select {
		case <-ctx.Done():
			return nil
		case <-r.remapped:
		}
	}
}

// remapTimeout bounds how long Reload waits for Run to re-subscribe.
const remapTimeout = 10 * time.Second

// applied is the mapping generation Run has subscribed for.
type applied struct {
	mu      sync.Mutex
	gen     uint64
	stopped bool
	changed chan struct{} // closed and replaced on every change
}

func (a *applied) set(g uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen, a.stopped = g, false
	a.broadcast()
}

func (a *applied) stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopped = true
	a.broadcast()
}

func (a *applied) broadcast() {
	if a.changed != nil {
		close(a.changed)
	}
	a.changed = make(chan struct{})
}

// wait returns when generation g is applied, Run has stopped, or after d.
func (a *applied) wait(g uint64, d time.Duration) {
	timeout := time.After(d)
	for {
		a.mu.Lock()
		if a.gen >= g || a.stopped {
			a.mu.Unlock()
			return
		}
		if a.changed == nil {
			a.changed = make(chan struct{})
		}
		ch := a.changed
		a.mu.Unlock()
		select {
		case <-ch:
		case <-timeout:
			return
		}
	}
}

// consumerPattern is a glob matching every tag some entry matches: the
// entries' longest common literal prefix, then `*`.
func consumerPattern(entries []MapEntry) string {
	if len(entries) == 0 {
		return ""
	}
	prefix := fnmatch.Compile(entries[0].Glob).Prefix()
	literal := prefix == entries[0].Glob
	for _, e := range entries[1:] {
		p := fnmatch.Compile(e.Glob).Prefix()
		literal = literal && p == e.Glob && p == prefix
		n := 0
		for n < len(p) && n < len(prefix) && p[n] == prefix[n] {
			n++
		}
		prefix = prefix[:n]
	}
	if literal || prefix == "" {
		return prefix
	}
	// A literal prefix holds no wildcard, but may hold an unclosed `[`.
	return strings.ReplaceAll(prefix, "[", "[[]") + "*"
}

// acquire takes a worker slot for a reaction function; outside Run (reactor
// test) there is no bound.
func (r *Reactor) acquire(ctx context.Context) (release func(), ok bool) {
	rt := r.runtime.Load()
	if rt == nil {
		return func() {}, true
	}
	select {
	case rt.slots <- struct{}{}:
		return func() { <-rt.slots }, true
	case <-ctx.Done():
		return nil, false
	}
}

// handle reacts to one delivered event and settles it.
func (r *Reactor) handle(ctx context.Context, pub bus.Publisher, dlq DeadLetters, d *bus.Delivery) {
	ev := d.Event
	if r.Matches(ev.Tag) == 0 {
		r.ack(d)
		return
	}
	cfg := r.cfg.Load()
	if ev.Depth > cfg.MaxDepth {
		// Cut the chain. The notice itself is never reacted to further
		// (it is deeper still), so a chain yields exactly one.
		if !strings.HasPrefix(ev.Tag, "brine/reactor/") {
			r.stats.LoopsCut.Add(1)
			r.log.Warn("reactor: causal chain cut", "tag", ev.Tag, "event", ev.ID, "depth", ev.Depth, "max_depth", cfg.MaxDepth)
			r.fire(ctx, pub, ev, TagLoop, map[string]any{
				"tag": ev.Tag, "event": ev.ID, "cause": ev.Cause, "depth": ev.Depth, "max_depth": cfg.MaxDepth,
				"message": fmt.Sprintf("not reacting to %s: it is %d reactions deep, more than reactor_max_depth %d; the chain is probably a loop",
					ev.Tag, ev.Depth, cfg.MaxDepth),
			})
		}
		r.ack(d)
		return
	}
	r.stats.Events.Add(1)
	// Keep the delivery alive while reactions run or wait to retry.
	defer d.KeepAlive(cfg.AckWait / 3)()
	data, err := ev.DataMap()
	if err != nil {
		r.fireError(ctx, pub, ev, &Error{Stage: StageRender, Err: err})
		r.ack(d)
		return
	}
	plan := r.plan(ctx, ev.Tag, data, false)
	plan.Reactions = r.dropOwn(ev, data, plan.Reactions)
	for _, e := range plan.Errors {
		r.fireError(ctx, pub, ev, e)
	}
	if ctx.Err() == nil {
		results := r.Execute(ctx, ev, plan.Reactions, pub, dlq)
		if !slices.ContainsFunc(results, func(res Result) bool { return errors.Is(res.Err, errInterrupted) }) {
			r.ack(d)
			return
		}
	}
	// Unfinished: redeliver. If the bus is gone (a crash), the bus
	// redelivers after AckWait anyway.
	_ = d.Nak(0)
}

func (r *Reactor) ack(d *bus.Delivery) {
	if err := d.Ack(); err != nil {
		r.log.Warn("reactor: ack failed; the event will be redelivered", "tag", d.Event.Tag, "event", d.Event.ID, "err", err)
	}
}
