//go:build !linux

package inotify

import (
	"fmt"
	"runtime"

	"github.com/brinehq/brine/beacons"
)

// Module is the inotify beacon, which only Linux has: Salt's needs
// pyinotify, and brine's reads the kernel's inotify descriptor.
var Module = beacons.Module{
	Name: "inotify",
	Doc:  "Fire an event when watched files or directories change (Linux inotify; not available on " + runtime.GOOS + ").",
	New:  New,
}

// New refuses the beacon's configuration, so that the agent says at start
// that it cannot watch what the configuration names rather than never
// firing.
func New(beacons.Config) (beacons.Beacon, error) {
	return nil, fmt.Errorf("inotify beacon is not available on %s: it needs Linux's inotify", runtime.GOOS)
}
