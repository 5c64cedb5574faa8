//go:build linux

package service

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/sysvtest"
)

// registry returns m's functions, ready to call.
func registry(t *testing.T, m *Manager) *function.Registry {
	t.Helper()
	reg := function.New()
	if err := reg.RegisterAll(m.Funcs()); err != nil {
		t.Fatal(err)
	}
	return reg
}

// caller calls one function of reg and fails the test on an error.
func caller(t *testing.T, reg *function.Registry) func(name string, args ...any) any {
	return func(name string, args ...any) any {
		t.Helper()
		var kwargs map[string]any
		if n := len(args); n > 0 {
			if kw, ok := args[n-1].(map[string]any); ok {
				kwargs, args = kw, args[:n-1]
			}
		}
		out, err := reg.Call(context.Background(), name, args, kwargs, nil)
		if err != nil {
			t.Fatalf("%s%v: %v", name, args, err)
		}
		return out
	}
}

// TestSysV drives a real init script through Debian's service and
// update-rc.d: start, status, restart, reload, stop, enable, disable.
func TestSysV(t *testing.T) {
	svc := sysvtest.Install(t, "brine-test-svc", sysvtest.Options{})
	name, pidfile, sleep := svc.Name, svc.PIDFile, svc.Sleep
	m := &Manager{Systemd: func() bool { return false }}
	call := caller(t, registry(t, m))
	pid := func() string {
		b, _ := os.ReadFile(pidfile)
		return strings.TrimSpace(string(b))
	}

	for _, step := range []struct {
		fun  string
		args []any
		want any
	}{
		{"service.available", []any{name}, true},
		{"service.missing", []any{name}, false},
		{"service.available", []any{name + "-nope"}, false},
		{"service.status", []any{name}, false},
		{"service.start", []any{name}, true},
		{"service.status", []any{name}, true},
		{"service.status", []any{name, `sleep ` + strings.ReplaceAll(sleep, ".", `\.`)}, true},
		{"service.status", []any{name[:len(name)-4] + "*"}, map[string]any{name: true}},
		{"service.reload", []any{name}, true},
		{"service.stop", []any{name}, true},
		{"service.status", []any{name}, false},
		{"service.status", []any{name, `sleep ` + strings.ReplaceAll(sleep, ".", `\.`)}, false},
		{"service.reload", []any{name}, false}, // the script refuses: not running
		{"service.restart", []any{name}, true},
		{"service.status", []any{name}, true},
		{"service.enabled", []any{name}, false},
		{"service.disabled", []any{name}, true},
		{"service.enable", []any{name}, true},
		{"service.enabled", []any{name}, true},
		{"service.disable", []any{name}, true},
		{"service.enabled", []any{name}, false},
		{"service.disabled", []any{name}, true},
		{"service.enable", []any{name}, true}, // links exist now: update-rc.d enable
		{"service.enabled", []any{name}, true},
		{"service.stop", []any{name}, true},
	} {
		before := pid()
		got := call(step.fun, step.args...)
		if !reflect.DeepEqual(got, step.want) {
			t.Fatalf("%s%v = %#v, want %#v", step.fun, step.args, got, step.want)
		}
		if step.fun == "service.restart" && (pid() == "" || pid() == before) {
			t.Errorf("restart: pid %q before, %q after", before, pid())
		}
	}

	lists := func() (all, on, off []string) {
		return call("service.get_all").([]string), call("service.get_enabled").([]string), call("service.get_disabled").([]string)
	}
	all, on, off := lists()
	if !slices.Contains(all, name) || !slices.Contains(on, name) || slices.Contains(off, name) {
		t.Errorf("enabled %s: get_all has it %v, get_enabled %v, get_disabled %v", name,
			slices.Contains(all, name), slices.Contains(on, name), slices.Contains(off, name))
	}
	call("service.disable", name)
	all, on, off = lists()
	if !slices.Contains(all, name) || slices.Contains(on, name) || !slices.Contains(off, name) {
		t.Errorf("disabled %s: get_all has it %v, get_enabled %v, get_disabled %v", name,
			slices.Contains(all, name), slices.Contains(on, name), slices.Contains(off, name))
	}
	if !slices.IsSorted(all) || slices.Contains(all, "README") {
		t.Errorf("get_all = %v: want sorted, without README", all)
	}
}

// fakeSystemctl answers commands from a table keyed by the command line,
// and records them.
type fakeSystemctl struct {
	mu      sync.Mutex
	answers map[string]Result
	calls   []string
}

func (f *fakeSystemctl) run(_ context.Context, argv ...string) (Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	line := strings.Join(argv, " ")
	f.calls = append(f.calls, line)
	if res, ok := f.answers[line]; ok {
		return res, nil
	}
	if argv[0] == "systemctl" && slices.Contains(argv, "status") {
		return Result{Stdout: "● " + argv[2] + " - a unit\n     Loaded: loaded", Code: 3}, nil
	}
	return Result{}, nil
}

// take returns the calls so far and forgets them.
func (f *fakeSystemctl) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// TestSystemdCommands checks the systemctl command lines of every function
// and how their results are read, against a fake systemctl.
func TestSystemdCommands(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"lib/systemd/system", "etc/systemd/system/multi-user.target.wants", "etc/init.d", "etc/rc3.d", "run/systemd/system"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"lib/systemd/system/nginx.service", "lib/systemd/system/cron.service", "lib/systemd/system/dbus.socket",
		"lib/systemd/system/README", "etc/systemd/system/local.service"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// cron has a unit and a script: the unit wins; legacy has only a script.
	for _, f := range []string{"etc/init.d/cron", "etc/init.d/legacy"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../init.d/legacy", filepath.Join(root, "etc/rc3.d/S01legacy")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", filepath.Join(root, "etc/systemd/system/masked.service")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/lib/systemd/system/getty@.service", filepath.Join(root, "etc/systemd/system/multi-user.target.wants/getty@tty1.service")); err != nil {
		t.Fatal(err)
	}

	f := &fakeSystemctl{answers: map[string]Result{
		"runlevel":                                            {Stdout: "N 3"},
		"systemctl status changed.service -n 0":               {Stdout: "Warning: The unit file changed on disk. Run 'systemctl daemon-reload' to reload units.", Code: 3},
		"systemctl status nosuch.service -n 0":                {Stdout: "Unit nosuch.service could not be found.", Code: 4},
		"systemctl status local.service -n 0":                 {Stdout: "Unit local.service could not be found.", Code: 4},
		"systemd-run --scope systemctl start broken.service":  {Stderr: "Running scope as unit: run-r1.scope\nJob for broken.service failed because the control process exited with error code.", Code: 1},
		"systemd-run --scope systemctl stop broken.service":   {Code: 5},
		"systemctl is-active nginx.service":                   {Stdout: "active"},
		"systemctl is-active cron.service":                    {Stdout: "inactive", Code: 3},
		"systemctl is-enabled nginx.service":                  {Stdout: "enabled"},
		"systemctl is-enabled cron.service":                   {Stdout: "disabled", Code: 1},
		"systemctl is-enabled sshd.service":                   {Stdout: "alias"},
		"systemctl show sshd.service -P Id":                   {Stdout: "ssh.service"},
		"systemctl is-enabled ssh.service":                    {Stdout: "enabled"},
		"systemctl is-enabled getty@tty1.service":             {Stdout: "", Code: 1},
		"systemctl is-enabled legacy.service":                 {Stdout: "", Code: 1},
		"systemd-run --scope systemctl enable masked.service": {Stderr: "Failed to enable unit: Unit file /etc/systemd/system/masked.service is masked.", Code: 1},
		"systemctl --full --no-legend --no-pager list-unit-files": {Stdout: strings.Join([]string{
			"nginx.service   enabled  enabled",
			"cron.service    disabled enabled",
			"dbus.socket     static   -",
			"ssh.service     enabled  enabled",
			"getty@.service  enabled  enabled",
			"backup.timer    disabled enabled",
			"",
		}, "\n")},
	}}
	booted := true
	m := &Manager{Run: f.run, Systemd: func() bool { return booted }, Scope: true, Root: root, Self: "brine-agent"}
	reg := registry(t, m)
	call := caller(t, reg)
	status := func(unit string) string { return "systemctl status " + unit + " -n 0" }

	for _, tc := range []struct {
		fun   string
		args  []any
		want  any
		calls []string
	}{
		{"service.start", []any{"nginx"}, true, []string{status("nginx.service"), "systemd-run --scope systemctl start nginx.service"}},
		{"service.start", []any{"nginx", map[string]any{"no_block": true}}, true, []string{status("nginx.service"), "systemd-run --scope systemctl --no-block start nginx.service"}},
		{"service.start", []any{"dbus.socket"}, true, []string{status("dbus.socket"), "systemd-run --scope systemctl start dbus.socket"}},
		{"service.stop", []any{"nginx"}, true, []string{status("nginx.service"), "systemd-run --scope systemctl stop nginx.service"}},
		{"service.stop", []any{"broken"}, false, []string{status("broken.service"), "systemd-run --scope systemctl stop broken.service"}},
		// The agent's own unit is stopped without waiting, unless asked to.
		{"service.stop", []any{"brine-agent"}, true, []string{status("brine-agent.service"), "systemd-run --scope systemctl --no-block stop brine-agent.service"}},
		{"service.restart", []any{"brine-agent", false}, true, []string{status("brine-agent.service"), "systemd-run --scope systemctl restart brine-agent.service"}},
		{"service.restart", []any{"nginx"}, true, []string{status("nginx.service"), "systemd-run --scope systemctl restart nginx.service"}},
		{"service.reload", []any{"nginx"}, true, []string{status("nginx.service"), "systemd-run --scope systemctl reload nginx.service"}},
		// A unit changed on disk is reloaded first.
		{"service.start", []any{"changed"}, true, []string{status("changed.service"), "systemctl --system daemon-reload", "systemd-run --scope systemctl start changed.service"}},
		// So is one written to /etc/systemd/system that systemd does not know yet.
		{"service.start", []any{"local"}, true, []string{status("local.service"), "systemctl --system daemon-reload", "systemd-run --scope systemctl start local.service"}},
		// unmask=True removes a mask first, and only when there is one.
		{"service.start", []any{"masked", map[string]any{"unmask": true}}, true, []string{status("masked.service"), "systemd-run --scope systemctl unmask masked.service", "systemd-run --scope systemctl start masked.service"}},
		{"service.start", []any{"nginx", map[string]any{"unmask": true, "unmask_runtime": true}}, true, []string{status("nginx.service"), "systemd-run --scope systemctl start nginx.service"}},
		{"service.status", []any{"nginx"}, true, []string{status("nginx.service"), "systemctl is-active nginx.service"}},
		{"service.status", []any{"cron", "cron"}, false, []string{status("cron.service"), "systemctl is-active cron.service"}}, // sig is Salt's, unused with systemd
		{"service.status", []any{"ngi*"}, map[string]any{"nginx": true}, []string{status("nginx.service"), "systemctl is-active nginx.service"}},
		{"service.enable", []any{"nginx"}, true, []string{status("nginx.service"), "systemd-run --scope systemctl enable nginx.service"}},
		{"service.disable", []any{"nginx", map[string]any{"no_block": true}}, true, []string{status("nginx.service"), "systemd-run --scope systemctl --no-block disable nginx.service"}},
		{"service.enable", []any{"legacy"}, true, []string{status("legacy.service"), "systemd-run --scope update-rc.d -f legacy defaults 99"}},
		{"service.disable", []any{"legacy"}, true, []string{status("legacy.service"), "systemd-run --scope update-rc.d -f legacy remove"}},
		{"service.enabled", []any{"nginx"}, true, []string{"systemctl is-enabled nginx.service"}},
		{"service.enabled", []any{"cron"}, false, []string{"systemctl is-enabled cron.service"}},
		{"service.disabled", []any{"cron"}, true, []string{"systemctl is-enabled cron.service"}},
		{"service.enabled", []any{"sshd"}, true, []string{"systemctl is-enabled sshd.service", "systemctl show sshd.service -P Id", "systemctl is-enabled ssh.service"}},
		{"service.enabled", []any{"getty@tty1.service"}, true, []string{"systemctl is-enabled getty@tty1.service"}},
		{"service.enabled", []any{"legacy"}, true, []string{"systemctl is-enabled legacy.service", "runlevel"}},
		{"service.available", []any{"nginx"}, true, []string{status("nginx.service"), status("nginx.service")}},
		{"service.available", []any{"nosuch"}, false, []string{status("nosuch.service"), status("nosuch.service")}},
		{"service.missing", []any{"nosuch"}, true, []string{status("nosuch.service"), status("nosuch.service")}},
		{"service.get_all", nil, []string{"cron", "dbus.socket", "legacy", "local", "masked", "nginx"}, nil},
		{"service.get_enabled", nil, []string{"getty@", "legacy", "nginx", "ssh"}, []string{"systemctl --full --no-legend --no-pager list-unit-files", "runlevel"}},
		{"service.get_disabled", nil, []string{"backup.timer", "cron"}, []string{"systemctl --full --no-legend --no-pager list-unit-files", "runlevel"}},
	} {
		got := call(tc.fun, tc.args...)
		calls := f.take()
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s%v = %#v, want %#v", tc.fun, tc.args, got, tc.want)
		}
		if tc.calls != nil && !reflect.DeepEqual(calls, tc.calls) {
			t.Errorf("%s%v ran\n  %s\nwant\n  %s", tc.fun, tc.args, strings.Join(calls, "\n  "), strings.Join(tc.calls, "\n  "))
		}
	}

	// Failures of start, restart, reload and enable are errors with what
	// systemctl said, as Salt's CommandExecutionError.
	for _, tc := range []struct {
		fun, name, want string
	}{
		{"service.start", "broken", "Job for broken.service failed because the control process exited with error code."},
		{"service.enable", "masked", "Failed to enable unit: Unit file /etc/systemd/system/masked.service is masked."},
		{"service.start", "-x", `invalid service name "-x"`},
		{"service.start", "../x", `invalid service name "../x"`},
		{"service.enable", "nginx", "the root argument is not supported"},
	} {
		kwargs := map[string]any{}
		if tc.want == "the root argument is not supported" {
			kwargs["root"] = "/mnt"
		}
		_, err := reg.Call(context.Background(), tc.fun, []any{tc.name}, kwargs, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s(%s) error %v, want %q", tc.fun, tc.name, err, tc.want)
		}
		f.take()
	}

	// Without systemd-run (or systemd.scope: False), no scope.
	m.Scope = false
	call("service.start", "nginx")
	if got := f.take(); got[len(got)-1] != "systemctl start nginx.service" {
		t.Errorf("without scope: %v", got)
	}

	// The backend is chosen at each call.
	booted = false
	call("service.start", "nginx")
	if got := f.take(); !reflect.DeepEqual(got, []string{"service nginx start"}) {
		t.Errorf("after systemd went away: %v", got)
	}
}

// TestExec runs real commands: output, exit status, and a daemon that
// keeps the output open does not hold the call.
func TestExec(t *testing.T) {
	ctx := context.Background()
	res, err := Exec(ctx, "sh", "-c", "echo out; echo err >&2; exit 3")
	if err != nil || res != (Result{Stdout: "out", Stderr: "err", Code: 3}) {
		t.Errorf("Exec = %+v, %v", res, err)
	}
	if _, err := Exec(ctx, "/nonexistent/brine-test"); err == nil {
		t.Error("Exec of a missing command: no error")
	}
	start := time.Now()
	res, err = Exec(ctx, "sh", "-c", "sleep 30 & echo started")
	if err != nil || res.Stdout != "started" {
		t.Errorf("Exec with a leaked child = %+v, %v", res, err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Exec waited %v for a child holding its output", d)
	}
}
