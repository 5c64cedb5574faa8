package master

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/fileserver"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/modules"
	pillarmod "github.com/brinehq/brine/modules/pillar"
	"github.com/brinehq/brine/state"
)

// The orchestrator alone: its steps reach agents through a fake
// saltmod.Minions and the master's functions through a registry of the
// test's, its job record is the test's, and its SLS come from a temporary
// file_roots.

// stepAgents answers salt.function steps: each targeted id returns what
// answers says for the function (retcode 1 when it says an error).
type stepAgents struct {
	mu   sync.Mutex
	ran  []string // fun@tgt
	fail map[string]bool
}

func (a *stepAgents) RunJob(_ context.Context, t jobs.Targeted, _ bus.Origin, _ time.Duration) (jobs.Outcome, error) {
	a.mu.Lock()
	a.ran = append(a.ran, t.Fun+"@"+fmt.Sprint(t.Tgt))
	a.mu.Unlock()
	ids, _ := a.Targets(context.Background(), t.Tgt, t.TgtType)
	out := jobs.Outcome{Published: jobs.Published{JID: jobs.NewJID(), Minions: ids}, Returns: map[string]jobs.Return{}}
	for _, id := range ids {
		r := jobs.Return{ID: id, Return: true, Success: true}
		if a.fail[t.Fun] {
			r = jobs.Return{ID: id, Return: "it failed", Retcode: 1}
		}
		out.Returns[id] = r
	}
	return out, nil
}

func (a *stepAgents) Targets(_ context.Context, tgt any, _ string) ([]string, error) {
	switch tgt {
	case "web*":
		return []string{"web01", "web02"}, nil
	case "nobody":
		return []string{}, nil
	}
	return []string{fmt.Sprint(tgt)}, nil
}

// stepRecord is a job store of one job's steps.
type stepRecord struct {
	mu    sync.Mutex
	steps map[string]any
}

func (r *stepRecord) Get(_ context.Context, jid string) (*jobs.Job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &jobs.Job{JID: jid, Steps: r.steps}, nil
}

func (r *stepRecord) RecordStep(_ context.Context, _, tag string, ret map[string]any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps[tag] = ret
	return nil
}

const orchSLS = `ping:
  salt.function:
    - name: test.ping
    - tgt: 'web*'
count:
  salt.runner:
    - name: fake.count
    - require:
      - salt: ping
broken:
  salt.function:
    - name: test.broken
    - tgt: db01
after_broken:
  salt.runner:
    - name: fake.count
    - require:
      - salt: broken
release:
  test.succeed_without_changes:
    - name: release {{ pillar['release'] }}
`

func newTestOrchestrator(t *testing.T) (*orchestrator, *function.Registry, *stepAgents, *stepRecord, *int) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "deploy.sls"), []byte(orchSLS), 0o644); err != nil {
		t.Fatal(err)
	}
	agents := &stepAgents{fail: map[string]bool{"test.broken": true}}
	record := &stepRecord{steps: map[string]any{}}
	reg := function.NewWithBuiltins()
	var counted int
	if err := reg.Register(function.Func{Name: "fake.count", Run: func(context.Context, *function.Input) (any, error) {
		counted++
		return counted, nil
	}}); err != nil {
		t.Fatal(err)
	}
	o := &orchestrator{id: "m1_master", renderer: state.NewRenderer(), log: slog.New(slog.NewTextHandler(io.Discard, nil)), funcs: reg,
		roots: func() (fileserver.Roots, error) { return fileserver.Roots{"base": {root}}, nil },
		pillar: func(context.Context, string) (map[string]any, *keyorder.Order, error) {
			return map[string]any{"release": "r1"}, nil, nil
		},
		jobs: record, bus: &firedEvents{}, minions: agents,
		underLease: func(ctx context.Context, _ string, _ bool, fn func(context.Context) (any, error)) (any, error) {
			return fn(ctx)
		},
	}
	if err := reg.RegisterAll(o.Funcs()); err != nil {
		t.Fatal(err)
	}
	return o, reg, agents, record, &counted
}

// results is the orchestration's {state key: result} for m1_master.
func results(t *testing.T, ret any) (map[string]map[string]any, int) {
	t.Helper()
	r, ok := ret.(map[string]any)
	if !ok || r["outputter"] != "highstate" {
		t.Fatalf("return = %#v", ret)
	}
	data, _ := r["data"].(map[string]any)["m1_master"].(map[string]any)
	out := map[string]map[string]any{}
	for k, v := range data {
		out[k], _ = v.(map[string]any)
	}
	return out, r["retcode"].(int)
}

func TestOrchestrateRunsStepsInOrder(t *testing.T) {
	_, reg, agents, _, counted := newTestOrchestrator(t)
	ret, err := reg.Call(context.Background(), "state.orchestrate", []any{"deploy"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, code := results(t, ret)
	if code != 1 {
		t.Errorf("retcode = %d, want 1 (a step failed)", code)
	}
	want := map[string]bool{
		"salt_|-ping_|-test.ping_|-function":                    true,
		"salt_|-count_|-fake.count_|-runner":                    true,
		"salt_|-broken_|-test.broken_|-function":                false,
		"salt_|-after_broken_|-fake.count_|-runner":             false,
		"test_|-release_|-release r1_|-succeed_without_changes": true,
	}
	for key, ok := range want {
		r := res[key]
		if r == nil {
			t.Errorf("no result for %s (have %v)", key, slices.Sorted(func(yield func(string) bool) {
				for k := range res {
					if !yield(k) {
						return
					}
				}
			}))
			continue
		}
		if r["result"] != ok {
			t.Errorf("%s: result %v, want %v (%v)", key, r["result"], ok, r["comment"])
		}
	}
	if *counted != 1 {
		t.Errorf("fake.count ran %d times, want once (after_broken's requisite failed)", *counted)
	}
	if want := []string{"test.ping@web*", "test.broken@db01"}; !slices.Equal(agents.ran, want) {
		t.Errorf("jobs published %v, want %v", agents.ran, want)
	}
	// The run numbers follow the file's order.
	for i, key := range []string{"salt_|-ping_|-test.ping_|-function", "salt_|-count_|-fake.count_|-runner",
		"salt_|-broken_|-test.broken_|-function"} {
		if n := res[key]["__run_num__"]; n != i {
			t.Errorf("%s: __run_num__ %v, want %d", key, n, i)
		}
	}

	// test=True publishes nothing and runs no runner.
	agents.ran = nil
	ret, err = reg.Call(context.Background(), "state.orchestrate", []any{"deploy"}, map[string]any{"test": true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, _ = results(t, ret)
	if len(agents.ran) != 0 || *counted != 1 {
		t.Errorf("test=True published %v and ran fake.count %d times", agents.ran, *counted)
	}
	if r := res["salt_|-ping_|-test.ping_|-function"]; r["result"] != nil {
		t.Errorf("test=True ping = %v, want result None", r)
	}

	// orch_show_sls renders, runs nothing.
	show, err := reg.Call(context.Background(), "state.orch_show_sls", []any{"deploy"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := show.(map[string]any); h["release"] == nil || len(agents.ran) != 0 {
		t.Errorf("orch_show_sls = %v", show)
	}
	// A missing SLS is Salt's error, with retcode 1.
	ret, err = reg.Call(context.Background(), "state.orchestrate", []any{"nothere"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := ret.(map[string]any); r["retcode"] != 1 {
		t.Errorf("missing SLS = %v", ret)
	}
}

// A resumed orchestration (the same job, with the steps its master
// recorded before it died) runs only the steps it had not finished.
func TestOrchestrateResumesAfterRecordedSteps(t *testing.T) {
	o, reg, agents, record, counted := newTestOrchestrator(t)
	run := &jobs.Run{JID: jobs.NewJID(), Fun: "runner.state.orchestrate", User: "root", Origin: bus.Origin{Source: "brine://m1/run"}}
	if _, err := run.Call(context.Background(), reg, o.bus, "state.orchestrate", []any{"deploy"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(record.steps) != 5 {
		t.Fatalf("recorded %d steps, want 5", len(record.steps))
	}
	// Forget the last two as if the master had died before them.
	delete(record.steps, "salt_|-after_broken_|-fake.count_|-runner")
	delete(record.steps, "test_|-release_|-release r1_|-succeed_without_changes")
	delete(record.steps, "salt_|-broken_|-test.broken_|-function")
	agents.ran = nil
	before := *counted
	if _, err := run.Resume(context.Background(), reg, o.bus, "state.orchestrate", []any{"deploy"}, nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"test.broken@db01"}; !slices.Equal(agents.ran, want) {
		t.Errorf("resumed run published %v, want only the unfinished %v", agents.ran, want)
	}
	if *counted != before {
		t.Errorf("the finished runner step ran again")
	}
	if len(record.steps) != 5 {
		t.Errorf("after the resumption %d steps are recorded, want 5", len(record.steps))
	}
}

// TestOrchestratePillarOrder: an orchestration's templates iterate what
// pillar.get returns, merge=True included, in the order the pillar was
// written after the default's keys, as Salt's dicts keep it: the states
// they generate run in that order. Salt 3006.6's pillar.get('apps',
// {'first': 0}, merge=True) over {'apps': {'zeta': 1, 'alpha': 2}} is
// {'first': 0, 'zeta': 1, 'alpha': 2}.
func TestOrchestratePillarOrder(t *testing.T) {
	o, reg, _, _, _ := newTestOrchestrator(t)
	if err := reg.RegisterAll(pillarmod.Module(&modules.Env{})); err != nil {
		t.Fatal(err)
	}
	o.pillar = func(context.Context, string) (map[string]any, *keyorder.Order, error) {
		return map[string]any{"apps": map[string]any{"zeta": int64(1), "alpha": int64(2)}},
			&keyorder.Order{Keys: []string{"apps"}, Sub: map[string]*keyorder.Order{"apps": {Keys: []string{"zeta", "alpha"}}}}, nil
	}
	roots, _ := o.roots()
	sls := `{% for k in salt['pillar.get']('apps', {'first': 0}, merge=True) %}
merged {{ k }}:
  test.succeed_without_changes
{% endfor %}
{% for k in salt['pillar.get']('apps') %}
plain {{ k }}:
  test.succeed_without_changes
{% endfor %}
`
	if err := os.WriteFile(filepath.Join(roots["base"][0], "order.sls"), []byte(sls), 0o644); err != nil {
		t.Fatal(err)
	}
	ret, err := reg.Call(context.Background(), "state.orchestrate", []any{"order"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := results(t, ret)
	for i, id := range []string{"merged first", "merged zeta", "merged alpha", "plain zeta", "plain alpha"} {
		key := "test_|-" + id + "_|-" + id + "_|-succeed_without_changes"
		if n := res[key]["__run_num__"]; n != i {
			t.Errorf("%s: __run_num__ %v, want %d (results %v)", id, n, i, res)
		}
	}
}
