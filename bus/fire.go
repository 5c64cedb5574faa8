package bus

import (
	"context"
	"slices"
	"sync"
)

// Fire builds an event from tag, data and origin and publishes it: the one
// way brine's parts fire events of their own. It returns the event stored.
func Fire(ctx context.Context, p Publisher, tag string, data map[string]any, o Origin) (*Event, error) {
	ev, err := NewEvent(tag, data, o)
	if err != nil {
		return nil, err
	}
	if err := p.Publish(ctx, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// Emitter fires the events of one part of the master under its source
// (brine://<master>/<part>).
type Emitter struct {
	Publisher Publisher
	Source    string
}

// Fire fires an event of the part, caused by nothing. Its signature is that
// of function.FireFunc, so a part can hand it to the functions it calls.
func (e Emitter) Fire(ctx context.Context, tag string, data map[string]any) error {
	_, err := Fire(ctx, e.Publisher, tag, data, Origin{Source: e.Source})
	return err
}

// Recorder keeps the events published to it instead of storing them:
// `brine reactor test --execute` prints what a reaction would fire, and
// tests look at it. It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []*Event
}

// Publish implements Publisher.
func (r *Recorder) Publish(_ context.Context, ev *Event) error {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	return nil
}

// Events returns the events published so far, in order.
func (r *Recorder) Events() []*Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}
