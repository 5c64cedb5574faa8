// Command reactor measures brine's reactor on the embedded, fsync'ed bus:
// (a) a burst of events each triggering one runner.test.arg reaction: time
// until the last salt/run/<jid>/ret, reactions/s, fire→ret latency, lost and
// duplicated reactions; (b) a steady rate for a while: fire→ret latency;
// (c) render-only and render+parse+compile throughput of a 10-line Jinja
// reaction file; (d) tag matching against 1,000 mapping globs. Results go to
// -out as JSON, with the targets checked.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/reactor"
)

// Result is one measured scenario.
type Result struct {
	Name          string  `json:"name"`
	Events        int     `json:"events,omitempty"`
	TargetRate    int     `json:"target_rate,omitempty"`
	Seconds       float64 `json:"seconds"`
	PerSec        float64 `json:"per_sec"`
	Unit          string  `json:"unit"`
	P50Ms         float64 `json:"p50_ms,omitempty"`
	P99Ms         float64 `json:"p99_ms,omitempty"`
	MaxMs         float64 `json:"max_ms,omitempty"`
	LastRetMs     float64 `json:"last_ret_ms,omitempty"`
	PublishedMs   float64 `json:"published_ms,omitempty"` // when the last trigger was durable
	Lost          int     `json:"lost"`
	Duplicated    int     `json:"duplicated"`
	NsPerOp       float64 `json:"ns_per_op,omitempty"`
	AllocsPerOp   float64 `json:"allocs_per_op,omitempty"`
	PublishErrors int     `json:"publish_errors,omitempty"`
}

// reaction is the 10-line Jinja reaction file every scenario uses.
const reaction = `{# A typical reaction: conditionals, look-ups and filters on the event. #}
{% set name = data.get('name', 'unknown') %}
{% if data['act'] == 'created' and name.startswith('web') %}
audit_{{ name }}:
  runner.test.arg:
    - arg: [{{ name }}, {{ data['n'] }}]
    - kwarg:
        tag: {{ tag }}
        short: {{ name.split('-')[0] | upper }}
{% endif %}
`

func main() {
	out := flag.String("out", "bench/results/reactor.json", "where to write the JSON results")
	burst := flag.Int("burst", 10_000, "events in the burst")
	rate := flag.Int("rate", 500, "events/s of the steady scenario")
	steady := flag.Duration("steady", 30*time.Second, "duration of the steady scenario")
	workers := flag.Int("workers", reactor.DefaultWorkers, "reactor workers (functions running at once)")
	inflight := flag.Int("inflight", reactor.DefaultMaxInFlight, "reactor events in progress at once")
	publishers := flag.Int("publishers", 256, "concurrent publishers of the burst")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	report.Run("bench reactor", *cpuprofile, func() error {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		return run(*out, *burst, *rate, *steady, *workers, *inflight, *publishers)
	})
}

func run(out string, burst, rate int, steady time.Duration, workers, inflight, publishers int) error {
	rep := report.New("reactor")
	rep.Setup["workers"] = strconv.Itoa(workers)
	rep.Setup["max_in_flight"] = strconv.Itoa(inflight)
	rep.Setup["durability"] = "embedded JetStream file store; the trigger and both job events are fsync'ed before Publish returns, the trigger is acknowledged after its ret"
	fsync, err := report.ProbeFsync(os.TempDir(), 500)
	if err != nil {
		return fmt.Errorf("fsync probe: %w", err)
	}
	rep.Setup["disk_fsync"] = fsync
	var results []Result
	dir, err := os.MkdirTemp("", "brine-bench-reactor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "audit.sls")
	if err := os.WriteFile(file, []byte(reaction), 0o644); err != nil {
		return err
	}

	ctx := context.Background()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: filepath.Join(dir, "data")})
	if err != nil {
		return err
	}
	defer b.Close()
	r := reactor.New(reactor.Config{Workers: workers, MaxInFlight: inflight, Mapping: []reactor.MapEntry{{Glob: "bench/*/created", Files: []string{file}}}},
		function.NewWithBuiltins())
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx, b, nil) }()
	defer func() { stop(); <-done }()

	m, err := newMeter(ctx, b)
	if err != nil {
		return err
	}
	res, err := m.burst(ctx, b, burst, publishers)
	if err != nil {
		return err
	}
	results = append(results, res)
	fmt.Fprintf(os.Stderr, "burst: %+v\n", res)
	res, err = m.steady(ctx, b, rate, steady)
	if err != nil {
		return err
	}
	results = append(results, res)
	fmt.Fprintf(os.Stderr, "steady: %+v\n", res)
	res, err = m.backlog(ctx, b, burst, publishers, workers, inflight, file)
	if err != nil {
		return err
	}
	results = append(results, res)
	fmt.Fprintf(os.Stderr, "backlog: %+v\n", res)
	results = append(results, renderOnly(ctx, r, file), planOnly(ctx, r), matching())
	for _, res := range results[3:] {
		fmt.Fprintf(os.Stderr, "%s: %.0f %s\n", res.Name, res.PerSec, res.Unit)
	}
	if s := r.Stats().Snapshot(); s["failed"] > 0 || s["errors"] > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("reactor reported failures: %v", s))
	}

	rep.Results = results
	check := func(result, metric, op string, value float64) {
		for _, res := range results {
			if res.Name != result {
				continue
			}
			got := map[string]float64{"last_ret_ms": res.LastRetMs, "per_sec": res.PerSec, "lost": float64(res.Lost),
				"duplicated": float64(res.Duplicated), "p99_ms": res.P99Ms}[metric]
			rep.Check(result, metric, op, value, got)
		}
	}
	check("burst", "last_ret_ms", "<=", 2000)
	check("burst", "per_sec", ">=", 5000)
	check("burst", "lost", "<=", 0)
	check("burst", "duplicated", "<=", 0)
	check("steady", "p99_ms", "<=", 20)
	check("steady", "lost", "<=", 0)
	check("match_1000_globs", "per_sec", ">=", 1_000_000)
	rep.Notes = append(rep.Notes,
		"fire→ret: from just before the trigger's Publish to the arrival of its salt/run/<jid>/ret at a subscriber",
		fmt.Sprintf("burst: all events are published by %d concurrent publishers while the reactor runs;", publishers)+" salt 3006.6 on the same burst: ~80 reactions/s, 125 s to the last",
		"backlog: the burst published first with no reactor for it, then a reactor started: seconds and reactions/s from its start to the last ret",
		"render_only: Jinja only (cached template); plan: match + render + YAML + compile, single goroutine")
	rep.Setup["load_avg_after"] = report.LoadAvg()
	return rep.Write(out)
}

// meter follows salt/run/*/ret and matches each to the event that caused it.
type meter struct {
	mu    sync.Mutex
	fired map[string]time.Time       // trigger id → fire time
	rets  map[string][]time.Duration // trigger id → fire→ret latencies
	last  time.Time
	count atomic.Int64
}

func newMeter(ctx context.Context, b bus.Bus) (*meter, error) {
	m := &meter{fired: map[string]time.Time{}, rets: map[string][]time.Duration{}}
	_, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: "salt/run/*/ret"}, func(ev *bus.Event) {
		now := time.Now()
		m.mu.Lock()
		if t, ok := m.fired[ev.Cause]; ok {
			m.rets[ev.Cause] = append(m.rets[ev.Cause], now.Sub(t))
			m.last = now
		}
		m.mu.Unlock()
		m.count.Add(1)
	})
	return m, err
}

func (m *meter) reset() {
	m.mu.Lock()
	m.fired, m.rets, m.last = map[string]time.Time{}, map[string][]time.Duration{}, time.Time{}
	m.mu.Unlock()
}

func trigger(i int) (*bus.Event, error) {
	return bus.NewEvent(fmt.Sprintf("bench/web-%d/created", i), map[string]any{"act": "created", "name": fmt.Sprintf("web-%d", i), "n": i},
		bus.Origin{Source: "bench"})
}

// fire publishes ev, recording its fire time first.
func (m *meter) fire(ctx context.Context, b bus.Bus, ev *bus.Event) error {
	m.mu.Lock()
	m.fired[ev.ID] = time.Now()
	m.mu.Unlock()
	return b.Publish(ctx, ev)
}

// wait returns when every fired event has a ret, or after quiet of no progress.
func (m *meter) wait(quiet time.Duration) {
	lastCount, lastChange := m.count.Load(), time.Now()
	for {
		m.mu.Lock()
		complete := len(m.rets) == len(m.fired)
		m.mu.Unlock()
		if complete {
			time.Sleep(200 * time.Millisecond) // let a duplicate show up
			return
		}
		if c := m.count.Load(); c != lastCount {
			lastCount, lastChange = c, time.Now()
		} else if time.Since(lastChange) > quiet {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// summary computes latency percentiles, lost and duplicated.
func (m *meter) summary(name string, start time.Time) Result {
	m.mu.Lock()
	defer m.mu.Unlock()
	res := Result{Name: name, Events: len(m.fired), Unit: "reactions/s"}
	var lat []time.Duration
	for id := range m.fired {
		l := m.rets[id]
		switch {
		case len(l) == 0:
			res.Lost++
		case len(l) > 1:
			res.Duplicated += len(l) - 1
		}
		if len(l) > 0 {
			lat = append(lat, l[0])
		}
	}
	slices.Sort(lat)
	sorted := report.Millis(lat)
	res.P50Ms, res.P99Ms = report.Percentile(sorted, 0.50), report.Percentile(sorted, 0.99)
	if len(lat) > 0 {
		res.MaxMs = ms(lat[len(lat)-1])
	}
	if !m.last.IsZero() {
		res.LastRetMs = ms(m.last.Sub(start))
		res.Seconds = m.last.Sub(start).Seconds()
		res.PerSec = float64(len(lat)) / res.Seconds
	}
	return res
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (m *meter) burst(ctx context.Context, b bus.Bus, n, publishers int) (Result, error) {
	m.reset()
	events := make([]*bus.Event, n)
	for i := range events {
		ev, err := trigger(i)
		if err != nil {
			return Result{}, err
		}
		events[i] = ev
	}
	var next atomic.Int64
	var errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range publishers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if err := m.fire(ctx, b, events[i]); err != nil {
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	published := time.Since(start)
	m.wait(10 * time.Second)
	res := m.summary("burst", start)
	res.PublishedMs = ms(published)
	res.PublishErrors = int(errs.Load())
	return res, nil
}

// backlog publishes n events nobody reacts to yet, then starts a second
// reactor (its own consumer) and times how fast it works through them: the
// reactor's throughput without a publisher competing for the disk, and what
// a master restarted after an outage does.
func (m *meter) backlog(ctx context.Context, b bus.Bus, n, publishers, workers, inflight int, file string) (Result, error) {
	m.reset()
	var next atomic.Int64
	var errs atomic.Int64
	var wg sync.WaitGroup
	for range publishers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				ev, err := bus.NewEvent(fmt.Sprintf("backlog/web-%d/created", i),
					map[string]any{"act": "created", "name": fmt.Sprintf("web-%d", i), "n": i}, bus.Origin{Source: "bench"})
				if err == nil {
					err = m.fire(ctx, b, ev)
				}
				if err != nil {
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	r := reactor.New(reactor.Config{Consumer: "reactor-backlog", Workers: workers, MaxInFlight: inflight,
		Mapping: []reactor.MapEntry{{Glob: "backlog/*/created", Files: []string{file}}}}, function.NewWithBuiltins())
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- r.Run(rctx, b, nil) }()
	m.wait(10 * time.Second)
	stop()
	if err := <-done; err != nil {
		return Result{}, err
	}
	res := m.summary("backlog", start)
	// Latency from publish is meaningless here: they waited on purpose.
	res.P50Ms, res.P99Ms, res.MaxMs = 0, 0, 0
	res.PublishErrors = int(errs.Load())
	return res, nil
}

func (m *meter) steady(ctx context.Context, b bus.Bus, rate int, d time.Duration) (Result, error) {
	m.reset()
	total := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	var errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range total {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		ev, err := trigger(1_000_000 + i)
		if err != nil {
			return Result{}, err
		}
		wg.Go(func() {
			if err := m.fire(ctx, b, ev); err != nil {
				errs.Add(1)
			}
		})
	}
	wg.Wait()
	m.wait(10 * time.Second)
	res := m.summary("steady", start)
	res.TargetRate = rate
	res.PublishErrors = int(errs.Load())
	return res, nil
}

// renderOnly times Jinja rendering of the reaction file (template cached).
func renderOnly(ctx context.Context, r *reactor.Reactor, file string) Result {
	data := map[string]any{"act": "created", "name": "web-42", "n": int64(42)}
	res := timeOps("render_only", "renders/s", func(int) {
		if _, err := r.Render(ctx, file, "bench/web-42/created", data); err != nil {
			panic(err)
		}
	})
	return res
}

// planOnly times what the reactor does per event before running anything.
func planOnly(ctx context.Context, r *reactor.Reactor) Result {
	data := map[string]any{"act": "created", "name": "web-42", "n": int64(42)}
	return timeOps("plan", "plans/s", func(int) {
		if p := r.Plan(ctx, "bench/web-42/created", data); len(p.Reactions) != 1 {
			panic(fmt.Sprintf("plan: %+v", p.Errors))
		}
	})
}

// matching times tag matching against 1,000 mapping globs of the kinds
// Salt users write, with tags that match one, several or none.
func matching() Result {
	var mapping []reactor.MapEntry
	for i := range 250 {
		mapping = append(mapping,
			reactor.MapEntry{Glob: fmt.Sprintf("salt/cloud/web%d-*/created", i)},
			reactor.MapEntry{Glob: fmt.Sprintf("myco/app%d/*/deploy", i)},
			reactor.MapEntry{Glob: fmt.Sprintf("salt/minion/db%d[0-9]/start", i)},
			reactor.MapEntry{Glob: fmt.Sprintf("salt/job/*/ret/node%d", i)},
		)
	}
	r := reactor.New(reactor.Config{Mapping: mapping}, function.New())
	tags := []string{
		"salt/cloud/web17-a/created", "myco/app200/prod/deploy", "salt/minion/db123/start",
		"salt/job/20261122001500123456/ret/node99", "salt/auth", "salt/cloud/web1000-x/destroyed",
		"salt/minion/db3x/start", "salt/job/20261122001500123456/new",
	}
	matched := 0
	res := timeOps("match_1000_globs", "tags/s", func(i int) {
		matched += r.Matches(tags[i%len(tags)])
	})
	if matched == 0 {
		panic("no tag matched")
	}
	return res
}

// timeOps runs op for about two seconds on one goroutine.
func timeOps(name, unit string, op func(i int)) Result {
	for i := range 1000 { // warm caches
		op(i)
	}
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	n := 0
	start := time.Now()
	for time.Since(start) < 2*time.Second {
		for range 1000 {
			op(n)
			n++
		}
	}
	el := time.Since(start)
	runtime.ReadMemStats(&ms1)
	return Result{Name: name, Events: n, Seconds: el.Seconds(), PerSec: float64(n) / el.Seconds(), Unit: unit,
		NsPerOp: float64(el.Nanoseconds()) / float64(n), AllocsPerOp: float64(ms1.Mallocs-ms0.Mallocs) / float64(n)}
}
