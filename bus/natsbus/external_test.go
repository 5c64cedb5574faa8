package natsbus

import (
	"context"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus/natstest"
)

// TestExternalServer runs the bus against a NATS server it does not own, as
// with `bus.url`: a separate server listening on loopback TCP.
func TestExternalServer(t *testing.T) {
	url := natstest.Start(t)

	ctx := context.Background()
	b, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if b.sync != nil || b.ns != nil {
		t.Error("an external server must not be embedded or synced by the bus")
	}
	got := make(chan *bus.Event, 1)
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: "ext/*"}, func(ev *bus.Event) { got <- ev })
	if err != nil {
		t.Fatal(err)
	}
	ev := mustEvent(t, "ext/one", map[string]any{"k": "v"})
	if err := b.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-got:
		if g.ID != ev.ID {
			t.Errorf("got %s, want %s", g.ID, ev.ID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("event not delivered through the external server")
	}
	sub.Stop()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// The server outlives the bus, and the events stay in its stream.
	b2, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if last, err := b2.LastSeq(ctx); err != nil || last != Position(1, 0) {
		t.Errorf("LastSeq after reconnect = %d, %v; want %d", last, err, Position(1, 0))
	}
	if _, err := Open(ctx, Config{URL: "nats://127.0.0.1:1"}); err == nil {
		t.Error("connecting to a closed port succeeded")
	}
}
