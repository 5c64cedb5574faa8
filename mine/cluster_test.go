package mine

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/bus/natsbus/natstest"
)

// TestTwoMastersShareTheMineOnAnExternalServer: two masters connected to
// one NATS server (bus.url) follow the same events into one mine, and
// their concurrent writes to one host both land.
func TestTwoMastersShareTheMineOnAnExternalServer(t *testing.T) {
	url := natstest.Start(t)
	ctx := testCtx(t)

	var stores []*Store
	var buses []*natsbus.Bus
	fctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for i := range 2 {
		b, err := natsbus.Open(ctx, natsbus.Config{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() }) // after Follow has stopped
		kv, err := b.Bucket(ctx, BucketConfig)
		if err != nil {
			t.Fatal(err)
		}
		s := New(kv)
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Follow(fctx, b, fmt.Sprintf("brine://m%d/mine", i), nil) }()
		stores, buses = append(stores, s), append(buses, b)
	}

	for i := range 20 {
		ev := cloudEvent(t, fmt.Sprintf("vm%02d", i), "created", map[string]any{"event": "created instance",
			"private_ips": []any{fmt.Sprintf("10.5.0.%d", i+1)}})
		if err := buses[i%2].Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool {
		for _, s := range stores {
			if l, err := s.List(ctx); err != nil || len(l) != 20 {
				return false
			}
		}
		return true
	})

	var errs [2]error
	var ww sync.WaitGroup
	for i, s := range stores {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for k := range 20 {
				key := fmt.Sprintf("m%d.k%d", i, k)
				if _, err := s.Update(ctx, Write{ID: "vm00", Source: "test", Mutate: func(h *Host) error { return h.Set(key, true) }}); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	ww.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	h, err := stores[1].Get(ctx, "vm00")
	if err != nil || len(h.Data) != 40 || h.IPs[0] != "10.5.0.1" {
		t.Fatalf("vm00 = %+v, %v; want 40 values from two masters and its address", h, err)
	}
}
