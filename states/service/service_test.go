package service

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/sysvtest"
	"github.com/brinehq/brine/modules"
	svcmod "github.com/brinehq/brine/modules/service"
	"github.com/brinehq/brine/state"
)

// install writes an init script to /etc/init.d, removed with its rc links
// when the test ends, whose start exits with start; it returns the name
// and the pid file.
func install(t *testing.T, start int) (string, string) {
	t.Helper()
	svc := sysvtest.Install(t, "brine-test-state", sysvtest.Options{StartStatus: start})
	return svc.Name, svc.PIDFile
}

// TestStates drives real SysV services through the states and the
// service execution module: start, watch restarts and reloads, stop,
// boot links, in test mode and for real, and the failures.
func TestStates(t *testing.T) {
	env := &modules.Env{ID: "test"}
	// The agent keeps states apart from execution functions: both have a
	// service.enabled.
	funcs, err := modules.Registry(env, svcmod.Module)
	if err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	name, pidfile := install(t, 0)
	broken, _ := install(t, 1)
	pid := func() string {
		b, _ := os.ReadFile(pidfile)
		return strings.TrimSpace(string(b))
	}
	status := func(fun string) bool {
		out, err := funcs.Call(context.Background(), fun, []any{name}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out.(bool)
	}
	changed := map[string]any{name: true}
	none := map[string]any{}

	for _, step := range []struct {
		what    string
		fun     string
		test    bool
		kwargs  map[string]any
		result  string
		comment string
		changes map[string]any
		running string // "yes", "no", or "" for either
		enabled string
		newPid  bool // the daemon was started again
	}{
		{"start, test mode", "service.running", true, nil, "None", "Service %s is set to start", none, "no", "no", false},
		{"start", "service.running", false, nil, "True", "Started service %s", changed, "yes", "no", true},
		{"running", "service.running", false, nil, "True", "The service %s is already running", none, "yes", "", false},
		{"running, test mode", "service.running", true, map[string]any{"enable": true}, "True", "The service %s is already running", none, "yes", "no", false},
		{"enable a running service", "service.running", false, map[string]any{"enable": true}, "True",
			"Service %s has been enabled, and is in the desired state", changed, "yes", "yes", false},
		{"enabled and running", "service.running", false, map[string]any{"enable": true}, "True",
			"The service %s is already running", none, "yes", "yes", false},
		{"watch, test mode", "service.mod_watch", true, map[string]any{"sfun": "running"}, "None", "Service is set to be restarted", none, "yes", "", false},
		{"watch restarts", "service.mod_watch", false, map[string]any{"sfun": "running"}, "True", "Service restarted", changed, "yes", "", true},
		{"watch reloads", "service.mod_watch", false, map[string]any{"sfun": "running", "reload": true}, "True", "Service reloaded", changed, "yes", "", false},
		{"stop, test mode", "service.dead", true, nil, "None", "Service %s is set to be killed", none, "yes", "", false},
		{"stop and disable", "service.dead", false, map[string]any{"enable": false}, "True",
			"Service %s has been disabled, and is dead", changed, "no", "no", false},
		{"dead", "service.dead", false, map[string]any{"enable": false}, "True", "The service %s is already dead", none, "no", "no", false},
		{"dead, test mode", "service.dead", true, nil, "True", "The service %s is already dead", none, "no", "", false},
		{"dead, enable in test mode", "service.dead", true, map[string]any{"enable": true}, "None", "Service %s set to be enabled", none, "no", "no", false},
		{"watch a dead one", "service.mod_watch", false, map[string]any{"sfun": "dead"}, "True", "Service is already stopped", none, "no", "", false},
		{"watch starts a stopped one", "service.mod_watch", false, map[string]any{"sfun": "running"}, "True", "Service started", changed, "yes", "", true},
		{"watch stops", "service.mod_watch", false, map[string]any{"sfun": "dead"}, "True", "Service stopped", changed, "no", "", false},
		{"start with a delay", "service.running", false, map[string]any{"init_delay": 0.1}, "True",
			"Started service %s\nDelayed return for 0.1 seconds", changed, "yes", "no", true},
		{"enabled, test mode", "service.enabled", true, nil, "None", "Service %s set to be enabled", none, "yes", "no", false},
		{"enabled", "service.enabled", false, nil, "True", "Service %s has been enabled, and is in the desired state", changed, "yes", "yes", false},
		{"enabled again", "service.enabled", false, nil, "True", "Service %s is already enabled, and is in the desired state", none, "yes", "yes", false},
		{"disabled, test mode", "service.disabled", true, nil, "None", "Service %s set to be disabled", none, "yes", "yes", false},
		{"disabled", "service.disabled", false, nil, "True", "Service %s has been disabled, and is in the desired state", changed, "yes", "no", false},
		{"disabled again", "service.disabled", false, nil, "True", "Service %s is already disabled, and is in the desired state", none, "yes", "no", false},
		{"stop", "service.dead", false, nil, "True", "Service %s was killed", map[string]any{name: false}, "no", "no", false},
		{"enabled instead of enable", "service.running", false, map[string]any{"enabled": true}, "False",
			`Service %s uses non-existent option "enabled".  Perhaps "enable" option was intended?`, nil, "no", "no", false},
		{"unknown sfun", "service.mod_watch", false, map[string]any{"sfun": "enabled"}, "False", "Unable to trigger watch for service.enabled", nil, "no", "", false},
	} {
		before := pid()
		kwargs := map[string]any{"name": name}
		for k, v := range step.kwargs {
			kwargs[k] = v
		}
		ctx := state.With(context.Background(), &state.Running{Test: step.test})
		out, err := reg.Call(ctx, step.fun, nil, kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %s: %v", step.what, step.fun, err)
		}
		got := out.(state.Result)
		want := step.comment
		if strings.Contains(want, "%s") {
			want = fmt.Sprintf(want, name)
		}
		if py.Str(state.Value(got.Result)) != step.result || got.Comment != want {
			t.Errorf("%s: %s: result %s, comment %q; want %s, %q", step.what, step.fun, py.Str(state.Value(got.Result)), got.Comment, step.result, want)
		}
		if len(got.Changes) != 0 || len(step.changes) != 0 {
			if !reflect.DeepEqual(got.Changes, step.changes) {
				t.Errorf("%s: %s: changes %#v, want %#v", step.what, step.fun, got.Changes, step.changes)
			}
		}
		if step.running != "" && status("service.status") != (step.running == "yes") {
			t.Errorf("%s: running is %v, want %s", step.what, !(step.running == "yes"), step.running)
		}
		if step.enabled != "" && status("service.enabled") != (step.enabled == "yes") {
			t.Errorf("%s: enabled is %v, want %s", step.what, !(step.enabled == "yes"), step.enabled)
		}
		if after := pid(); step.newPid != (after != "" && after != before) {
			t.Errorf("%s: pid %q before, %q after; want a new daemon: %v", step.what, before, after, step.newPid)
		}
	}

	// Services that are not installed, or do not start.
	for _, step := range []struct {
		what, fun, name string
		test            bool
		kwargs          map[string]any
		result, comment string
	}{
		{"not installed", "service.running", name + "-nope", false, nil, "False", "The named service %s is not available"},
		{"not installed, test mode", "service.running", name + "-nope", true, nil, "None",
			"Service %s not present; if created in this state run, it would have been started"},
		{"not installed is dead", "service.dead", name + "-nope", false, nil, "True", "The named service %s is not available"},
		{"not installed, enabled", "service.enabled", name + "-nope", false, nil, "False", "The named service %s is not available"},
		{"not installed, enabled, test mode", "service.enabled", name + "-nope", true, nil, "None",
			"Service %s not present; if created in this state run, it would have been enabled"},
		{"not installed, disabled", "service.disabled", name + "-nope", false, nil, "True", "The named service %s is not available"},
		{"a bad name", "service.running", "../x", false, nil, "False", `invalid service name "%s"`},
		{"start fails", "service.running", broken, false, nil, "False", "Service %s failed to start"},
		{"start fails, enabling", "service.running", broken, false, map[string]any{"enable": true}, "False",
			"Service %s has been enabled, and is dead"},
	} {
		kwargs := map[string]any{"name": step.name}
		for k, v := range step.kwargs {
			kwargs[k] = v
		}
		ctx := state.With(context.Background(), &state.Running{Test: step.test})
		out, err := reg.Call(ctx, step.fun, nil, kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %s: %v", step.what, step.fun, err)
		}
		got := out.(state.Result)
		want := fmt.Sprintf(step.comment, step.name)
		if py.Str(state.Value(got.Result)) != step.result || got.Comment != want {
			t.Errorf("%s: %s(%s): result %s, comment %q; want %s, %q", step.what, step.fun, step.name, py.Str(state.Value(got.Result)), got.Comment, step.result, want)
		}
	}

	if _, err := reg.Call(context.Background(), "service.running", nil, map[string]any{"name": name, "init_delay": "soon"}, nil); err == nil {
		t.Error("init_delay: soon was accepted")
	}
}
