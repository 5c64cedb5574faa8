package natsbus

import (
	"context"
	"errors"
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
	kv, err := b.Bucket(ctx, bus.BucketConfig{Name: "test", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	writes := []struct {
		name string
		fn   func() error
	}{
		{"Put", func() error { _, err := kv.Put(ctx, "a", []byte("1")); return err }},
		{"Create", func() error { _, err := kv.Create(ctx, "b", []byte("1")); return err }},
		{"Update", func() error {
			e, err := kv.Get(ctx, "b")
			if err != nil {
				return err
			}
			_, err = kv.Update(ctx, "b", []byte("2"), e.Revision)
			return err
		}},
		{"Delete", func() error { return kv.Delete(ctx, "a") }},
		{"Purge", func() error { return kv.Purge(ctx, "b") }},
	}
	for _, w := range writes {
		before := kv.SyncRounds()
		if err := w.fn(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if kv.SyncRounds() <= before {
			t.Errorf("%s returned before a sync round", w.name)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openBus(t, dir)
	defer b.Close()
	kv, err = b.Bucket(ctx, bus.BucketConfig{Name: "test", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "a"); !errors.Is(err, bus.ErrKeyNotFound) {
		t.Errorf("deleted key after a restart: %v, want bus.ErrKeyNotFound", err)
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

// TestBucketSpeaksTheBusErrors checks that conflicts and misses come back
// as the bus's errors, and that List and Watch see what is stored.
func TestBucketSpeaksTheBusErrors(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	ctx := context.Background()
	kv, err := b.Bucket(ctx, bus.BucketConfig{Name: "errs"})
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := kv.Keys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("Keys of an empty bucket = %v, %v", keys, err)
	}
	if l, err := kv.List(ctx); err != nil || len(l) != 0 {
		t.Fatalf("List of an empty bucket = %v, %v", l, err)
	}
	rev, err := kv.Create(ctx, "k", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		err  error
		want error
	}{
		{"Create on a key that has a value", func() error { _, err := kv.Create(ctx, "k", []byte("2")); return err }(), bus.ErrKeyChanged},
		{"Update at a stale revision", func() error { _, err := kv.Update(ctx, "k", []byte("2"), rev+7); return err }(), bus.ErrKeyChanged},
		{"Get of a missing key", func() error { _, err := kv.Get(ctx, "nope"); return err }(), bus.ErrKeyNotFound},
		{"Get of an invalid key", func() error { _, err := kv.Get(ctx, "a b"); return err }(), bus.ErrKeyNotFound},
	}
	for _, c := range checks {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if _, err := kv.Put(ctx, "gone", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	l, err := kv.List(ctx)
	if err != nil || len(l) != 1 || l[0].Key != "k" || string(l[0].Value) != "1" || l[0].Revision != rev {
		t.Errorf("List = %+v, %v; want only k=1 at revision %d", l, err, rev)
	}

	wctx, cancel := context.WithCancel(ctx)
	seen := make(chan *bus.Entry, 8)
	done := make(chan error, 1)
	go func() { done <- kv.Watch(wctx, func(e *bus.Entry) { seen <- e }) }()
	next := func() *bus.Entry {
		t.Helper()
		select {
		case e := <-seen:
			return e
		case <-time.After(5 * time.Second):
			t.Fatal("watch stalled")
		}
		return nil
	}
	if e := next(); e == nil || e.Key != "k" {
		t.Fatalf("first watched entry %+v, want k", e)
	}
	if e := next(); e != nil {
		t.Fatalf("want the end of the stored values (nil), got %+v", e)
	}
	if err := kv.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if e := next(); e == nil || e.Key != "k" || !e.Deleted {
		t.Fatalf("live removal watched as %+v", e)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch ended by its context: %v, want nil", err)
	}
}
