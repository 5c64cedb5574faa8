// Command bus measures the event bus: events/s and publish→receive latency,
// in process (Publish → Subscribe) and end to end over ZeroMQ (client publish
// over the request socket → durable → watcher on the publish socket), each at
// the maximum rate and at a fixed rate, counting lost and duplicated events.
// Every event is fsync'ed before it is acknowledged. Results go to -out as JSON.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/natsbus"
)

// Result is one measured scenario.
type Result struct {
	Name         string  `json:"name"`
	Mode         string  `json:"mode"` // "max" or "paced"
	TargetRate   int     `json:"target_rate,omitempty"`
	Events       int     `json:"events"`
	PayloadBytes int     `json:"payload_bytes"`
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_sec"`
	P50Ms        float64 `json:"p50_ms"`
	P99Ms        float64 `json:"p99_ms"`
	MaxMs        float64 `json:"max_ms"`
	Lost         int     `json:"lost"`
	Duplicated   int     `json:"duplicated"`
	PublishErrs  int     `json:"publish_errors"`
}

func main() {
	out := flag.String("out", "bench/results/bus.json", "where to write the JSON results")
	n := flag.Int("n", 100_000, "events per scenario")
	rate := flag.Int("rate", 1000, "events/s for the paced scenarios")
	payload := flag.Int("payload", 300, "payload bytes per event")
	conc := flag.Int("concurrency", 256, "publishers in flight at the maximum rate")
	only := flag.String("only", "", "run only the scenarios whose names match this regular expression (for profiling; the report then checks only their targets)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run here")
	flag.Parse()
	pick, err := regexp.Compile(*only)
	if err != nil {
		fatal(fmt.Errorf("-only: %w", err))
	}
	stopProfile, err := report.StartCPUProfile(*cpuprofile)
	if err != nil {
		fatal(err)
	}
	defer stopProfile()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))

	started := time.Now()
	rep := report.New("bus")
	rep.Setup["durability"] = "embedded JetStream file store; group-commit fsync before every Publish returns and before any reader sees an event"
	probe := func(key string) {
		figure, err := report.ProbeFsync(os.TempDir(), 500)
		if err != nil {
			fatal(fmt.Errorf("fsync probe: %w", err))
		}
		rep.Setup[key] = figure
		fmt.Fprintln(os.Stderr, "disk:", figure)
	}
	probe("disk_fsync_before")
	var results []Result
	ctx := context.Background()
	pad := strings.Repeat("x", *payload)

	run := func(name string, paced bool, fn func(dir string, pub publishFn, sub subscribeFn) (Result, error), setup func(dir string) (publishFn, subscribeFn, func(), error)) {
		if !pick.MatchString(name) {
			return
		}
		dir, err := os.MkdirTemp("", "brine-bench-")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
		pub, sub, closeFn, err := setup(dir)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", name, err))
		}
		defer closeFn()
		r, err := fn(dir, pub, sub)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", name, err))
		}
		r.Name = name
		fmt.Fprintf(os.Stderr, "%-22s %-5s %8.0f ev/s  p50 %6.3f ms  p99 %6.3f ms  max %7.3f ms  lost %d  dup %d\n",
			name, r.Mode, r.EventsPerSec, r.P50Ms, r.P99Ms, r.MaxMs, r.Lost, r.Duplicated)
		results = append(results, r)
	}
	for _, s := range []struct {
		name  string
		setup func(string) (publishFn, subscribeFn, func(), error)
	}{
		{"inprocess", setupInProcess(ctx)},
		{"zeromq", setupZeroMQ(ctx)},
	} {
		run(s.name+"_max", false, func(_ string, pub publishFn, sub subscribeFn) (Result, error) {
			return measure(ctx, pub, sub, *n, 0, *conc, pad)
		}, s.setup)
		run(s.name+"_paced", true, func(_ string, pub publishFn, sub subscribeFn) (Result, error) {
			return measure(ctx, pub, sub, *n, *rate, *conc, pad)
		}, s.setup)
	}

	probe("disk_fsync_after")
	rep.Results = results
	metric := func(r Result, m string) float64 {
		return map[string]float64{"events_per_sec": r.EventsPerSec, "p99_ms": r.P99Ms}[m]
	}
	for _, t := range []struct {
		result, metric, op string
		value              float64
	}{
		{"inprocess_max", "events_per_sec", ">=", 50_000},
		{"zeromq_max", "events_per_sec", ">=", 20_000},
		{"inprocess_paced", "p99_ms", "<=", 2},
		{"zeromq_paced", "p99_ms", "<=", 5},
	} {
		for _, r := range results {
			if r.Name == t.result {
				rep.Check(t.result, t.metric, t.op, t.value, metric(r, t.metric))
			}
		}
	}
	for _, r := range results {
		if r.Lost > 0 || r.Duplicated > 0 || r.PublishErrs > 0 {
			rep.Fail(fmt.Sprintf("%s: %d lost, %d duplicated, %d publish errors", r.Name, r.Lost, r.Duplicated, r.PublishErrs))
		}
	}
	rep.Notes = append(rep.Notes,
		"latency: from the start of Publish (or of the client's send) to the subscriber/watcher receiving the event",
		"reference (Salt 3006.6 on the same machine, nothing written to disk): ~1,700 events/s documented API, ~20,000/s async API, p99 1.5 ms at 500 events/s",
		fmt.Sprintf("max-rate scenarios keep %d publishes in flight", *conc))
	if err := rep.Write(*out); err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s (all targets met: %v) in %s\n", *out, rep.Pass, time.Since(started).Round(time.Second))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// publishFn publishes one event with the given tag and payload.
type publishFn func(ctx context.Context, tag, pad string) error

// subscribeFn delivers every event tagged bench/… to fn until the returned stop is called.
type subscribeFn func(ctx context.Context, fn func(tag string)) (stop func(), err error)

func setupInProcess(ctx context.Context) func(string) (publishFn, subscribeFn, func(), error) {
	return func(dir string) (publishFn, subscribeFn, func(), error) {
		b, err := natsbus.Open(ctx, natsbus.Config{Dir: dir})
		if err != nil {
			return nil, nil, nil, err
		}
		pub := func(ctx context.Context, tag, pad string) error {
			ev, err := bus.NewEvent(tag, map[string]any{"pad": pad}, bus.Origin{Source: "bench"})
			if err != nil {
				return err
			}
			return b.Publish(ctx, ev)
		}
		sub := func(ctx context.Context, fn func(string)) (func(), error) {
			s, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: "bench/*"}, func(ev *bus.Event) { fn(ev.Tag) })
			if err != nil {
				return nil, err
			}
			return s.Stop, nil
		}
		return pub, sub, func() { b.Close() }, nil
	}
}

func setupZeroMQ(ctx context.Context) func(string) (publishFn, subscribeFn, func(), error) {
	return func(dir string) (publishFn, subscribeFn, func(), error) {
		b, err := natsbus.Open(ctx, natsbus.Config{Dir: dir})
		if err != nil {
			return nil, nil, nil, err
		}
		key := []byte("bench-key-0123456789abcdef")
		srv, err := gateway.New(gateway.Config{PublishEndpoint: "tcp://127.0.0.1:0", RequestEndpoint: "tcp://127.0.0.1:0", Key: key}, b, slog.Default())
		if err != nil {
			return nil, nil, nil, err
		}
		if err := srv.Listen(); err != nil {
			return nil, nil, nil, err
		}
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Run(sctx) }()
		client, err := gateway.Dial(ctx, srv.RequestAddr(), key)
		if err != nil {
			cancel()
			return nil, nil, nil, err
		}
		pub := func(ctx context.Context, tag, pad string) error {
			_, err := client.Publish(ctx, tag, map[string]any{"pad": pad})
			return err
		}
		sub := func(ctx context.Context, fn func(string)) (func(), error) {
			wctx, stop := context.WithCancel(ctx)
			ready := make(chan struct{})
			var once sync.Once
			watcher, err := gateway.Dial(ctx, srv.RequestAddr(), key)
			if err != nil {
				stop()
				return nil, err
			}
			go func() {
				_ = watcher.Watch(wctx, srv.PublishAddr(), "bench/*", bus.Since{}, func(ev *bus.Event) error {
					once.Do(func() { close(ready) })
					if ev.Tag != "bench/warmup" {
						fn(ev.Tag)
					}
					return nil
				})
			}()
			// The watcher is live once it sees a warm-up event.
			for {
				if err := pub(ctx, "bench/warmup", ""); err != nil {
					stop()
					return nil, err
				}
				select {
				case <-ready:
					return func() { stop(); watcher.Close() }, nil
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		return pub, sub, func() { client.Close(); cancel(); <-done; b.Close() }, nil
	}
}

// measure publishes n events (rate 0: as fast as conc publishers allow) and
// waits until the subscriber has seen them all or stops hearing from it.
func measure(ctx context.Context, pub publishFn, sub subscribeFn, n, rate, conc int, pad string) (Result, error) {
	sent := make([]int64, n) // UnixNano at publish start
	recv := make([]int64, n)
	var dup, got atomic.Int64
	allIn := make(chan struct{})
	stop, err := sub(ctx, func(tag string) {
		i, err := strconv.Atoi(strings.TrimPrefix(tag, "bench/"))
		if err != nil || i < 0 || i >= n {
			return
		}
		if !atomic.CompareAndSwapInt64(&recv[i], 0, time.Now().UnixNano()) {
			dup.Add(1)
			return
		}
		if got.Add(1) == int64(n) {
			close(allIn)
		}
	})
	if err != nil {
		return Result{}, err
	}
	defer stop()

	var pubErrs atomic.Int64
	start := time.Now()
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	interval := time.Duration(0)
	if rate > 0 {
		interval = time.Second / time.Duration(rate)
	}
	for i := 0; i < n; i++ {
		if interval > 0 {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				time.Sleep(d)
			}
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			atomic.StoreInt64(&sent[i], time.Now().UnixNano())
			if err := pub(ctx, "bench/"+strconv.Itoa(i), pad); err != nil {
				pubErrs.Add(1)
			}
		}(i)
	}
	wg.Wait()
	// Wait for stragglers; stop when nothing new arrives for 5 s.
	last, lastChange := got.Load(), time.Now()
	for done := false; !done; {
		select {
		case <-allIn:
			done = true
		case <-time.After(100 * time.Millisecond):
			if g := got.Load(); g != last {
				last, lastChange = g, time.Now()
			} else if time.Since(lastChange) > 5*time.Second {
				done = true
			}
		}
	}
	var end int64
	lat := make([]float64, 0, n)
	for i := range n {
		r := atomic.LoadInt64(&recv[i])
		if r == 0 {
			continue
		}
		end = max(end, r)
		lat = append(lat, float64(r-sent[i])/1e6)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return report.Percentile(lat, p) }
	res := Result{Mode: "max", Events: n, PayloadBytes: len(pad), Lost: n - len(lat), Duplicated: int(dup.Load()), PublishErrs: int(pubErrs.Load()),
		P50Ms: pct(0.50), P99Ms: pct(0.99)}
	if len(lat) > 0 {
		res.MaxMs = lat[len(lat)-1]
		res.Seconds = float64(end-start.UnixNano()) / 1e9
		res.EventsPerSec = float64(len(lat)) / res.Seconds
	}
	if rate > 0 {
		res.Mode, res.TargetRate = "paced", rate
	}
	return res, nil
}
