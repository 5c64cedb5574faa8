package saltmod

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// fakeMinions answers every job from returns, by agent id, and records
// the jobs.
type fakeMinions struct {
	ids     []string
	returns map[string]jobs.Return
	jobs    []jobs.Targeted
}

func (f *fakeMinions) RunJob(_ context.Context, t jobs.Targeted, _ bus.Origin, _ time.Duration) (jobs.Outcome, error) {
	f.jobs = append(f.jobs, t)
	ids := f.ids
	if t.TgtType == "list" {
		ids = nil
		for _, x := range t.Tgt.([]any) {
			ids = append(ids, x.(string))
		}
	}
	out := jobs.Outcome{Published: jobs.Published{JID: t.JID, Minions: ids}, Returns: map[string]jobs.Return{}}
	for _, id := range ids {
		if r, ok := f.returns[id]; ok {
			out.Returns[id] = r
		}
	}
	return out, nil
}

func (f *fakeMinions) Targets(context.Context, any, string) ([]string, error) { return f.ids, nil }

func registry(t *testing.T, f *fakeMinions) *function.Registry {
	t.Helper()
	master := function.NewWithBuiltins()
	env := &modules.Env{ID: "m_master", Functions: master}
	reg := function.New()
	if err := reg.RegisterAll(New(f)(env)); err != nil {
		t.Fatal(err)
	}
	return reg
}

func call(t *testing.T, reg *function.Registry, test bool, name string, kwargs map[string]any) state.Result {
	t.Helper()
	out, err := reg.Call(state.With(context.Background(), &state.Running{Test: test}), name, nil, kwargs, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.(state.Result)
}

func result(r state.Result) any {
	if r.Result == nil {
		return nil
	}
	return *r.Result
}

func TestFunction(t *testing.T) {
	ok := jobs.Return{Return: "out", Success: true}
	bad := jobs.Return{Return: "boom", Retcode: 1}
	for _, tc := range []struct {
		name    string
		f       *fakeMinions
		kwargs  map[string]any
		test    bool
		result  any
		comment string
	}{
		{"all succeed", &fakeMinions{ids: []string{"a", "b"}, returns: map[string]jobs.Return{"a": ok, "b": ok}}, nil, false,
			true, "Function ran successfully. Function cmd.run ran on a, b."},
		{"one fails", &fakeMinions{ids: []string{"a", "b"}, returns: map[string]jobs.Return{"a": ok, "b": bad}}, nil, false,
			false, "Running function cmd.run failed on minions: b Function cmd.run ran on a.\nFailures:\n    b: boom"},
		{"fail_minions", &fakeMinions{ids: []string{"a", "b"}, returns: map[string]jobs.Return{"a": ok, "b": bad}},
			map[string]any{"fail_minions": "b"}, false, true, "Function ran successfully. Function cmd.run ran on a.\nFailures:\n    b: boom"},
		{"no response", &fakeMinions{ids: []string{"a"}, returns: map[string]jobs.Return{}}, nil, false,
			false, "Running function cmd.run failed on minions: a\nFailures:\n    a: Minion did not respond"},
		{"no response, expect_minions False", &fakeMinions{ids: []string{"a"}, returns: map[string]jobs.Return{}},
			map[string]any{"expect_minions": false}, false, true, "Function ran successfully."},
		{"nothing matched", &fakeMinions{}, nil, false, false, "No minions matched the target."},
		{"test mode", &fakeMinions{ids: []string{"a"}}, nil, true, nil, "Function cmd.run would be executed on target web*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kw := map[string]any{"name": "cmd.run", "tgt": "web*", "arg": []any{"uptime"}}
			for k, v := range tc.kwargs {
				kw[k] = v
			}
			r := call(t, registry(t, tc.f), tc.test, "salt.function", kw)
			if result(r) != tc.result || !strings.HasPrefix(r.Comment, tc.comment) {
				t.Errorf("result %v comment %q, want %v %q", result(r), r.Comment, tc.result, tc.comment)
			}
			if tc.test && len(tc.f.jobs) > 0 {
				t.Error("test mode published a job")
			}
		})
	}
	// batch: jobs on 2 agents at a time.
	f := &fakeMinions{ids: []string{"a", "b", "c"}, returns: map[string]jobs.Return{"a": ok, "b": ok, "c": ok}}
	r := call(t, registry(t, f), false, "salt.function", map[string]any{"name": "test.ping", "tgt": "*", "batch": "2"})
	if result(r) != true || len(f.jobs) != 2 || len(r.Changes["ret"].(map[string]any)) != 3 {
		t.Errorf("batch: %d jobs, %v", len(f.jobs), r)
	}
}

func TestState(t *testing.T) {
	changed := map[string]any{"file_|-x_|-/x_|-managed": map[string]any{"result": true, "changes": map[string]any{"diff": "New file"}}}
	same := map[string]any{"file_|-x_|-/x_|-managed": map[string]any{"result": true, "changes": map[string]any{}}}
	failed := map[string]any{"file_|-x_|-/x_|-managed": map[string]any{"result": false, "changes": map[string]any{}, "comment": "nope",
		"__run_num__": int64(0), "name": "/x", "start_time": "10:00:00.000000", "duration": 1.0}}
	f := &fakeMinions{ids: []string{"a", "b", "c"}, returns: map[string]jobs.Return{
		"a": {Return: changed, Success: true}, "b": {Return: same, Success: true}, "c": {Return: failed, Retcode: 2}}}
	reg := registry(t, f)
	r := call(t, reg, false, "salt.state", map[string]any{"name": "deploy", "tgt": "*", "sls": []any{"app", "web"}, "pillar": map[string]any{"v": 1}})
	if result(r) != false || !strings.HasPrefix(r.Comment, "Run failed on minions: c\nFailures:\n") || !strings.Contains(r.Comment, "Result: Failed") {
		t.Errorf("a failure: %v %q", result(r), r.Comment)
	}
	if job := f.jobs[0]; job.Fun != "state.sls" || !strings.Contains(fmt.Sprint(job.Arg), "app,web") || !strings.Contains(fmt.Sprint(job.Arg), "pillar:map[v:1]") {
		t.Errorf("job %s %v", job.Fun, job.Arg)
	}
	r = call(t, reg, false, "salt.state", map[string]any{"name": "deploy", "tgt": "*", "sls": "app", "allow_fail": 1})
	if result(r) != true || !strings.HasPrefix(r.Comment, "States ran successfully. Updating a. No changes made to b.") ||
		r.Changes["out"] != "highstate" || len(r.Changes["ret"].(map[string]any)) != 1 {
		t.Errorf("allow_fail: %v %q %v", result(r), r.Comment, r.Changes)
	}
	r = call(t, reg, false, "salt.state", map[string]any{"name": "deploy", "tgt": "*", "highstate": true, "fail_minions": []any{"c"}})
	if f.jobs[len(f.jobs)-1].Fun != "state.highstate" || result(r) != true {
		t.Errorf("highstate: %s %v %q", f.jobs[len(f.jobs)-1].Fun, result(r), r.Comment)
	}
	if r := call(t, reg, false, "salt.state", map[string]any{"name": "x", "tgt": "*"}); result(r) != false ||
		r.Comment != "No highstate or sls specified, no execution made" {
		t.Errorf("neither sls nor highstate: %q", r.Comment)
	}
}

func TestRunnerAndWheel(t *testing.T) {
	reg := registry(t, &fakeMinions{})
	r := call(t, reg, false, "salt.runner", map[string]any{"name": "test.arg", "color": "red"})
	if result(r) != true || r.Comment != "Runner function 'test.arg' executed." {
		t.Errorf("runner: %v %q", result(r), r.Comment)
	}
	ret, _ := r.Changes["return"].(map[string]any)
	if kw, _ := ret["kwargs"].(map[string]any); kw["color"] != "red" {
		t.Errorf("runner return %v", r.Changes)
	}
	r = call(t, reg, false, "salt.runner", map[string]any{"name": "test.exception", "message": "bad"})
	if result(r) != false || r.Comment != "Runner function 'test.exception' failed." {
		t.Errorf("failing runner: %v %q", result(r), r.Comment)
	}
	if r := call(t, reg, true, "salt.runner", map[string]any{"name": "test.arg"}); result(r) != nil ||
		r.Comment != "Runner function 'test.arg' would be executed." {
		t.Errorf("test mode: %v %q", result(r), r.Comment)
	}
	if r := call(t, reg, false, "salt.wheel", map[string]any{"name": "test.arg"}); result(r) != false || !strings.Contains(r.Comment, "not available") {
		t.Errorf("a runner function as a wheel: %v %q", result(r), r.Comment)
	}
}
