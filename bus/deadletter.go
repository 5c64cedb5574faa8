package bus

import (
	"context"
	"fmt"
	"time"
)

// A durable consumer hands back an event it could not handle, and the bus
// delivers it again: what makes a crash or an outage lose nothing. An event
// that can never be handled (a record no store can write, a payload no
// handler can read) would come back forever, and while it is in flight it
// holds one of the consumer's MaxInFlight places: enough of them stop the
// consumer for good, across restarts. So every consumer gives up on an
// event after MaxAttempts and dead-letters it: a DeadLetterTag event names
// the consumer, the event and the reason, and the event is acknowledged.
// The event itself stays in the log, where `brine event watch --since`
// finds it by id.

// DeadLetterTag is fired for every event a consumer gave up on, with
// consumer, event_id, tag, attempts and error; its cause is that event.
const DeadLetterTag = "brine/bus/dead_letter"

// MaxAttempts is how many times a durable consumer tries one event before
// it dead-letters it, unless the consumer has a policy of its own (the
// reactor's retry: and its dead-letter list).
const MaxAttempts = 10

// GiveUp reports whether the delivery has had its attempts: its Attempt is
// MaxAttempts or more.
func (d *Delivery) GiveUp() bool { return d.Attempt >= MaxAttempts }

// DeadLetter fires DeadLetterTag for d's event under source, saying why
// consumer gave up on it, and then acknowledges the delivery. When the
// dead letter cannot be stored, the delivery is handed back after retry
// instead: an event is never dropped without a record of it.
func DeadLetter(ctx context.Context, p Publisher, source, consumer string, d *Delivery, attempts int, reason error, retry time.Duration) error {
	data := map[string]any{"consumer": consumer, "event_id": d.Event.ID, "tag": d.Event.Tag,
		"attempts": attempts, "error": reason.Error()}
	if _, err := Fire(ctx, p, DeadLetterTag, data, Origin{Source: source, Cause: d.Event}); err != nil {
		_ = d.Nak(retry)
		return fmt.Errorf("dead letter of %s (%s) for %s: %w", d.Event.ID, d.Event.Tag, consumer, err)
	}
	return d.Ack()
}
