package alternatives

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	altmod "github.com/brinehq/brine/modules/alternatives"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/state"
)

// TestStates drives the real update-alternatives, its directories and
// the generic link in a temporary directory, through Salt 3006.6's
// sequence: each comment and change is what salt-call answered for the
// same states on Debian 12.
func TestStates(t *testing.T) {
	if _, err := exec.LookPath("update-alternatives"); err != nil {
		t.Fatalf("TestStates needs update-alternatives (Debian's dpkg): %v", err)
	}
	dir := t.TempDir()
	tool := altmod.Tool{Command: "update-alternatives", Altdir: filepath.Join(dir, "alternatives"), Admindir: filepath.Join(dir, "admin")}
	s := &states{tool: func() altmod.Tool { return tool }}
	for _, d := range []string{tool.Altdir, tool.Admindir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p1, p2, link := filepath.Join(dir, "p1"), filepath.Join(dir, "p2"), filepath.Join(dir, "link")
	for _, p := range []string{p1, p2} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reg := function.New()
	if err := reg.RegisterAll(s.funcs()); err != nil {
		t.Fatal(err)
	}
	const name = "brine-alt"
	install := func(p string, prio int64) map[string]any {
		return map[string]any{"name": name, "link": link, "path": p, "priority": prio}
	}
	path := func(p string) map[string]any { return map[string]any{"name": name, "path": p} }
	for _, step := range []struct {
		what, fun string
		test      bool
		kwargs    map[string]any
		result    string
		comment   string
		changes   map[string]any
		current   string // where the alternative points afterwards
	}{
		{"install, test mode", "alternatives.install", true, install(p1, 10), "None",
			"Alternative will be set for " + name + " to " + p1 + " with priority 10", nil, ""},
		{"set, not registered", "alternatives.set", true, path(p1), "False", "Alternative " + p1 + " for " + name + " doesn't exist", nil, ""},
		{"auto, test mode", "alternatives.auto", true, map[string]any{"name": name}, "None", name + " will be put in auto mode", nil, ""},
		{"install", "alternatives.install", false, install(p1, 10), "True",
			"Alternative for " + name + " set to path " + p1 + " with priority 10", install(p1, 10), p1},
		{"install another", "alternatives.install", false, install(p2, 20), "True",
			"Alternative for " + name + " set to path " + p2 + " with priority 20", install(p2, 20), p2},
		{"installed", "alternatives.install", false, install(p1, 10), "True", "Alternative " + p1 + " for " + name + " is already registered", nil, p2},
		{"set, test mode", "alternatives.set", true, path(p1), "None", "Alternative for " + name + " will be set to path " + p1, nil, p2},
		{"set", "alternatives.set", false, path(p1), "True", "Alternative for " + name + " set to path " + p1, map[string]any{"path": p1}, p1},
		{"set again", "alternatives.set", false, path(p1), "True", "Alternative for " + name + " already set to " + p1, nil, p1},
		{"auto", "alternatives.auto", false, map[string]any{"name": name}, "True", "",
			map[string]any{"result": "update-alternatives: using " + p2 + " to provide " + link + " (" + name + ") in auto mode"}, p2},
		{"auto again", "alternatives.auto", false, map[string]any{"name": name}, "True", name + " already in auto mode", nil, p2},
		{"set, unknown path", "alternatives.set", false, path(filepath.Join(dir, "nope")), "False",
			"Alternative " + filepath.Join(dir, "nope") + " for " + name + " doesn't exist", nil, p2},
		{"remove, test mode", "alternatives.remove", true, path(p2), "None", "Alternative for " + name + " will be removed", nil, p2},
		{"remove", "alternatives.remove", false, path(p2), "True", "Alternative for " + name + " removed. Falling back to path " + p1,
			map[string]any{"path": p1}, p1},
		{"remove the last", "alternatives.remove", false, path(p1), "True", "Alternative for " + name + " removed", nil, ""},
		{"remove again", "alternatives.remove", false, path(p1), "False", "Alternative for " + name + " doesn't exist", nil, ""},
	} {
		out, err := reg.Call(state.With(context.Background(), &state.Running{Test: step.test}), step.fun, nil, step.kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		got := out.(state.Result)
		if py.Str(state.Value(got.Result)) != step.result || got.Comment != step.comment {
			t.Errorf("%s: result %s, comment %q; want %s, %q", step.what, py.Str(state.Value(got.Result)), got.Comment, step.result, step.comment)
		}
		if (len(got.Changes) != 0 || len(step.changes) != 0) && !reflect.DeepEqual(got.Changes, step.changes) {
			t.Errorf("%s: changes %v, want %v", step.what, got.Changes, step.changes)
		}
		if cur, _ := tool.Current(name); cur != step.current {
			t.Errorf("%s: %s points to %q, want %q", step.what, name, cur, step.current)
		}
		if target, _ := filepath.EvalSymlinks(link); step.current != "" && target != step.current {
			t.Errorf("%s: %s resolves to %q, want %q", step.what, link, target, step.current)
		}
	}
}
