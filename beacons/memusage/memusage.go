// Package memusage is Salt's memusage beacon: it fires while the share of
// the machine's memory in use is at or above a threshold.
//
//	beacons:
//	  memusage:
//	    - percent: 63%
//
// The event is salt/beacon/<id>/memusage/ with Salt's payload, the share
// used in percent rounded to one decimal: {"memusage": 71.3} (and id). It
// fires at every check while the share is at or above the threshold.
//
// The share is psutil's virtual_memory().percent on Linux, which Salt
// reports: (MemTotal - MemAvailable) / MemTotal of /proc/meminfo, with
// MemFree standing for MemAvailable when the latter is above the total
// (containers). On kernels without MemAvailable (before 3.14) brine uses
// MemFree + Cached, psutil's own fallback, without its zoneinfo estimate.
//
// Where brine differs from Salt (salt/beacons/memusage.py): percent is
// checked when the beacon starts — a number or "NN%" from 0 to 100, no
// other option — where Salt fails at each check or never fires.
package memusage

import (
	"context"
	"fmt"
	"runtime"
	"strconv"

	"github.com/brinehq/brine/beacons"
	"github.com/brinehq/brine/beacons/internal/percent"
	"github.com/brinehq/brine/modules/status"
)

// Module is the memusage beacon.
var Module = beacons.LinuxOnly(runtime.GOOS, "/proc/meminfo", beacons.Module{
	Name: "memusage",
	Doc:  "Fires while the share of memory in use is at or above percent.",
	New:  func(cfg beacons.Config) (beacons.Beacon, error) { return newBeacon(cfg, "") },
})

// Beacon is one configured memusage beacon.
type Beacon struct {
	threshold float64
	// root is prefixed to /proc/meminfo (tests).
	root string
}

func newBeacon(cfg beacons.Config, root string) (*Beacon, error) {
	b := &Beacon{root: root}
	for k, v := range cfg {
		if k != "percent" {
			return nil, fmt.Errorf("%s: unknown option (want percent)", k)
		}
		p, err := percent.Threshold(v)
		if err != nil {
			return nil, fmt.Errorf("percent: %w", err)
		}
		b.threshold = p
	}
	if _, ok := cfg["percent"]; !ok {
		return nil, fmt.Errorf("percent: required (the share of memory in use that fires, as 63%%)")
	}
	return b, nil
}

// Usage returns the share of memory in use, in percent to one decimal, as
// psutil's virtual_memory().percent on Linux.
func (b *Beacon) Usage() (float64, error) {
	info := status.Reader{Root: b.root}.Meminfo()
	kb := func(name string) (uint64, bool) {
		m, ok := info[name].(map[string]any)
		if !ok {
			return 0, false
		}
		s, _ := m["value"].(string)
		n, err := strconv.ParseUint(s, 10, 64)
		return n, err == nil
	}
	total, ok := kb("MemTotal")
	if !ok || total == 0 {
		return 0, fmt.Errorf("memusage: no MemTotal in %s/proc/meminfo", b.root)
	}
	free, _ := kb("MemFree")
	avail, ok := kb("MemAvailable")
	if !ok {
		cached, _ := kb("Cached")
		avail = free + cached
	}
	if avail > total {
		avail = free
	}
	return percent.Of(total-avail, total), nil
}

// Check fires while the share in use is at or above the threshold.
func (b *Beacon) Check(context.Context) ([]beacons.Event, error) {
	u, err := b.Usage()
	if err != nil {
		return nil, err
	}
	if u < b.threshold {
		return nil, nil
	}
	return []beacons.Event{{Data: map[string]any{"memusage": u}}}, nil
}

// Close releases nothing: the beacon holds no resources.
func (b *Beacon) Close() error { return nil }
