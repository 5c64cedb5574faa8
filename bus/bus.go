package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Bus carries every event. Implementations must make Publish durable: when it
// returns nil, the event survives a crash of the process that published it.
type Bus interface {
	Publisher

	// Subscribe delivers, in order, the events whose tag matches opts.Pattern:
	// first the stored ones from opts.Since (if set), then live ones. A
	// subscription has no durable state; it ends when ctx ends or Stop is called.
	Subscribe(ctx context.Context, opts SubscribeOptions, fn func(*Event)) (Subscription, error)

	// Consume attaches to the durable consumer cfg.Name, creating it if needed,
	// and calls fn for each matching event until acknowledged. Several
	// processes attached to the same name share the work; an event whose
	// handler did not Ack is redelivered, also after a crash.
	Consume(ctx context.Context, cfg ConsumerConfig, fn func(context.Context, *Delivery)) (Subscription, error)

	// Close stops all subscriptions and releases the connection.
	Close() error
}

// Publisher stores events durably; every Bus is one. Parts of brine that
// fire events take a Publisher, so that they can be given the bus, a test's
// recorder or `reactor test`'s printer.
type Publisher interface {
	// Publish stores ev durably and returns when it is stored. Publishing an
	// event whose id was already stored is not an error and stores nothing.
	Publish(ctx context.Context, ev *Event) error
}

// Subscription is a running Subscribe or Consume.
type Subscription interface {
	// Stop ends delivery; a handler already running finishes first.
	Stop()
}

// SubscribeOptions select what a live subscription receives.
type SubscribeOptions struct {
	// Pattern is a Salt glob on the tag; empty matches everything.
	Pattern string
	// Since replays stored events before following live ones: an event id
	// (replay starts after it) or a time (replay starts at it). Empty means
	// only new events.
	Since Since
}

// Since is a starting point in the durable log.
type Since struct {
	// AfterSeq starts right after this log position (Event.Seq).
	AfterSeq uint64
	// AfterID starts right after the event with this id.
	AfterID string
	// Time starts at the first event stored at or after it.
	Time time.Time
}

// IsZero reports whether no starting point is set.
func (s Since) IsZero() bool { return s.AfterSeq == 0 && s.AfterID == "" && s.Time.IsZero() }

// ConsumerConfig describes a durable consumer.
type ConsumerConfig struct {
	// Name identifies the consumer across restarts and processes.
	Name string
	// Pattern is a Salt glob on the tag; empty matches everything.
	Pattern string
	// AckWait is how long a delivery may go unacknowledged before it is
	// redelivered (default 30 s). Long handlers call Delivery.InProgress.
	AckWait time.Duration
	// MaxInFlight bounds unacknowledged deliveries (default 1024): the
	// back-pressure that keeps a slow consumer from being flooded.
	MaxInFlight int
	// DeliverNew starts a new consumer at new events instead of the start of
	// the log. It has no effect on a consumer that exists.
	DeliverNew bool
}

// Delivery is one event handed to a durable consumer.
type Delivery struct {
	Event *Event
	// Attempt counts deliveries of this event to this consumer, from 1.
	Attempt int

	Acker Acker
}

// Acker settles a delivery; the backend provides it.
type Acker interface {
	Ack() error
	Nak(delay time.Duration) error
	InProgress() error
}

// Ack marks the delivery done; it will not be delivered to this consumer again.
func (d *Delivery) Ack() error { return d.Acker.Ack() }

// Nak asks for redelivery after delay.
func (d *Delivery) Nak(delay time.Duration) error { return d.Acker.Nak(delay) }

// InProgress extends the ack deadline of a delivery still being worked on.
func (d *Delivery) InProgress() error { return d.Acker.InProgress() }

// KeepAlive tells the bus every interval that the delivery is still being
// worked on, until stop is called: a handler that may wait long (retries,
// rate limits, an outage) keeps its delivery while it lives, and a short
// AckWait still hands the event to another master soon after a crash.
func (d *Delivery) KeepAlive(every time.Duration) (stop func()) {
	done := make(chan struct{})
	t := time.NewTicker(every)
	go func() {
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = d.InProgress()
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// ErrClosed is returned by a Bus used after Close.
var ErrClosed = errors.New("bus closed")

// Beginning is the Since of the oldest event kept.
var Beginning = Since{Time: time.Unix(0, 0).UTC()}

// ParseSince reads a starting point as operators write it: an event id
// (replay starts after it), an RFC 3339 time (or 2006-01-02[ 15:04:05]),
// a duration back from now (10m), or `all` (or 0) for the oldest event
// kept.
func ParseSince(s string) (Since, error) {
	switch s {
	case "":
		return Since{}, nil
	case "all", "0":
		return Beginning, nil
	}
	if _, err := IDTime(s); err == nil {
		return Since{AfterID: s}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return Since{Time: t}, nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return Since{}, fmt.Errorf("%q: a duration back from now must be positive (all, or 0, is the oldest event kept)", s)
		}
		return Since{Time: time.Now().Add(-d)}, nil
	}
	return Since{}, fmt.Errorf("%q: want an event id, an RFC 3339 time, a duration like 10m, or all", s)
}
