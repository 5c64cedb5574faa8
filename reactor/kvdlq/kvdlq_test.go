package kvdlq

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/reactor"
)

func TestStoreSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() (*natsbus.Bus, *Store) {
		b, err := natsbus.Open(ctx, natsbus.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		kv, err := b.Bucket(ctx, BucketConfig)
		if err != nil {
			t.Fatal(err)
		}
		return b, New(kv)
	}
	b, s := open()
	if list, err := s.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("empty store: %v %v", list, err)
	}
	ev, err := bus.NewEvent("salt/cloud/web1/created", map[string]any{"name": "web1"}, bus.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"20261122001500000002", "20261122001500000001"} {
		dl := &reactor.DeadLetter{ID: id, Time: time.Now().UTC(), Event: ev, Attempts: 5, Error: "refused",
			Reaction: &reactor.Reaction{ID: "add_dns", Kind: reactor.Runner, Fun: "ddns.add_host",
				Args: []any{int64(1)}, Kwargs: map[string]any{"ttl": int64(300), "ratio": 0.5}}}
		if err := s.Put(ctx, dl); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b, s = open()
	defer b.Close()
	list, err := s.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "20261122001500000001" {
		t.Fatalf("after reopen: %+v %v", list, err)
	}
	got := list[1]
	if got.Event.ID != ev.ID || got.Reaction.Kwargs["ttl"] != int64(300) || got.Reaction.Kwargs["ratio"] != 0.5 ||
		got.Reaction.Args[0] != int64(1) || got.Attempts != 5 {
		t.Fatalf("round trip: %+v %+v", got, got.Reaction)
	}
	if err := s.Delete(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, got.ID); !errors.Is(err, reactor.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if list, _ := s.List(ctx); len(list) != 1 {
		t.Fatalf("after delete: %d left", len(list))
	}
	if _, err := s.Get(ctx, "not a valid key!"); !errors.Is(err, reactor.ErrNotFound) {
		t.Fatalf("Get of an invalid key: %v", err)
	}
}
