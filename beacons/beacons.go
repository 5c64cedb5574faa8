// Package beacons is Salt's beacon system on the agent: watchers of the
// machine (files, load, disks, memory, services, processes, logs) that
// fire events to the master, salt/beacon/<id>/<beacon>/<sub>, which
// reactions turn into remediation.
//
// A beacon module (one subpackage each, listed one line each by the
// agent) has the same shape: a Module with Salt's name, a constructor
// that checks its configuration — refusing what it does not know, naming
// the key — and a Beacon whose Check returns the events due. The runner
// (runner.go) calls Check every interval, or at once when the beacon says
// something happened (Notifier), and limits each beacon's rate, so that a
// churning file sends one event with a count, never a flood.
package beacons

import (
	"context"
	"fmt"
	"sort"
)

// Event is one event a beacon fires: Tag is appended to
// salt/beacon/<id>/<beacon>/ (Salt's "tag" key of a beacon's return; ""
// for none), Data is the payload (the runner adds id).
type Event struct {
	Tag  string
	Data map[string]any
	// Key tells events apart for rate limiting, when the tag does not
	// (diskusage's mounts, network_info's interfaces): over the rate,
	// events of one key are coalesced into one. "" means the tag.
	Key string
}

// Beacon watches one thing.
type Beacon interface {
	// Check returns the events due now (none is fine). It is called every
	// interval, and at once after a Notifier's signal.
	Check(ctx context.Context) ([]Event, error)
	// Close releases what the beacon holds (watches, open files).
	Close() error
}

// Notifier is a Beacon that knows when something happened (inotify, a
// followed log): Check is called as soon as Ready fires, not at the next
// interval.
type Notifier interface {
	Ready() <-chan struct{}
}

// Config is a beacon's configuration, Salt's list of one-key mappings
// (or legacy mapping) made one mapping, without the options the runner
// reads (interval, disable_during_state_run, rate, coalesce, beacon_module,
// enabled).
type Config map[string]any

// Module declares one beacon module.
type Module struct {
	// Name is Salt's beacon name ("inotify", "load").
	Name string
	// Doc is a one-line description (beacons.list_available).
	Doc string
	// New checks cfg and returns the beacon. An error names the key at
	// fault: "files: /etc/x: mask: unknown event \"modfy\"".
	New func(cfg Config) (Beacon, error)
}

// Registry holds the beacon modules by name.
type Registry struct{ mods map[string]Module }

// NewRegistry returns a registry of mods.
func NewRegistry(mods ...Module) (*Registry, error) {
	r := &Registry{mods: map[string]Module{}}
	for _, m := range mods {
		if _, dup := r.mods[m.Name]; dup {
			return nil, fmt.Errorf("beacon module %q registered twice", m.Name)
		}
		r.mods[m.Name] = m
	}
	return r, nil
}

// Lookup returns the module name.
func (r *Registry) Lookup(name string) (Module, bool) { m, ok := r.mods[name]; return m, ok }

// Names lists the modules, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.mods))
	for n := range r.mods {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LinuxOnly is m on Linux; on another OS (goos, runtime.GOOS but for the
// tests) its configuration is refused, naming the Linux file it reads,
// so that the agent says at start why the beacon will not watch rather
// than failing at every interval. (Salt's psutil-based beacons run
// there; brine reads /proc instead.)
func LinuxOnly(goos, file string, m Module) Module {
	if goos == "linux" {
		return m
	}
	m.New = func(Config) (Beacon, error) {
		return nil, fmt.Errorf("%s beacon is not available on %s: it reads Linux's %s", m.Name, goos, file)
	}
	return m
}
