package state_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// runSLS compiles one SLS (and what it includes) and runs it with the
// fake state functions; it returns the results and the calls made.
func runSLS(t *testing.T, files map[string]string, r state.Runner) (map[string]any, []string, []string) {
	t.Helper()
	high := compile(t, tree(t, files), map[string]any{}, "main")
	var calls []string
	chunks := high.Chunks()
	if len(high.Errors) > 0 {
		return nil, nil, high.Errors
	}
	r.Funcs = fakeStates(t, &calls)
	ret := r.Run(context.Background(), chunks)
	return ret, calls, nil
}

func res(t *testing.T, ret map[string]any, key string) map[string]any {
	t.Helper()
	r, ok := ret[key].(map[string]any)
	if !ok {
		t.Fatalf("no %s in %v", key, keys(ret))
	}
	return r
}

func TestRequisites(t *testing.T) {
	for _, tc := range []struct {
		name, sls string
		runner    state.Runner
		// want: state key → "result|comment prefix" ("-" for skipped
		// states, checked with __state_ran__).
		want  map[string]string
		calls string // the calls in order, joined with ";"
	}{
		{name: "require of a failed state fails it", sls: `
a:
  pkg.fail
b:
  pkg.ok:
    - require:
      - pkg: a
`, want: map[string]string{"pkg_|-b_|-b_|-ok": "false|One or more requisite failed: main.a"}, calls: "pkg.fail a"},
		{name: "requisites reorder", sls: `
b:
  pkg.ok:
    - require:
      - pkg: a
a:
  pkg.ok
`, calls: "pkg.ok a;pkg.ok b"},
		{name: "watch fires mod_watch when the watched changed", sls: `
a:
  pkg.changes
b:
  service.ok:
    - watch:
      - pkg: a
c:
  service.ok:
    - watch:
      - pkg: d
d:
  pkg.ok
`, want: map[string]string{"service_|-b_|-b_|-ok": "true|watch fired", "service_|-c_|-c_|-ok": "true|in the correct state"},
			calls: "pkg.changes a;service.ok b;service.mod_watch b;pkg.ok d;service.ok c"},
		{name: "onchanges and onfail", sls: `
a:
  pkg.changes
b:
  pkg.ok
c:
  cmd.ok:
    - onchanges:
      - pkg: a
d:
  cmd.ok:
    - onchanges:
      - pkg: b
e:
  cmd.ok:
    - onfail:
      - pkg: b
f:
  pkg.fail
g:
  cmd.ok:
    - onfail:
      - pkg: f
      - pkg: b
h:
  cmd.ok:
    - onfail_all:
      - pkg: f
      - pkg: b
`, want: map[string]string{
			"cmd_|-c_|-c_|-ok": "true|in the correct state",
			"cmd_|-d_|-d_|-ok": "-|State was not run because none of the onchanges reqs changed",
			"cmd_|-e_|-e_|-ok": "-|State was not run because onfail req did not change",
			"cmd_|-g_|-g_|-ok": "true|in the correct state",
			"cmd_|-h_|-h_|-ok": "-|State was not run because onfail req did not change",
		}},
		{name: "require_any", sls: `
a:
  pkg.fail
b:
  pkg.ok
c:
  cmd.ok:
    - require_any:
      - pkg: a
      - pkg: b
d:
  cmd.ok:
    - require_any:
      - pkg: a
`, want: map[string]string{"cmd_|-c_|-c_|-ok": "true|", "cmd_|-d_|-d_|-ok": "false|One or more requisite failed: main.a"}},
		{name: "missing and recursive requisites", sls: `
a:
  pkg.ok:
    - require:
      - pkg: nonexistent
b:
  pkg.ok:
    - require:
      - pkg: c
c:
  pkg.ok:
    - require:
      - pkg: d
d:
  pkg.ok:
    - require:
      - pkg: b
`, want: map[string]string{"pkg_|-a_|-a_|-ok": "false|The following requisites were not found:\n                   require:\n                       pkg: nonexistent",
			"pkg_|-b_|-b_|-ok": "false|", "pkg_|-d_|-d_|-ok": "false|Recursive requisite found"}},
		// Two states requiring each other: Salt's verify_high refuses them
		// before the run (TestVerifyHigh); a longer cycle is found running.
		{name: "requisites on sls and id, and _in", sls: `
include:
  - other
a:
  cmd.ok:
    - require:
      - sls: other
b:
  cmd.ok:
    - require:
      - id: a
c:
  pkg.changes:
    - watch_in:
      - service: o2
`, calls: "pkg.ok o1;pkg.changes c;service.ok o2;service.mod_watch o2;cmd.ok a;cmd.ok b"},
		{name: "prereq runs only when the state would change", sls: `
stop:
  service.ok:
    - prereq:
      - pkg: upgrade
upgrade:
  pkg.changes
stop2:
  service.ok:
    - prereq:
      - pkg: nochange
nochange:
  pkg.ok
`, want: map[string]string{"service_|-stop_|-stop_|-ok": "true|", "service_|-stop2_|-stop2_|-ok": "true|No changes detected"},
			calls: "pkg.changes upgrade;service.ok stop;pkg.changes upgrade;pkg.ok nochange;pkg.ok nochange"},
		{name: "listen fires mod_watch at the end", sls: `
svc:
  service.ok:
    - listen:
      - pkg: conf
conf:
  pkg.changes
after:
  cmd.ok
`, want: map[string]string{"service_|-listener_svc_|-svc_|-mod_watch": "true|watch fired"}, // Salt's key
			calls: "service.ok svc;pkg.changes conf;cmd.ok after;service.mod_watch svc"},
		{name: "order first, last and numbers; names", sls: `
z:
  cmd.ok:
    - order: last
y:
  cmd.ok:
    - order: 1
x:
  cmd.ok:
    - names:
      - n1
      - n2
w:
  cmd.ok:
    - order: first
`, calls: "cmd.ok w;cmd.ok y;cmd.ok n1;cmd.ok n2;cmd.ok z"},
		{name: "unless, onlyif, creates", sls: `
a:
  cmd.changes:
    - unless: "true"
b:
  cmd.changes:
    - onlyif: "false"
c:
  cmd.changes:
    - onlyif:
      - fun: test.true
    - unless:
      - fun: test.false
d:
  cmd.changes:
    - creates: /
e:
  cmd.changes:
    - unless: true
f:
  cmd.changes:
    - onlyif:
      - path: /
g:
  cmd.changes:
    - onlyif:
      - fun: test.retcode
h:
  cmd.changes:
    - unless:
      - fun: test.retcode
`, runner: state.Runner{Exec: fakeExec},
			// As Salt's _run_check: a YAML boolean is a "bad type" and an entry without fun
			// nothing, which both run the state; a function's retcode
			// counts as a command's.
			want: map[string]string{"cmd_|-a_|-a_|-changes": "true|unless condition is true", "cmd_|-b_|-b_|-changes": "true|onlyif condition is false",
				"cmd_|-c_|-c_|-changes": "true|changed", "cmd_|-d_|-d_|-changes": "true|/ exists",
				"cmd_|-e_|-e_|-changes": "true|changed", "cmd_|-f_|-f_|-changes": "true|changed",
				"cmd_|-g_|-g_|-changes": "true|onlyif condition is false", "cmd_|-h_|-h_|-changes": "true|changed"},
			calls: "cmd.changes c;cmd.changes e;cmd.changes f;cmd.changes h"},
		// Salt's State.call checks that the function exists (verify_data)
		// before onlyif and unless run.
		{name: "a missing state function fails before onlyif", sls: `
a:
  nope.stopped:
    - onlyif: "false"
`, runner: state.Runner{Exec: fakeExec}, want: map[string]string{"nope_|-a_|-a_|-stopped": "false|State 'nope.stopped' was not found in SLS 'main'"}},
		{name: "check_cmd fails a state that changed", sls: `
a:
  cmd.changes:
    - check_cmd:
      - false
`, runner: state.Runner{Exec: fakeExec}, want: map[string]string{"cmd_|-a_|-a_|-changes": "false|check_cmd determined the state failed"}},
		{name: "retry until the result", sls: `
a:
  pkg.fail:
    - retry:
        attempts: 3
        interval: 10
`, runner: state.Runner{Sleep: func(context.Context, time.Duration) error { return nil }},
			want:  map[string]string{"pkg_|-a_|-a_|-fail": "false|Attempt 1: Returned a result of \"False\", with the following comment: \"it failed\"\nAttempt 2:"},
			calls: "pkg.fail a;pkg.fail a;pkg.fail a"},
		{name: "failhard stops the run", sls: `
a:
  pkg.fail:
    - failhard: True
b:
  pkg.ok
`, calls: "pkg.fail a"},
		{name: "parallel states", sls: `
a:
  cmd.slow:
    - parallel: True
b:
  cmd.slow:
    - parallel: True
c:
  cmd.ok:
    - require:
      - cmd: a
      - cmd: b
`, want: map[string]string{"cmd_|-c_|-c_|-ok": "true|"}},
		{name: "use copies arguments", sls: `
a:
  pkg.ok:
    - extra: 1
b:
  pkg.ok:
    - use:
      - pkg: a
`, calls: "pkg.ok a extra=1;pkg.ok b extra=1"},
		{name: "extend and exclude", sls: `
include:
  - other
extend:
  o2:
    service:
      - require:
        - cmd: here
exclude:
  - id: o1
here:
  cmd.ok
`, calls: "cmd.ok here;service.ok o2"},
		{name: "test mode", sls: `
a:
  pkg.changes
b:
  service.ok:
    - watch:
      - pkg: a
`, runner: state.Runner{Test: true}, want: map[string]string{"pkg_|-a_|-a_|-changes": "None|would change"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"main.sls": tc.sls, "other.sls": "o1:\n  pkg.ok\no2:\n  service.ok\n"}
			start := time.Now()
			ret, calls, errs := runSLS(t, files, tc.runner)
			if tc.name == "parallel states" && time.Since(start) > 550*time.Millisecond {
				t.Errorf("two parallel 300 ms states took %s", time.Since(start))
			}
			if errs != nil {
				t.Fatalf("compile: %v", errs)
			}
			for key, w := range tc.want {
				r := res(t, ret, key)
				result, comment, _ := strings.Cut(w, "|")
				if result == "-" {
					if r["__state_ran__"] != false || r["result"] != true {
						t.Errorf("%s ran: %v", key, r)
					}
				} else if fmt.Sprint(r["result"]) != map[string]string{"None": "<nil>"}[result]+strings.TrimPrefix(result, "None") {
					t.Errorf("%s: result %v, want %s (%v)", key, r["result"], result, r["comment"])
				}
				if !strings.HasPrefix(fmt.Sprint(r["comment"]), comment) {
					t.Errorf("%s: comment %q, want %q…", key, r["comment"], comment)
				}
			}
			if tc.calls != "" {
				if got := strings.Join(calls, ";"); got != tc.calls {
					t.Errorf("calls %s\n       want %s", got, tc.calls)
				}
			}
			if tc.name == "failhard stops the run" && len(ret) != 1 {
				t.Errorf("failhard: %d results: %v", len(ret), keys(ret))
			}
		})
	}
}

// fakeExec answers unless/onlyif: cmd.retcode of "true" is 0, of anything
// else 1; test.true and test.false as named; test.retcode returns true
// and sets the retcode 1.
func fakeExec(ctx context.Context, name string, args []any, _ map[string]any) (any, error) {
	switch name {
	case "test.retcode":
		// true, but its command failed (cmd.run's way).
		modules.SetRetcode(ctx, 1)
		return true, nil
	case "cmd.retcode":
		if args[0] == "true" {
			return int64(0), nil
		}
		return int64(1), nil
	case "test.true":
		return true, nil
	case "test.false":
		return false, nil
	}
	return nil, fmt.Errorf("%s is not faked", name)
}

// TestRunNumbersAndShape checks __run_num__ counts results in run order
// and every result has Salt's fields.
func TestRunNumbersAndShape(t *testing.T) {
	ret, _, errs := runSLS(t, map[string]string{"main.sls": "a:\n  pkg.ok\nb:\n  pkg.changes\n"}, state.Runner{})
	if errs != nil {
		t.Fatal(errs)
	}
	order := state.RunNumOrder(ret)
	if strings.Join(order, ",") != "pkg_|-a_|-a_|-ok,pkg_|-b_|-b_|-changes" {
		t.Errorf("run order %v", order)
	}
	for _, k := range order {
		r := res(t, ret, k)
		for _, f := range []string{"__id__", "__run_num__", "__sls__", "changes", "comment", "duration", "name", "result", "start_time"} {
			if _, ok := r[f]; !ok {
				t.Errorf("%s has no %s", k, f)
			}
		}
	}
}

// TestRelativeIncludes resolves .name from a file and from an init.sls
// (whose package is itself), and ..name one level up.
func TestRelativeIncludes(t *testing.T) {
	high := compile(t, tree(t, map[string]string{
		"main.sls":         "include:\n  - app\n",
		"app/init.sls":     "include:\n  - .conf\napp_x:\n  cmd.ok\n",
		"app/conf.sls":     "include:\n  - .sub.deep\n",
		"app/sub/deep.sls": "include:\n  - ..top\ndeep_x:\n  cmd.ok\n",
		"app/top.sls":      "top_x:\n  cmd.ok\n",
		"broken.sls":       "include:\n  - ..nope\n",
	}), map[string]any{}, "main")
	if len(high.Errors) > 0 {
		t.Fatalf("errors: %v", high.Errors)
	}
	var ids []string
	for _, id := range high.IDs {
		ids = append(ids, id.ID+"@"+id.SLS)
	}
	if got := strings.Join(ids, " "); got != "top_x@app.top deep_x@app.sub.deep app_x@app" {
		t.Errorf("ids %s", got)
	}
	high = compile(t, tree(t, map[string]string{"main.sls": "include:\n  - ..nope\n"}), map[string]any{}, "main")
	if len(high.Errors) != 1 || !strings.Contains(high.Errors[0], "goes beyond top level package") {
		t.Errorf("errors %v", high.Errors)
	}
}

// TestResume runs a chain whose first steps an earlier run finished:
// they are not run again, their results are kept, and run numbers go on.
func TestResume(t *testing.T) {
	files := map[string]string{"main.sls": "a:\n  pkg.changes\nb:\n  pkg.ok:\n    - require:\n      - pkg: a\nc:\n  pkg.ok:\n    - require:\n      - pkg: b\n"}
	done := map[string]map[string]any{
		"pkg_|-a_|-a_|-changes": {"result": true, "changes": map[string]any{"a": "new"}, "comment": "before", "__run_num__": int64(0)},
		"pkg_|-b_|-b_|-ok":      {"result": true, "changes": map[string]any{}, "comment": "before", "__run_num__": int64(1)},
	}
	ret, calls, errs := runSLS(t, files, state.Runner{Done: done})
	if errs != nil {
		t.Fatal(errs)
	}
	if strings.Join(calls, ";") != "pkg.ok c" {
		t.Errorf("calls %v", calls)
	}
	if r := res(t, ret, "pkg_|-a_|-a_|-changes"); r["comment"] != "before" {
		t.Errorf("a: %v", r)
	}
	if r := res(t, ret, "pkg_|-c_|-c_|-ok"); fmt.Sprint(r["__run_num__"]) != "2" {
		t.Errorf("c: %v", r)
	}
}
