package natsbus

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/brinehq/brine/bus"
)

// BenchmarkPublishSubscribe measures durable publish (256 in flight) to a
// live subscriber; bench/bus is the full benchmark with latencies.
func BenchmarkPublishSubscribe(b *testing.B) {
	bb, err := Open(context.Background(), Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	ctx := context.Background()
	pad := strings.Repeat("x", 300)
	var got atomic.Int64
	done := make(chan struct{})
	n := int64(b.N)
	sub, err := bb.Subscribe(ctx, bus.SubscribeOptions{Pattern: "bench/*"}, func(*bus.Event) {
		if got.Add(1) == n {
			close(done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Stop()
	b.ResetTimer()
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	for range b.N {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ev, err := bus.NewEvent("bench/x", map[string]any{"pad": pad}, bus.Origin{Source: "bench"})
			if err == nil {
				err = bb.Publish(ctx, ev)
			}
			if err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	<-done
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
