package pkg

import (
	"context"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/internal/testlock"
	"github.com/brinehq/brine/modules"
	pkgmod "github.com/brinehq/brine/modules/pkg"
	"github.com/brinehq/brine/state"
)

// Small real packages with no dependency beyond what Debian's base has;
// not modules/pkg's "hello", whose tests may run at the same time.
const (
	one = "sl"
	two = "tree"
)

// run calls a state function, in test mode when test is set.
func run(t *testing.T, reg *function.Registry, test bool, fun string, kwargs map[string]any) state.Result {
	t.Helper()
	ctx := state.With(context.Background(), &state.Running{Test: test})
	out, err := reg.Call(ctx, fun, nil, kwargs, nil)
	if err != nil {
		t.Fatalf("%s(%v): %v", fun, kwargs, err)
	}
	return out.(state.Result)
}

// TestStates installs, upgrades, removes and purges real packages through
// the states and the pkg execution module, checking every result, comment
// and changes, in test mode and for real.
func TestStates(t *testing.T) {
	// Other packages' tests install packages too: one at a time, or each
	// sees the other's installs in its package lists.
	testlock.Hold(t, "apt")
	testenv.NeedRoot(t, "TestStates installs and removes Debian packages: run the tests as root (CI does)")
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg-query"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("TestStates needs Debian's %s: %v", tool, err)
		}
	}
	env := &modules.Env{ID: "test"}
	// The agent keeps states apart from execution functions.
	funcs, err := modules.Registry(env, pkgmod.Module)
	if err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	version := func(name string) string {
		out, err := funcs.Call(context.Background(), "pkg.version", []any{name}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out.(string)
	}
	for _, p := range []string{one, two} {
		if v := version(p); v != "" {
			t.Logf("%s %s is installed: purging it for the test, reinstalling after", p, v)
			t.Cleanup(func() { _, _ = funcs.Call(context.Background(), "pkg.install", []any{p}, nil, nil) })
		} else {
			t.Cleanup(func() { _, _ = funcs.Call(context.Background(), "pkg.purge", []any{p}, nil, nil) })
		}
		if _, err := funcs.Call(context.Background(), "pkg.purge", []any{p}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	cand, err := funcs.Call(context.Background(), "pkg.latest_version", []any{one}, map[string]any{"refresh": true}, nil)
	if err != nil || cand == "" {
		t.Fatalf("latest_version(%s) = %v, %v: apt has no candidate; is the package in the sources?", one, cand, err)
	}
	candOne := cand.(string)
	cand, _ = funcs.Call(context.Background(), "pkg.latest_version", []any{two}, map[string]any{"refresh": false}, nil)
	candTwo := cand.(string)
	installed := func(name, v string) map[string]any { return map[string]any{name: map[string]any{"old": "", "new": v}} }
	would := func(names ...string) map[string]any {
		out := map[string]any{}
		for _, n := range names {
			out[n] = map[string]any{"new": "installed", "old": ""}
		}
		return out
	}

	for _, step := range []struct {
		what    string
		fun     string
		test    bool
		kwargs  map[string]any
		result  string
		comment string // a prefix for errors from apt
		changes map[string]any
		have    map[string]bool // packages installed afterwards
	}{
		{"install, test mode", "pkg.installed", true, map[string]any{"name": one}, "None",
			"The following packages would be installed/updated: sl", would(one), map[string]bool{one: false}},
		{"install", "pkg.installed", false, map[string]any{"name": one}, "True",
			"The following packages were installed/updated: sl", installed(one, candOne), map[string]bool{one: true}},
		{"installed again", "pkg.installed", false, map[string]any{"name": one}, "True",
			"All specified packages are already installed", nil, nil},
		{"installed again, test mode", "pkg.installed", true, map[string]any{"name": one}, "True",
			"All specified packages are already installed", nil, nil},
		{"at its version", "pkg.installed", false, map[string]any{"name": one, "version": candOne}, "True",
			"All specified packages are already installed and are at the desired version", nil, nil},
		// hold, as Salt's: the selection changed by pkg.hold after the
		// install, test mode saying what it would do
		{"hold, test mode", "pkg.installed", true, map[string]any{"name": one, "hold": true}, "None",
			"All specified packages are already installed.\nPackage sl is set to be held.", nil, nil},
		{"hold", "pkg.installed", false, map[string]any{"name": one, "hold": true}, "True",
			"All specified packages are already installed.\nPackage sl is now being held.",
			map[string]any{one: map[string]any{"old": "install", "new": "hold"}}, nil},
		{"held again", "pkg.installed", false, map[string]any{"name": one, "hold": true}, "True",
			"All specified packages are already installed.\nPackage sl is already set to be held.", nil, nil},
		{"unhold", "pkg.installed", false, map[string]any{"name": one, "hold": false}, "True",
			"All specified packages are already installed.\nPackage sl is no longer being held.",
			map[string]any{one: map[string]any{"old": "hold", "new": "install"}}, nil},
		{"compared versions, test mode", "pkg.installed", true,
			map[string]any{"name": "x", "pkgs": []any{map[string]any{one: ">=1.0"}, two}}, "None",
			"The following packages would be installed/updated: tree", would(two), map[string]bool{two: false}},
		{"compared version satisfied", "pkg.installed", false,
			map[string]any{"name": "x", "pkgs": []any{map[string]any{one: ">=1.0"}}}, "True",
			"All specified packages are already installed and are at the desired version", nil, nil},
		{"the latest version", "pkg.installed", false, map[string]any{"name": one, "version": "latest"}, "True",
			"All specified packages are already installed and are at the desired version", nil, nil},
		{"reinstall, test mode", "pkg.installed", true, map[string]any{"name": one, "reinstall": true}, "None",
			"The following packages would be reinstalled: sl", would(one), nil},
		{"reinstall", "pkg.installed", false, map[string]any{"name": one, "reinstall": true}, "True",
			"Package sl was reinstalled.", nil, map[string]bool{one: true}},
		{"no packages", "pkg.installed", false, map[string]any{"name": "x", "pkgs": []any{}}, "True",
			"No packages to install provided", nil, nil},
		{"version prefix satisfied", "pkg.installed", false,
			map[string]any{"name": "x", "pkgs": []any{map[string]any{one: candOne[:1] + "*"}}}, "True",
			"All specified packages are already installed and are at the desired version", nil, nil},
		{"no version matches", "pkg.installed", false,
			map[string]any{"name": "x", "pkgs": []any{map[string]any{one: ">=99"}}}, "False",
			"No version of package 'sl' matching '>=99' is available (the candidate is '" + candOne + "')", nil, nil},
		{"bad version", "pkg.installed", false,
			map[string]any{"name": "x", "pkgs": []any{map[string]any{one: "1<2"}}}, "False",
			"Invalid version specification '1<2'.", nil, nil},
		{"bad pkgs", "pkg.installed", false, map[string]any{"name": "x", "pkgs": "sl"}, "False",
			"Invalidly formatted 'pkgs' parameter. See minion log.", nil, nil},
		{"unknown package", "pkg.installed", false, map[string]any{"name": "brine-no-such-package"}, "False",
			"Problem encountered installing package(s). Additional info follows:\n\nerrors:\n    - E: Unable to locate package brine-no-such-package", nil, nil},
		{"latest, up to date", "pkg.latest", false, map[string]any{"name": one}, "True",
			"Package sl is already up-to-date", nil, nil},
		{"latest, test mode", "pkg.latest", true, map[string]any{"name": "x", "pkgs": []any{one, two}}, "None",
			"The following packages would be installed/upgraded: tree\nThe following packages are already up-to-date: sl (" + candOne + ")",
			map[string]any{two: map[string]any{"old": "", "new": candTwo}}, map[string]bool{two: false}},
		{"latest", "pkg.latest", false, map[string]any{"name": "x", "pkgs": []any{one, two}}, "True",
			"The following packages were successfully installed/upgraded: tree The following packages were already up-to-date: sl",
			installed(two, candTwo), map[string]bool{one: true, two: true}},
		{"latest again", "pkg.latest", false, map[string]any{"name": "x", "pkgs": []any{one, two}}, "True",
			"All packages are up-to-date (sl, tree).", nil, nil},
		{"latest of nothing known", "pkg.latest", false, map[string]any{"name": "brine-no-such-package"}, "False",
			"No information found for 'brine-no-such-package'.", nil, nil},
		{"remove, test mode", "pkg.removed", true, map[string]any{"name": one}, "None",
			"The following packages will be removed: sl.", map[string]any{one: map[string]any{"new": "removed", "old": ""}}, map[string]bool{one: true}},
		{"remove", "pkg.removed", false, map[string]any{"name": one}, "True",
			"All targeted packages were removed.", map[string]any{one: map[string]any{"old": candOne, "new": ""}}, map[string]bool{one: false}},
		{"removed again", "pkg.removed", false, map[string]any{"name": one}, "True",
			"All specified packages are already absent", nil, nil},
		{"removed, version not matching", "pkg.removed", false, map[string]any{"name": two, "version": "<1"}, "True",
			"All specified packages (matching specified versions) are already absent", nil, map[string]bool{two: true}},
		{"purge, test mode", "pkg.purged", true, map[string]any{"name": "x", "pkgs": []any{one, two}}, "None",
			"The following packages will be purged: tree.", map[string]any{two: map[string]any{"new": "purged", "old": ""}}, map[string]bool{two: true}},
		{"purge", "pkg.purged", false, map[string]any{"name": "x", "pkgs": []any{one, two}}, "True",
			"The following packages were not installed: sl The following packages were purged: tree.",
			map[string]any{two: map[string]any{"old": candTwo, "new": ""}}, map[string]bool{two: false}},
		{"purged again", "pkg.purged", false, map[string]any{"name": "x", "pkgs": []any{one, two}}, "True",
			"All specified packages are already absent", nil, nil},
	} {
		got := run(t, reg, step.test, step.fun, step.kwargs)
		if py.Str(state.Value(got.Result)) != step.result || !strings.HasPrefix(got.Comment, step.comment) ||
			(step.result != "False" && got.Comment != step.comment) {
			t.Errorf("%s: %s: result %s, comment %q; want %s, %q", step.what, step.fun, py.Str(state.Value(got.Result)), got.Comment, step.result, step.comment)
		}
		if len(got.Changes) != 0 || len(step.changes) != 0 {
			if !reflect.DeepEqual(got.Changes, step.changes) {
				t.Errorf("%s: %s: changes %#v, want %#v", step.what, step.fun, got.Changes, step.changes)
			}
		}
		for p, want := range step.have {
			if (version(p) != "") != want {
				t.Errorf("%s: %s installed is %v, want %v", step.what, p, !want, want)
			}
		}
	}
}
