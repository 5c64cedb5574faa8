package natsbus

import (
	"context"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

// TestKeyValueWritesAreSynced checks that every kind of write to a bucket
// of the embedded server waits for a sync round.
func TestKeyValueWritesAreSynced(t *testing.T) {
	dir := t.TempDir()
	b := openBus(t, dir)
	ctx := context.Background()
	kv, err := b.KeyValue(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	skv, ok := kv.(*syncedKV)
	if !ok {
		t.Fatalf("KeyValue returned %T, want a synced bucket", kv)
	}
	rounds := func() uint64 {
		skv.sync.mu.Lock()
		defer skv.sync.mu.Unlock()
		return skv.sync.rounds
	}
	writes := []struct {
		name string
		fn   func() error
	}{
		{"Put", func() error { _, err := kv.Put(ctx, "a", []byte("1")); return err }},
		{"PutString", func() error { _, err := kv.PutString(ctx, "a", "2"); return err }},
		{"Create", func() error { _, err := kv.Create(ctx, "b", []byte("1")); return err }},
		{"Update", func() error {
			e, err := kv.Get(ctx, "b")
			if err != nil {
				return err
			}
			_, err = kv.Update(ctx, "b", []byte("2"), e.Revision())
			return err
		}},
		{"Delete", func() error { return kv.Delete(ctx, "a") }},
		{"Purge", func() error { return kv.Purge(ctx, "b") }},
	}
	for _, w := range writes {
		before := rounds()
		if err := w.fn(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if rounds() <= before {
			t.Errorf("%s returned before a sync round", w.name)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openBus(t, dir)
	defer b.Close()
	kv, err = b.KeyValue(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "a"); err == nil {
		t.Error("deleted key came back after a restart")
	}
}

// TestDeliveredOnlyWhenDurable stores an event behind the bus's back (no
// sync after the write) and checks that neither a subscriber nor a consumer
// sees it before a sync round has covered it.
func TestDeliveredOnlyWhenDurable(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	ctx := context.Background()
	rounds := func() uint64 {
		b.sync.mu.Lock()
		defer b.sync.mu.Unlock()
		return b.sync.rounds
	}
	seen := make(chan uint64, 2)
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: "raw/*"}, func(*bus.Event) { seen <- rounds() })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	cons, err := b.Consume(ctx, bus.ConsumerConfig{Name: "raw", Pattern: "raw/*", DeliverNew: true}, func(_ context.Context, d *bus.Delivery) {
		seen <- rounds()
		_ = d.Ack()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Stop()

	before := rounds()
	ev := mustEvent(t, "raw/x", nil)
	data, err := ev.Validate(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.js.Publish(ctx, Subject(ev.Tag), data); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case r := <-seen:
			if r <= before {
				t.Fatal("event handed on before a sync round covered it")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("event not delivered")
		}
	}
}
