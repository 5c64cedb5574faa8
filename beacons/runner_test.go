package beacons

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake is a beacon that returns what is pushed to it, Ready at once.
type fake struct {
	mu     sync.Mutex
	queue  []Event
	ready  chan struct{}
	closed bool
}

func (f *fake) push(evs ...Event) {
	f.mu.Lock()
	f.queue = append(f.queue, evs...)
	f.mu.Unlock()
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

func (f *fake) Check(context.Context) ([]Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.queue
	f.queue = nil
	return out, nil
}

func (f *fake) Close() error           { f.closed = true; return nil }
func (f *fake) Ready() <-chan struct{} { return f.ready }

type recorder struct {
	mu   sync.Mutex
	tags []string
	data []map[string]any
}

func (r *recorder) fire(_ context.Context, tag string, data map[string]any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tags, r.data = append(r.tags, tag), append(r.data, data)
	return nil
}

func (r *recorder) wait(t *testing.T, n int) ([]string, []map[string]any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		if len(r.tags) >= n {
			tags, data := append([]string(nil), r.tags...), append([]map[string]any(nil), r.data...)
			r.mu.Unlock()
			return tags, data
		}
		r.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("%d events within 5 s, want %d: %v", len(r.tags), n, r.tags)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func setup(t *testing.T) (*Runner, *recorder, func() *fake) {
	t.Helper()
	var mu sync.Mutex
	var made []*fake
	reg, err := NewRegistry(Module{Name: "fake", New: func(cfg Config) (Beacon, error) {
		if v, ok := cfg["bad"]; ok {
			return nil, fmt.Errorf("bad: %v is not allowed", v)
		}
		f := &fake{ready: make(chan struct{}, 1)}
		mu.Lock()
		made = append(made, f)
		mu.Unlock()
		return f, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	r := NewRunner(reg, "web01", rec.fire, slog.New(slog.DiscardHandler))
	t.Cleanup(r.Stop)
	last := func() *fake {
		mu.Lock()
		defer mu.Unlock()
		return made[len(made)-1]
	}
	return r, rec, last
}

func TestRunnerFiresSaltsTags(t *testing.T) {
	r, rec, last := setup(t)
	// The list form, with beacon_module naming the module.
	cfg := map[string]any{"watch": []any{map[string]any{"beacon_module": "fake"}, map[string]any{"interval": 60}}}
	if err := r.Start(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	last().push(Event{Tag: "/etc/x", Data: map[string]any{"change": "IN_MODIFY"}}, Event{Data: map[string]any{"1m": 0.5}})
	tags, data := rec.wait(t, 2)
	if tags[0] != "salt/beacon/web01/watch//etc/x" || tags[1] != "salt/beacon/web01/watch/" {
		t.Errorf("tags %v", tags)
	}
	if data[0]["id"] != "web01" || data[0]["change"] != "IN_MODIFY" {
		t.Errorf("data %v", data[0])
	}
}

func TestRunnerCoalescesAFlood(t *testing.T) {
	r, rec, last := setup(t)
	if err := r.Start(t.Context(), map[string]any{"fake": map[string]any{"rate": 2, "interval": 60}}); err != nil {
		t.Fatal(err)
	}
	f := last()
	for i := range 10000 {
		f.push(Event{Tag: "/tmp/churn", Data: map[string]any{"n": i}})
	}
	time.Sleep(1500 * time.Millisecond)
	tags, data := rec.wait(t, 2)
	if len(tags) > 5 {
		t.Errorf("%d events for a churn of 10,000 at rate 2/s", len(tags))
	}
	total := 0
	for _, d := range data {
		if c, ok := d["count"].(int); ok {
			total += c
		} else {
			total++
		}
	}
	lastData := data[len(data)-1]
	if total != 10000 || lastData["n"] != 9999 {
		t.Errorf("events %d standing for %d, the last with %v; want all 10,000 counted and the latest data", len(data), total, lastData)
	}
}

func TestRunnerConfigErrors(t *testing.T) {
	r, _, _ := setup(t)
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"nosuch": []any{}}, `nosuch: no beacon module "nosuch"`},
		{map[string]any{"fake": []any{map[string]any{"bad": 1}}}, "fake: bad: 1 is not allowed"},
		{map[string]any{"fake": []any{map[string]any{"interval": -1}}}, "fake: interval: want a number above 0"},
		{map[string]any{"fake": []any{"oops"}}, "fake: item 1: want a key: value mapping"},
		{map[string]any{"fake": map[string]any{"rate": "x"}}, "fake: rate: want a number"},
	} {
		if err := r.Start(t.Context(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestRunnerDisable(t *testing.T) {
	r, rec, last := setup(t)
	if err := r.Start(t.Context(), map[string]any{"fake": map[string]any{"interval": 60}}); err != nil {
		t.Fatal(err)
	}
	f := last()
	cfg, _ := r.Config()
	if err := r.Set(cfg, false); err != nil {
		t.Fatal(err)
	}
	if !f.closed {
		t.Error("a disabled beacon still runs")
	}
	if err := r.Set(cfg, true); err != nil {
		t.Fatal(err)
	}
	last().push(Event{Data: map[string]any{"x": 1}})
	rec.wait(t, 1)
	// disable_during_state_run: nothing while a state runs.
	running := true
	r.StateRunning = func() bool { return running }
	cfg["fake"] = map[string]any{"interval": 0.01, "disable_during_state_run": true}
	if err := r.Set(cfg, true); err != nil {
		t.Fatal(err)
	}
	last().push(Event{Data: map[string]any{"x": 2}})
	time.Sleep(100 * time.Millisecond)
	if tags, _ := rec.wait(t, 1); len(tags) != 1 {
		t.Errorf("an event during a state run: %v", tags)
	}
}
