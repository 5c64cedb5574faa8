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
)

// runtime is what Run attaches: the bus and the dead-letter store, which
// redrive needs too.
type runtime struct {
	bus bus.Bus
	dlq DeadLetters
}

// Run reacts to events from b until ctx ends. Events come from the durable
// consumer cfg.Consumer and are handed to cfg.Workers workers; when all are
// busy the consumer stops pulling (back-pressure; the bus holds the rest,
// nothing is dropped). An event is acknowledged once all its reactions
// finished or were dead-lettered; when Run stops, unfinished events stay
// unacknowledged and are redelivered to the next reactor. dlq may be nil:
// exhausted reactions are then only reported.
func (r *Reactor) Run(ctx context.Context, b bus.Bus, dlq DeadLetters) error {
	if !r.runtime.CompareAndSwap(nil, &runtime{bus: b, dlq: dlq}) {
		return errors.New("reactor: already running")
	}
	defer r.runtime.Store(nil)
	cfg := r.Config()
	work := make(chan *bus.Delivery)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Go(func() {
			for d := range work {
				r.handle(ctx, b, dlq, d)
			}
		})
	}
	sub, err := b.Consume(ctx, bus.ConsumerConfig{
		Name:        cfg.Consumer,
		AckWait:     cfg.AckWait,
		MaxInFlight: cfg.Workers * 4,
	}, func(ctx context.Context, d *bus.Delivery) {
		select {
		case work <- d:
		case <-ctx.Done():
			// Stopping: hand it back now rather than after AckWait.
			_ = d.Nak(0)
		}
	})
	if err != nil {
		close(work)
		wg.Wait()
		return fmt.Errorf("reactor: %w", err)
	}
	r.log.Info("reactor running", "consumer", cfg.Consumer, "workers", cfg.Workers, "max_depth", cfg.MaxDepth)
	<-ctx.Done()
	sub.Stop()
	close(work)
	wg.Wait()
	return nil
}

// handle reacts to one delivered event and settles it.
func (r *Reactor) handle(ctx context.Context, pub Publisher, dlq DeadLetters, d *bus.Delivery) {
	ev := d.Event
	m := r.mapv.Load()
	if !m.matches(ev.Tag) {
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
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = d.InProgress()
			case <-stop:
				return
			}
		}
	}()
	data, err := ev.DataMap()
	if err != nil {
		r.fireError(ctx, pub, ev, &Error{Stage: StageRender, Err: err})
		r.ack(d)
		return
	}
	plan := r.Plan(ctx, ev.Tag, data)
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
