package natsbus

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

// TestConsumeBacklogDoesNotStall drains a backlog with few deliveries in
// flight, acknowledged from other goroutines as worker pools do: delivery
// must keep going, never wait out a pull's expiry.
func TestConsumeBacklogDoesNotStall(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	ctx := context.Background()
	const n = 2000
	for i := range n {
		if err := b.Publish(ctx, mustEvent(t, fmt.Sprintf("backlog/%d", i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	for _, inFlight := range []int{1, 2, 16} {
		t.Run(fmt.Sprint("inflight-", inFlight), func(t *testing.T) {
			var got atomic.Int64
			done := make(chan struct{})
			start := time.Now()
			sub, err := b.Consume(ctx, bus.ConsumerConfig{Name: fmt.Sprint("backlog", inFlight), Pattern: "backlog/*", MaxInFlight: inFlight},
				func(_ context.Context, d *bus.Delivery) {
					// Acknowledge later, from another goroutine, as a
					// worker pool does.
					go func() {
						time.Sleep(100 * time.Microsecond)
						_ = d.Ack()
						if got.Add(1) == n {
							close(done)
						}
					}()
				})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Stop()
			select {
			case <-done:
				t.Logf("%d events with %d in flight in %v", n, inFlight, time.Since(start))
			case <-time.After(20 * time.Second):
				t.Fatalf("only %d of %d events delivered in 20s", got.Load(), n)
			}
		})
	}
}
