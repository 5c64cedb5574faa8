package state_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/brinehq/brine/state"
)

// TestCallChunkAsSalt checks the differences reported against Salt 3006.6
// (each was run there; testdata/salt/states has the whole suite): per
// state, "result|comment|__run_num__".
func TestCallChunkAsSalt(t *testing.T) {
	for _, tc := range []struct {
		name, sls string
		want      map[string]string
		errs      string
	}{
		{name: "a prereq whose target requires a failed state fails", sls: `
bad:
  pkg.fail
target:
  pkg.changes:
    - require:
      - pkg: bad
pre:
  service.changes:
    - prereq:
      - pkg: target
`, want: map[string]string{
			"pkg_|-bad_|-bad_|-fail":          "false|it failed|0",
			"pkg_|-target_|-target_|-changes": "false|One or more requisite failed: main.bad|1",
			"service_|-pre_|-pre_|-changes":   "false|One or more requisite failed: main.target|2",
		}},
		{name: "a prereq that fails leaves its target's test result, without changes", sls: `
target:
  pkg.changes
pre:
  service.fail:
    - prereq:
      - pkg: target
`, want: map[string]string{
			"service_|-pre_|-pre_|-fail":      "false|it failed|0",
			"pkg_|-target_|-target_|-changes": "<nil>|would change|1",
		}},
		{name: "a prereq's target requiring what does not exist, and what requires it", sls: `
A:
  pkg.ok:
    - prereq:
      - pkg: B
B:
  pkg.ok:
    - require:
      - name: non-existant
C:
  pkg.ok:
    - require:
      - pkg: B
`, want: map[string]string{
			"pkg_|-A_|-A_|-ok": "false|One or more requisite failed: main.B|1",
			"pkg_|-C_|-C_|-ok": "false|Recursive requisite found|23",
		}},
		{name: "mod_watch is a call of its own, with its own run number", sls: `
a:
  pkg.changes
b:
  service.ok:
    - watch:
      - pkg: a
c:
  pkg.ok
`, want: map[string]string{
			"service_|-b_|-b_|-ok": "true|watch fired|2",
			"pkg_|-c_|-c_|-ok":     "true|in the correct state|3",
		}},
		{name: "use copies onlyif and unless", sls: `
base:
  cmd.changes:
    - onlyif: "false"
user:
  cmd.changes:
    - use:
      - cmd: base
`, want: map[string]string{
			"cmd_|-user_|-user_|-changes": "true|onlyif condition is false|1",
		}},
		{name: "onlyif's function form: its retcode counts, an entry without fun does not stop the state", sls: `
a:
  cmd.changes:
    - onlyif:
      - fun: test.retcode
b:
  cmd.changes:
    - onlyif:
      - path: /
c:
  cmd.changes:
    - onlyif: "false"
    - unless: "true"
`, want: map[string]string{
			"cmd_|-a_|-a_|-changes": "true|onlyif condition is false|0",
			"cmd_|-b_|-b_|-changes": "true|changed|1",
			"cmd_|-c_|-c_|-changes": "true|onlyif condition is false\nunless condition is true|2",
		}},
		{name: "a bare id in require_in that no state has is ignored, a string require_in too", sls: `
a:
  pkg.ok:
    - require_in:
      - nothere
b:
  pkg.ok:
    - require_in: a
`, want: map[string]string{
			"pkg_|-a_|-a_|-ok": "true|in the correct state|0",
			"pkg_|-b_|-b_|-ok": "true|in the correct state|1",
		}},
		{name: "an SLS that renders to nothing has no states", sls: "", want: map[string]string{}},
		{name: "an SLS whose Jinja renders nothing has no states", sls: "{% if false %}a:\n  pkg.ok\n{% endif %}", want: map[string]string{}},
		{name: "prereqs naming each other end (Salt dies of a RecursionError)", sls: `
A:
  pkg.ok:
    - prereq_in:
      - pkg: B
B:
  pkg.ok:
    - prereq_in:
      - pkg: A
`, want: map[string]string{
			"pkg_|-A_|-A_|-ok": "false|Recursive requisite found|0",
			"pkg_|-B_|-B_|-ok": "false|Recursive requisite found|1",
		}},
		{name: "a require that is a mapping is refused, as Salt refuses it", sls: `
a:
  pkg.ok
b:
  pkg.ok:
    - require:
        pkg: a
`, errs: "[The require statement in state 'b' in SLS 'main' needs to be formed as a list]"},
		{name: "two states requiring each other are refused", sls: `
a:
  pkg.ok:
    - require:
      - pkg: b
b:
  pkg.ok:
    - require:
      - pkg: a
`, errs: `[A recursive requisite was found, SLS "main" ID "b" ID "a"]`},
		{name: "an onfail that is a string names its characters, as Salt iterates it", sls: `
foo:
  pkg.fail
b:
  pkg.ok:
    - onfail: foo
`, want: map[string]string{
			"pkg_|-b_|-b_|-ok": "false|The following requisites were not found:\n" +
				"                   onfail:\n                       id: f\n                       id: o\n                       id: o\n|1",
		}},
		{name: "names of a declaration without an order (an extension added it) run sorted, as Salt sorts them", sls: `
a:
  pkg.ok: []
b:
  pkg.ok: []
extend:
  a:
    cmd:
      - ok
      - names: [z2, z1, a3]
`, want: map[string]string{
			"cmd_|-a_|-a3_|-ok": "true|in the correct state|2",
			"cmd_|-a_|-z1_|-ok": "true|in the correct state|3",
			"cmd_|-a_|-z2_|-ok": "true|in the correct state|4",
		}},
		{name: "a listen naming a missing state is a Listen_Error result, a listen_in too; no compile error", sls: `
a:
  service.changes:
    - listen:
      - pkg: missing
b:
  service.changes:
    - listen_in:
      - pkg: missing_too
`, want: map[string]string{
			"Listen_Error_|-listen_missing_|-listen_pkg_|-Listen_Error":     "false|Referenced state pkg: missing does not exist|2",
			"Listen_Error_|-listen_missing_too_|-listen_pkg_|-Listen_Error": "false|Referenced state pkg: missing_too does not exist|3",
		}},
		{name: "names run in their order, before the states after them", sls: `
a:
  pkg.changes:
    - names: [a1, a2]
b:
  pkg.ok
`, want: map[string]string{
			"pkg_|-a_|-a1_|-changes": "true|changed|0",
			"pkg_|-a_|-a2_|-changes": "true|changed|1",
			"pkg_|-b_|-b_|-ok":       "true|in the correct state|2",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			ret, _, errs := runSLS(t, map[string]string{"main.sls": tc.sls}, state.Runner{Exec: fakeExec})
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the run took %s", d)
			}
			if fmt.Sprint(errs) != tc.errs && (errs != nil || tc.errs != "") {
				t.Fatalf("compile errors %v, want %s", errs, tc.errs)
			}
			if len(tc.want) == 0 && len(ret) != 0 {
				t.Errorf("states %v, want none", keys(ret))
			}
			for key, w := range tc.want {
				r := res(t, ret, key)
				if got := fmt.Sprintf("%v|%v|%v", r["result"], r["comment"], r["__run_num__"]); got != w {
					t.Errorf("%s: %q, want %q", key, got, w)
				}
			}
		})
	}
}
