package service

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	svcmod "github.com/brinehq/brine/modules/service"
	"github.com/brinehq/brine/state"
)

// fakeSystemd answers systemctl as systemd does for one running unit
// whose file can change on disk: until daemon-reload, systemctl status
// warns that it changed (which Salt's systemd_service reads).
type fakeSystemd struct {
	mu      sync.Mutex
	unit    string
	changed bool
	calls   []string
}

func (f *fakeSystemd) run(_ context.Context, argv ...string) (svcmod.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	line := strings.Join(argv, " ")
	f.calls = append(f.calls, line)
	switch {
	case line == "systemctl --system daemon-reload":
		f.changed = false
	case line == "systemctl status "+f.unit+" -n 0":
		out := "● " + f.unit + " - brine test\n     Loaded: loaded (/etc/systemd/system/" + f.unit + "; enabled)\n     Active: active (running)"
		if f.changed {
			out = "Warning: The unit file, source configuration file or drop-ins of " + f.unit +
				" changed on disk. Run 'systemctl daemon-reload' to reload units.\n" + out
		}
		return svcmod.Result{Stdout: out}, nil
	case line == "systemctl is-active "+f.unit:
		return svcmod.Result{Stdout: "active"}, nil
	case line == "systemctl is-enabled "+f.unit:
		return svcmod.Result{Stdout: "enabled"}, nil
	case strings.HasPrefix(line, "systemctl restart ") && f.changed:
		// What systemd does: the old unit definition runs again.
		return svcmod.Result{Stderr: "Warning: " + f.unit + " changed on disk, run 'systemctl daemon-reload'"}, nil
	}
	return svcmod.Result{}, nil
}

func (f *fakeSystemd) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// TestUnitChangedWatch is a file.managed of a unit file that changed,
// watched by service.running: systemd reloads its configuration before
// the restart, as Salt's systemd_service does (its status says the unit
// changed on disk), and not when nothing changed.
func TestUnitChangedWatch(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fakeSystemd{unit: "brine-app.service"}
	m := &svcmod.Manager{Run: f.run, Systemd: func() bool { return true }, Root: root}
	env := &modules.Env{ID: "test"}
	if _, err := modules.Registry(env, func(*modules.Env) []function.Func { return m.Funcs() }); err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	call := func(fun string, kwargs map[string]any) state.Result {
		t.Helper()
		out, err := reg.Call(state.With(context.Background(), &state.Running{}), fun, nil, kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return out.(state.Result)
	}
	unit := filepath.Join(root, "etc/systemd/system/brine-app.service")
	for _, step := range []struct {
		what    string
		changed bool // the unit file changes before the states run
	}{
		{"unit changed", true},
		{"unit unchanged", false},
	} {
		if step.changed {
			// file.managed writes the new unit.
			if err := os.WriteFile(unit, []byte("[Service]\nExecStart=/bin/sleep 1000\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			f.changed = true
			f.mu.Unlock()
		}
		got := call("service.running", map[string]any{"name": "brine-app"})
		if py.Str(state.Value(got.Result)) != "True" || got.Comment != "The service brine-app is already running" {
			t.Errorf("%s: service.running: %s %q", step.what, py.Str(state.Value(got.Result)), got.Comment)
		}
		got = call("service.mod_watch", map[string]any{"name": "brine-app", "sfun": "running"})
		if py.Str(state.Value(got.Result)) != "True" || got.Comment != "Service restarted" {
			t.Errorf("%s: mod_watch: %s %q", step.what, py.Str(state.Value(got.Result)), got.Comment)
		}
		calls := f.take()
		reload := slices.Index(calls, "systemctl --system daemon-reload")
		restart := slices.IndexFunc(calls, func(c string) bool { return strings.HasSuffix(c, "systemctl restart brine-app.service") })
		switch {
		case restart < 0:
			t.Errorf("%s: no restart: %q", step.what, calls)
		case step.changed && (reload < 0 || reload > restart):
			t.Errorf("%s: daemon-reload must come before the restart: %q", step.what, calls)
		case !step.changed && reload >= 0:
			t.Errorf("%s: daemon-reload without a change: %q", step.what, calls)
		}
	}
}
