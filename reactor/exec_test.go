package reactor

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
)

func TestBackoff(t *testing.T) {
	p := Retry{Attempts: 5, Interval: 4 * time.Second, MaxInterval: 32 * time.Second}
	tests := []struct {
		failures int
		base     time.Duration
	}{{1, 4 * time.Second}, {2, 8 * time.Second}, {3, 16 * time.Second}, {4, 32 * time.Second}, {9, 32 * time.Second}}
	total := time.Duration(0)
	for _, tt := range tests {
		for range 50 {
			d := retryDelay(p, tt.failures)
			if d < tt.base*8/10 || d > tt.base*12/10 {
				t.Fatalf("retryDelay after %d failures = %v, want %v ±20%%", tt.failures, d, tt.base)
			}
		}
		if tt.failures < p.Attempts {
			total += tt.base
		}
	}
	if total != 60*time.Second {
		t.Errorf("default policy waits %v in all, want about a minute", total)
	}
	if d := retryDelay(Retry{Attempts: 2}, 1); d != 0 {
		t.Errorf("zero interval: %v", d)
	}
}

// TestRenderUndefinedFails: as in Salt (StrictUndefined), a reaction that
// uses a key the event does not have fails to render, naming it, instead
// of passing "" on; .get and default() are how a reaction says a key is
// optional.
func TestRenderUndefinedFails(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{"x:\n  runner.test.arg:\n    - arg: ['{{ data['nope'] }}']\n", "u.sls:3: render: 'dict object' has no attribute 'nope'"},
		{"x:\n  runner.test.arg:\n    - arg: ['{{ undefined_var }}']\n", "u.sls:3: render: 'undefined_var' is undefined"},
	} {
		path := filepath.Join(dir, "u.sls")
		writeFile(t, path, tc.text)
		r := New(Config{Mapping: []MapEntry{{Glob: "*", Files: []string{path}}}}, testFuncs(t))
		p := r.Plan(context.Background(), "t", map[string]any{})
		if len(p.Errors) != 1 || !strings.Contains(p.Errors[0].Error(), tc.want) {
			t.Errorf("%q: errors %v, want %q", tc.text, p.Errors, tc.want)
		}
	}
	path := filepath.Join(dir, "ok.sls")
	writeFile(t, path, "x:\n  runner.test.arg:\n    - arg: ['{{ data.get('nope') | default('') }}', '{{ data.get('nope', 'd') }}']\n")
	r := New(Config{Mapping: []MapEntry{{Glob: "*", Files: []string{path}}}}, testFuncs(t))
	p := r.Plan(context.Background(), "t", map[string]any{})
	if len(p.Errors) > 0 || len(p.Reactions) != 1 {
		t.Fatalf("plan: %v", p.Errors)
	}
	// None|default('') is None, which Salt writes as None.
	if got := p.Reactions[0].Args; len(got) != 2 || got[0] != "None" || got[1] != "d" {
		t.Fatalf("args %q, want 'None' and 'd'", got)
	}
}

func TestRetryOverride(t *testing.T) {
	policy := Retry{Attempts: 5, Interval: 4 * time.Second, MaxInterval: 32 * time.Second}
	tests := []struct {
		name string
		file map[string]any
		want Retry
	}{
		{"attempts only", map[string]any{"attempts": 2}, Retry{2, 4 * time.Second, 32 * time.Second}},
		{"interval past the max", map[string]any{"interval": 60}, Retry{5, time.Minute, time.Minute}},
		{"all", map[string]any{"attempts": 3, "interval": "10ms", "max_interval": "40ms"}, Retry{3, 10 * time.Millisecond, 40 * time.Millisecond}},
	}
	for _, tt := range tests {
		r, err := compileReaction("x", "runner.test.ping", []any{map[string]any{"retry": tt.file}}, testFuncs(t))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := policy.override(r.Retry); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if got := policy.override(nil); got != policy {
		t.Errorf("no override: %+v", got)
	}
}

func TestExecuteRequisiteErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "req.sls")
	writeFile(t, path, `a:
  runner.test.arg:
    - require: [b]
b:
  runner.test.arg:
    - require: [a]
c:
  runner.test.arg:
    - require:
      - runner: nowhere
d:
  runner.test.arg:
    - require:
      - wheel: e
e:
  runner.test.arg: []
`)
	r := New(Config{Mapping: []MapEntry{{Glob: "*", Files: []string{path}}}}, testFuncs(t))
	p := r.Plan(context.Background(), "t", nil)
	if len(p.Errors) > 0 || len(p.Reactions) != 5 {
		t.Fatalf("plan: %v", p.Errors)
	}
	ev, err := bus.NewEvent("t", nil, bus.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	pub := &bus.Recorder{}
	done := make(chan []Result)
	go func() { done <- r.Execute(context.Background(), ev, p.Reactions, pub, nil) }()
	var results []Result
	select {
	case results = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a requisite cycle deadlocked Execute")
	}
	want := map[string]string{
		"a": "requisites form a cycle", "b": "requisites form a cycle",
		"c": "requisite not found: runner: nowhere", "d": "requisite not found: wheel: e",
	}
	for _, res := range results {
		id := res.Reaction.ID
		if id == "e" {
			if res.Status != Succeeded {
				t.Errorf("e: %v %v", res.Status, res.Err)
			}
			continue
		}
		if res.Status != Failed || !errors.Is(res.Err, ErrRequisite) || !strings.Contains(res.Err.Error(), want[id]) {
			t.Errorf("%s: %v %v, want failed with %q", id, res.Status, res.Err, want[id])
		}
	}
	errorsFired := 0
	for _, ev := range pub.Events() {
		if ev.Tag == TagError {
			errorsFired++
		}
	}
	if errorsFired != 4 {
		t.Errorf("%d error events, want 4", errorsFired)
	}
}

func TestPlanSurvivesPanic(t *testing.T) {
	reg := testFuncs(t)
	if err := reg.Register(function.Func{Name: "test.boom", ReadOnly: true,
		Run: func(context.Context, *function.Input) (any, error) { panic("engine bug") }}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad, good := filepath.Join(dir, "bad.sls"), filepath.Join(dir, "good.sls")
	writeFile(t, bad, "x: {{ salt['test.boom']() }}\n")
	writeFile(t, good, "ok:\n  runner.test.ping: []\n")
	r := New(Config{Mapping: []MapEntry{{Glob: "*", Files: []string{bad, good}}}}, reg)
	p := r.Plan(context.Background(), "t", nil)
	if len(p.Errors) != 1 || !strings.Contains(p.Errors[0].Error(), "internal error: engine bug") || p.Errors[0].File != bad {
		t.Fatalf("errors %v", p.Errors)
	}
	if len(p.Reactions) != 1 || p.Reactions[0].ID != "ok" {
		t.Fatalf("the good file did not compile: %+v", p.Reactions)
	}

	// A panicking function is a failed attempt.
	ev, err := bus.NewEvent("t", nil, bus.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	re := &Reaction{ID: "boom", Kind: Runner, Fun: "test.boom", Retry: &Retry{Attempts: 2, Interval: time.Millisecond}}
	res := r.Execute(context.Background(), ev, []*Reaction{re}, &bus.Recorder{}, nil)
	if len(res) != 1 || res[0].Status != Failed || res[0].Attempts != 2 || !strings.Contains(res[0].Err.Error(), "runner.test.boom panicked: engine bug") {
		t.Fatalf("results %+v", res)
	}
}
