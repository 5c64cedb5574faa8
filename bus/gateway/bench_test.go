package gateway

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

// BenchmarkGatewayEndToEnd measures the `event send` path: pipelined
// publishes from one client over the request endpoint, each acknowledged
// once durable, delivered to a watcher over the publish endpoint. It reports
// events/s through the whole path and the publish-to-watcher latency.
func BenchmarkGatewayEndToEnd(b *testing.B) {
	const inflight = 1024
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eb := openBus(b)
	srv := startServer(b, eb, nil)
	c := dialClient(b, srv.RequestAddr(), testKey)

	var (
		received atomic.Int64
		mu       sync.Mutex
		lat      = make([]time.Duration, 0, b.N)
		all      = make(chan struct{})
	)
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- c.Watch(ctx, srv.PublishAddr(), "bench/*", bus.Since{}, func(ev *bus.Event) error {
			d := time.Since(ev.Time)
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
			if received.Add(1) == int64(b.N) {
				close(all)
			}
			return nil
		})
	}()
	waitWatchers(b, srv.Server, 1)
	data := map[string]any{"payload": strings.Repeat("x", 300)}

	b.ResetTimer()
	cpu0 := cpuTime(b)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := c.Publish(ctx, "bench/event", data); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-all:
	case err := <-watchErr:
		b.Fatalf("watch ended: %v", err)
	case <-time.After(time.Minute):
		b.Fatalf("watcher got %d of %d events", received.Load(), b.N)
	}
	elapsed := time.Since(start)
	cpu := cpuTime(b) - cpu0
	b.StopTimer()

	mu.Lock()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	// CPU per event (gateway, client, watcher and the embedded bus all run
	// in this process) tells what a quiet 2-core machine can reach even
	// when the measurement shares it.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/event")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	mu.Unlock()
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
