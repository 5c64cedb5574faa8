package state_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/state"
)

// tree writes files under a temp root and returns it as the base saltenv.
func tree(t *testing.T, files map[string]string) state.Roots {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return state.Roots{"base": {dir}}
}

// fakeStates are state functions recording their calls: `x.changes`
// changes, `x.fail` fails, `x.ok` succeeds without changes, and x.mod_watch
// says it fired.
func fakeStates(t *testing.T, calls *[]string) *function.Registry {
	t.Helper()
	reg := function.New()
	var mu sync.Mutex // parallel states call at once
	mk := func(name string, res func(n string, test bool) state.Result) function.Func {
		return function.Func{Name: name, VarKwargs: true,
			Params: []function.Param{{Name: "name", Kind: function.String, Required: true}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				mu.Lock()
				call := name + " " + in.String("name")
				if v, ok := in.ExtraKwargs["extra"]; ok {
					call += fmt.Sprintf(" extra=%v", v)
				}
				*calls = append(*calls, call)
				mu.Unlock()
				return res(in.String("name"), state.From(ctx).Test), nil
			}}
	}
	for _, mod := range []string{"pkg", "service", "git", "event", "cmd"} {
		for _, f := range []function.Func{
			mk(mod+".changes", func(n string, test bool) state.Result {
				if test {
					return state.Pending(n, "would change", map[string]any{n: "new"})
				}
				return state.Succeeded(n, "changed", map[string]any{n: "new"})
			}),
			mk(mod+".ok", func(n string, _ bool) state.Result { return state.Succeeded(n, "in the correct state", nil) }),
			mk(mod+".slow", func(n string, _ bool) state.Result {
				time.Sleep(300 * time.Millisecond)
				return state.Succeeded(n, "slowly", nil)
			}),
			mk(mod+".fail", func(n string, _ bool) state.Result { return state.Failed(n, "it failed") }),
			mk(mod+".mod_watch", func(n string, _ bool) state.Result {
				return state.Succeeded(n, "watch fired", map[string]any{n: true})
			}),
		} {
			if err := reg.Register(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	return reg
}

func compile(t *testing.T, src state.Roots, pillar map[string]any, mods ...string) *state.High {
	t.Helper()
	c := &state.Compiler{Renderer: state.NewRenderer(), Source: src, Vars: func(string) map[string]any {
		return map[string]any{
			"grains": map[string]any{"os_family": "Debian", "id": "web1"},
			"pillar": pillar,
			"salt": jinja.Salt([]string{"pillar.get"}, func(_ string, args []any, _ map[string]any) (any, error) {
				if v, ok := pillar[args[0].(string)]; ok {
					return v, nil
				}
				return args[1], nil
			}),
		}
	}}
	return c.Compile(context.Background(), "base", mods)
}

// TestSeed003Formula compiles and runs the shape of seed 003's apptest
// formula: a map imported with context, an include, pillar.get, a
// watch_in and an onfail that does not run.
func TestSeed003Formula(t *testing.T) {
	src := tree(t, map[string]string{
		"apache/map.sls": `{% set apache = {'Debian': {'pkg': 'apache2', 'srv': 'apache2'}}[grains.os_family] %}
`,
		"apache/init.sls": `{% from "apache/map.sls" import apache with context %}
install_apache:
  pkg.changes:
    - name: {{ apache.pkg }}

enable_apache:
  service.ok:
    - name: {{ apache.srv }}
    - require:
      - pkg: install_apache
`,
		"apptest.sls": `{% from "apache/map.sls" import apache with context %}
{% set version = salt.pillar.get('version', 'master') %}
include:
  - apache

deploy_app:
  git.changes:
    - name: /srv/app@{{ version }}
    - watch_in:
      - service: enable_apache

notify_of_fail:
  event.changes:
    - name: apptest/failed
    - onfail:
      - git: deploy_app
`,
	})
	high := compile(t, src, map[string]any{"version": "v2"}, "apptest")
	if len(high.Errors) > 0 {
		t.Fatalf("compile errors: %v", high.Errors)
	}
	chunks := high.Chunks()
	if len(high.Errors) > 0 {
		t.Fatalf("chunk errors: %v", high.Errors)
	}
	var calls []string
	r := &state.Runner{Funcs: fakeStates(t, &calls)}
	ret := r.Run(context.Background(), chunks)
	want := map[string]struct {
		result  any
		comment string
		ran     bool
	}{
		"pkg_|-install_apache_|-apache2_|-changes":          {true, "changed", true},
		"service_|-enable_apache_|-apache2_|-ok":            {true, "watch fired", true},
		"git_|-deploy_app_|-/srv/app@v2_|-changes":          {true, "changed", true},
		"event_|-notify_of_fail_|-apptest/failed_|-changes": {true, "State was not run because onfail req did not change", false},
	}
	if len(ret) != len(want) {
		t.Fatalf("got %d results, want %d: %v", len(ret), len(want), keys(ret))
	}
	for tag, w := range want {
		res, ok := ret[tag].(map[string]any)
		if !ok {
			t.Fatalf("no result %s in %v", tag, keys(ret))
		}
		if res["result"] != w.result || res["comment"] != w.comment {
			t.Errorf("%s: result %v comment %q, want %v %q", tag, res["result"], res["comment"], w.result, w.comment)
		}
		if _, ran := res["__state_ran__"]; ran == w.ran {
			t.Errorf("%s: __state_ran__ present=%v, want %v", tag, ran, !w.ran)
		}
		for _, k := range []string{"__id__", "__run_num__", "__sls__", "changes", "comment", "duration", "name", "result", "start_time"} {
			if _, ok := res[k]; !ok {
				t.Errorf("%s: no %s", tag, k)
			}
		}
	}
	if got := ret["git_|-deploy_app_|-/srv/app@v2_|-changes"].(map[string]any)["__sls__"]; got != "apptest" {
		t.Errorf("__sls__ %v", got)
	}
	if got := ret["pkg_|-install_apache_|-apache2_|-changes"].(map[string]any)["__sls__"]; got != "apache" {
		t.Errorf("__sls__ %v", got)
	}
	// The service watched the git state: it ran after it, and its
	// mod_watch fired because it made no changes itself.
	joined := strings.Join(calls, "\n")
	if !strings.Contains(joined, "git.changes /srv/app@v2\nservice.ok apache2\nservice.mod_watch apache2") {
		t.Errorf("calls:\n%s", joined)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
