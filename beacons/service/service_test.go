package service

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/beacons"
	"github.com/brinehq/brine/internal/sysvtest"
)

// install writes a throwaway init script to /etc/init.d and returns its
// service name and pid file.
func install(t *testing.T) (name, pidfile string) {
	t.Helper()
	svc := sysvtest.Install(t, "brine-beacon-svc", sysvtest.Options{})
	return svc.Name, svc.PIDFile
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
