package gateway

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

func BenchmarkProbeBusOnly(b *testing.B) {
	eb := openBus(b)
	data := map[string]any{"payload": strings.Repeat("x", 300)}
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 128 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				ev, _ := bus.NewEvent("bench/x", data, bus.Origin{})
				if err := eb.Publish(ctx, ev); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

func BenchmarkProbeRequestsOnly(b *testing.B) {
	eb := openBus(b)
	srv := startServer(b, eb, nil)
	c := dialClient(b, srv.RequestAddr(), testKey)
	data := map[string]any{"payload": strings.Repeat("x", 300)}
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 128 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := c.Publish(ctx, "bench/x", data); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

func BenchmarkProbePing(b *testing.B) {
	eb := openBus(b)
	srv := startServer(b, eb, nil)
	c := dialClient(b, srv.RequestAddr(), testKey)
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 128 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := c.Call(ctx, "ping", nil, nil); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}
