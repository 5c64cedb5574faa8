package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/beacons"
)

// initScript is an LSB init script of a daemon that sleeps, with a pid
// file, as modules/service's TestSysV installs. Its status is 0 while the
// pid file's process runs (a zombie, which a container's init may leave
// unreaped, does not: its command line is empty); its stop removes the pid
// file, a kill -9 does not.
const initScript = `#!/bin/sh
### BEGIN INIT INFO
# Provides:          %[1]s
# Required-Start:
# Required-Stop:
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: brine's service beacon test
### END INIT INFO
PIDFILE=%[2]s
running() { [ -f "$PIDFILE" ] && [ -n "$(tr -d '\000' <"/proc/$(cat "$PIDFILE")/cmdline" 2>/dev/null)" ]; }
case "$1" in
start)
	running && exit 0
	setsid sleep 3600 </dev/null >/dev/null 2>&1 &
	echo $! >"$PIDFILE"
	;;
stop)
	if running; then
		pid=$(cat "$PIDFILE")
		kill "$pid"
		for i in $(seq 50); do
			[ -n "$(tr -d '\000' <"/proc/$pid/cmdline" 2>/dev/null)" ] || break
			sleep 0.1
		done
	fi
	rm -f "$PIDFILE"
	;;
status)
	running && exit 0
	exit 3
	;;
*)
	exit 2
	;;
esac
`

// install writes a throwaway init script to /etc/init.d and returns its
// service name and pid file.
func install(t *testing.T) (name, pidfile string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the service beacon test writes an init script to /etc/init.d: run the tests as root (CI does)")
	}
	for _, tool := range []string{"service", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (Debian's init-system-helpers, util-linux): %v", tool, err)
		}
	}
	if fi, err := os.Stat("/run/systemd/system"); err == nil && fi.IsDir() {
		t.Fatal("the service beacon test drives a SysV script: this machine runs systemd")
	}
	name = fmt.Sprintf("brine-beacon-svc-%08x", rand.Uint32())
	script := filepath.Join("/etc/init.d", name)
	pidfile = filepath.Join(t.TempDir(), name+".pid")
	if err := os.WriteFile(script, fmt.Appendf(nil, initScript, name, pidfile), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command(script, "stop").Run()
		_ = os.Remove(script)
	})
	return name, pidfile
}

func run(t *testing.T, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
}

func newBeacon(t *testing.T, cfg beacons.Config) *Beacon {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%v): %v", cfg, err)
	}
	return b.(*Beacon)
}

// payload is Salt's event of name.
func payload(name string, st map[string]any) []beacons.Event {
	return []beacons.Event{{Tag: name, Data: map[string]any{"service_name": name, name: st}}}
}

// TestSysV stops, starts and kills a real SysV service and checks the
// events of three beacons: every interval, onchangeonly with
// uncleanshutdown, onchangeonly without emitatstartup.
func TestSysV(t *testing.T) {
	name, pidfile := install(t)
	every := newBeacon(t, beacons.Config{"services": map[string]any{name: nil}})
	change := newBeacon(t, beacons.Config{"services": map[string]any{name: map[string]any{
		"onchangeonly": true, "uncleanshutdown": pidfile}}})
	quiet := newBeacon(t, beacons.Config{"services": map[string]any{name: map[string]any{
		"onchangeonly": true, "emitatstartup": false}}})

	up := map[string]any{"running": true}
	down := map[string]any{"running": false}
	clean := map[string]any{"running": false, "uncleanshutdown": false}
	unclean := map[string]any{"running": false, "uncleanshutdown": true}
	kill9 := func(t *testing.T) {
		b, err := os.ReadFile(pidfile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ { // gone, or a zombie
			if c, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err != nil || len(c) == 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("pid %d still runs after kill -9", pid)
	}
	for _, step := range []struct {
		what                 string
		act                  func(t *testing.T)
		every, change, quiet []beacons.Event
	}{
		{"stopped at start", nil, payload(name, down), payload(name, clean), nil},
		{"still stopped", nil, payload(name, down), nil, nil},
		{"started", func(t *testing.T) { run(t, "service", name, "start") }, payload(name, up), payload(name, up), payload(name, up)},
		{"still running", nil, payload(name, up), nil, nil},
		{"killed -9: the pid file stays", kill9, payload(name, down), payload(name, unclean), payload(name, down)},
		{"its stop cleans up", func(t *testing.T) { run(t, "service", name, "stop") }, payload(name, down), nil, nil},
		{"started again", func(t *testing.T) { run(t, "service", name, "start") }, payload(name, up), payload(name, up), payload(name, up)},
		{"stopped cleanly", func(t *testing.T) { run(t, "service", name, "stop") }, payload(name, down), payload(name, clean), payload(name, down)},
	} {
		if step.act != nil {
			step.act(t)
		}
		for _, b := range []struct {
			name string
			b    *Beacon
			want []beacons.Event
		}{{"every interval", every, step.every}, {"onchangeonly", change, step.change}, {"emitatstartup false", quiet, step.quiet}} {
			got, err := b.b.Check(context.Background())
			if err != nil {
				t.Fatalf("%s: %s: Check: %v", step.what, b.name, err)
			}
			if !reflect.DeepEqual(got, b.want) {
				t.Errorf("%s: %s:\n got %v\nwant %v", step.what, b.name, got, b.want)
			}
		}
	}
}

// TestDelay checks onchangeonly with a delay on the real service, the
// clock the test's: a change fires once it has lasted delay, a flap
// within it nothing.
func TestDelay(t *testing.T) {
	name, _ := install(t)
	b := newBeacon(t, beacons.Config{"services": map[string]any{name: map[string]any{
		"onchangeonly": true, "delay": int64(2)}}})
	clock := time.Unix(1e9, 0)
	b.now = func() time.Time { return clock }
	up := payload(name, map[string]any{"running": true})
	down := payload(name, map[string]any{"running": false})
	for _, step := range []struct {
		at   float64 // seconds
		act  string  // service start or stop first
		want []beacons.Event
	}{
		{0, "", nil}, // stopped: emitatstartup, after the delay
		{1, "", nil},
		{2, "", down},
		{3, "", nil},
		{4, "start", nil},
		{5, "", nil},
		{6, "", up},
		{7, "stop", nil},
		{8, "start", nil}, // back to what was reported
		{9.5, "", nil},
		{10, "", nil},
		{11, "stop", nil},
		{12.5, "", nil},
		{13, "", down},
		{20, "", nil},
	} {
		if step.act != "" {
			run(t, "service", name, step.act)
		}
		clock = time.Unix(1e9, 0).Add(time.Duration(step.at * float64(time.Second)))
		got, err := b.Check(context.Background())
		if err != nil {
			t.Fatalf("t=%v: %v", step.at, err)
		}
		if !reflect.DeepEqual(got, step.want) {
			t.Errorf("t=%v (%s): got %v, want %v", step.at, step.act, got, step.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  beacons.Config
		want string
	}{
		{beacons.Config{}, "services: missing"},
		{beacons.Config{"services": []any{"sshd"}}, "services: want a mapping"},
		{beacons.Config{"services": map[string]any{}}, "services: empty"},
		{beacons.Config{"sshd": nil}, "sshd: unknown option (want services)"},
		{beacons.Config{"services": map[string]any{"ssh*": nil}}, "services: ssh*: not a service name"},
		{beacons.Config{"services": map[string]any{"a/b": nil}}, "services: a/b: not a service name"},
		{beacons.Config{"services": map[string]any{"sshd": true}}, "services: sshd: want a mapping of options"},
		{beacons.Config{"services": map[string]any{"sshd": map[string]any{"onchangeonly": "yes"}}}, "services: sshd: onchangeonly: want true or false"},
		{beacons.Config{"services": map[string]any{"sshd": map[string]any{"onchangeonly": true, "delay": "30s"}}}, "services: sshd: delay: want a number of seconds"},
		{beacons.Config{"services": map[string]any{"sshd": map[string]any{"onchangeonly": true, "delay": -1.0}}}, "delay: want a number of seconds from 0"},
		{beacons.Config{"services": map[string]any{"sshd": map[string]any{"delay": int64(5)}}}, "services: sshd: delay: applies only with onchangeonly: true"},
		{beacons.Config{"services": map[string]any{"sshd": map[string]any{"emitatstartup": false}}}, "emitatstartup: applies only with onchangeonly"},
		{beacons.Config{"services": map[string]any{"sshd": map[string]any{"uncleanshutdown": true}}}, "services: sshd: uncleanshutdown: want the service's pid file"},
		{beacons.Config{"services": map[string]any{"sshd": map[string]any{"oncleanshutdown": true}}}, "services: sshd: oncleanshutdown: unknown option"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
