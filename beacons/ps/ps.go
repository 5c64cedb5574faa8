// Package ps is Salt's ps beacon (salt/beacons/ps.py): at each interval
// it fires salt/beacon/<id>/ps/ with {"<name>": "Running", "id": …} for
// each configured process that runs and should be reported running, and
// {"<name>": "Stopped", …} for each that does not run and should be
// reported stopped. As Salt's, it fires at every interval while the
// condition holds (rate-limit it with the runner's options, or react to
// the first event); one event per process.
//
// Configuration, Salt's:
//
//	processes:
//	  sshd: running
//	  telnetd: stopped
//
// A process's name is psutil's, which Salt compares: the kernel's comm
// (/proc/<pid>/comm, at most 15 characters), or, when that is 15
// characters long, the base name of the command line's first word if it
// begins with them (so "gunicorn-worker-main" is found by its full name).
//
// Where brine differs from Salt, and why: a state other than running or
// stopped, an empty name or an unknown option is refused when the beacon
// starts (Salt fires {"<name>": False} at each interval for a process
// that does not run, whatever the state says).
package ps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/brinehq/brine/beacons"
)

// Module is the ps beacon.
var Module = beacons.LinuxOnly(runtime.GOOS, "/proc", beacons.Module{
	Name: "ps",
	Doc:  "Fire an event at each interval for each process running (or stopped) as configured.",
	New:  New,
})

type want struct {
	name    string
	running bool
}

// Beacon is a ps beacon.
type Beacon struct {
	procs []want
	proc  string // /proc
}

// New checks cfg.
func New(cfg beacons.Config) (beacons.Beacon, error) {
	for k := range cfg {
		if k != "processes" {
			return nil, fmt.Errorf("%s: unknown option (want processes)", k)
		}
	}
	procs, ok := cfg["processes"].(map[string]any)
	switch {
	case cfg["processes"] == nil:
		return nil, errors.New("processes: missing: the ps beacon needs processes: {name: running|stopped}")
	case !ok:
		return nil, fmt.Errorf("processes: want a mapping of names to running or stopped, got %v", cfg["processes"])
	case len(procs) == 0:
		return nil, errors.New("processes: empty: the ps beacon needs processes: {name: running|stopped}")
	}
	b := &Beacon{proc: "/proc"}
	for name, v := range procs {
		if name == "" {
			return nil, errors.New("processes: an empty process name")
		}
		switch v {
		case "running", "stopped":
			b.procs = append(b.procs, want{name, v == "running"})
		default:
			return nil, fmt.Errorf("processes: %s: want running or stopped, got %v", name, v)
		}
	}
	sort.Slice(b.procs, func(i, j int) bool { return b.procs[i].name < b.procs[j].name })
	return b, nil
}

// Check lists the processes and returns an event for each configured one
// in its configured state.
func (b *Beacon) Check(context.Context) ([]beacons.Event, error) {
	names, err := Names(b.proc)
	if err != nil {
		return nil, err
	}
	var out []beacons.Event
	for _, p := range b.procs {
		switch {
		case p.running && names[p.name]:
			out = append(out, beacons.Event{Key: p.name, Data: map[string]any{p.name: "Running"}})
		case !p.running && !names[p.name]:
			out = append(out, beacons.Event{Key: p.name, Data: map[string]any{p.name: "Stopped"}})
		}
	}
	return out, nil
}

// Close does nothing: the beacon holds nothing between checks.
func (b *Beacon) Close() error { return nil }

// Names returns the names (psutil's Process.name) of the processes in
// proc (/proc).
func Names(proc string) (map[string]bool, error) {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	names := map[string]bool{}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if n := name(filepath.Join(proc, e.Name())); n != "" {
			names[n] = true
		}
	}
	return names, nil
}

// commLen is the kernel's TASK_COMM_LEN less its NUL: a comm this long
// may be cut.
const commLen = 15

// name is psutil's name of the process at dir: its comm, or the command
// line's first word's base name when comm may be cut and begins it.
func name(dir string) string {
	b, err := os.ReadFile(dir + "/comm")
	if err != nil {
		return "" // gone meanwhile
	}
	comm := strings.TrimSuffix(string(b), "\n")
	if len(comm) < commLen {
		return comm
	}
	cmd, err := os.ReadFile(dir + "/cmdline")
	if err != nil || len(cmd) == 0 {
		return comm
	}
	// psutil splits on NULs, or on spaces when a process rewrote its
	// command line as one string.
	sep := []byte{0}
	if cmd[len(cmd)-1] != 0 {
		sep = []byte{' '}
	}
	first, _, _ := bytes.Cut(cmd, sep)
	if base := filepath.Base(string(first)); strings.HasPrefix(base, comm) {
		return base
	}
	return comm
}
