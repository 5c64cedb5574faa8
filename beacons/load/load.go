// Package load is Salt's load beacon: it reads the machine's load
// averages (/proc/loadavg) and fires when one of them is outside the
// [min, max] range configured for it.
//
//	beacons:
//	  load:
//	    - averages:
//	        1m: [0.0, 2.0]
//	        5m: [0.0, 1.5]
//	        15m: [0.1, 1.0]
//	    - onchangeonly: False
//	    - emitatstartup: True
//
// The event is salt/beacon/<id>/load/ with Salt's payload, the three
// averages as numbers: {"1m": 0.52, "5m": 0.41, "15m": 0.3} (and id).
//
// Without onchangeonly an event fires at every check while an average is
// below its min or above its max. With onchangeonly one fires only when
// an average crosses a bound outwards since the previous check: from
// below its max to above it, or from above its min to below it (coming
// back into the range fires nothing, as in Salt).
//
// Where brine differs from Salt (salt/beacons/load.py), and why:
//   - emitatstartup (default True, only read with onchangeonly) works as
//     documented: the first check fires if an average is already out of
//     its range. Salt records the first reading as the previous one before
//     comparing, so it never fires at startup whatever emitatstartup says.
//   - The previous reading is the beacon's own; Salt keeps one per agent
//     process, shared by every load beacon configured.
//   - averages may name any of 1m, 5m and 15m (Salt's validate wants all
//     three though its check reads any of them); a range whose min is above
//     its max, an unknown key or a value that is not a number is refused.
package load

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/brinehq/brine/beacons"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules/status"
)

// Module is the load beacon.
var Module = beacons.LinuxOnly(runtime.GOOS, "/proc/loadavg", beacons.Module{
	Name: "load",
	Doc:  "Fires when a load average (1m, 5m, 15m) is outside its [min, max] range.",
	New:  func(cfg beacons.Config) (beacons.Beacon, error) { return newBeacon(cfg, "") },
})

// keys are Salt's names of the averages, in /proc/loadavg's order, and
// status.loadavg's names of the same.
var (
	keys       = []string{"1m", "5m", "15m"}
	statusKeys = []string{"1-min", "5-min", "15-min"}
)

type bounds struct{ min, max float64 }

// Beacon is one configured load beacon.
type Beacon struct {
	// ranges holds the range of each average configured (by index in keys).
	ranges       [3]*bounds
	onChangeOnly bool
	emitAtStart  bool
	// last is the previous reading (onchangeonly), nil before the first.
	last *[3]float64
	// root is prefixed to /proc/loadavg (tests).
	root string
}

func newBeacon(cfg beacons.Config, root string) (*Beacon, error) {
	b := &Beacon{emitAtStart: true, root: root}
	var err error
	for k, v := range cfg {
		switch k {
		case "averages":
			err = b.averages(v)
		case "onchangeonly":
			b.onChangeOnly, err = beacons.Bool(v)
		case "emitatstartup":
			b.emitAtStart, err = beacons.Bool(v)
		default:
			return nil, fmt.Errorf("%s: unknown option (want averages, onchangeonly or emitatstartup)", k)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	if _, ok := cfg["averages"]; !ok {
		return nil, fmt.Errorf("averages: required (a mapping of 1m, 5m or 15m to [min, max])")
	}
	return b, nil
}

func (b *Beacon) averages(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("want a mapping of 1m, 5m or 15m to [min, max], got %v", v)
	}
	if len(m) == 0 {
		return fmt.Errorf("empty: want 1m, 5m or 15m")
	}
	for k, r := range m {
		i := slices.Index(keys, k)
		if i < 0 {
			return fmt.Errorf("%s: unknown average (want 1m, 5m or 15m)", k)
		}
		l, ok := r.([]any)
		if !ok || len(l) != 2 {
			return fmt.Errorf("%s: want a list of two numbers [min, max], got %v", k, r)
		}
		lo, err := pyFloat(l[0])
		if err != nil {
			return fmt.Errorf("%s: min: %w", k, err)
		}
		hi, err := pyFloat(l[1])
		if err != nil {
			return fmt.Errorf("%s: max: %w", k, err)
		}
		if lo > hi {
			return fmt.Errorf("%s: min %v is above max %v", k, lo, hi)
		}
		b.ranges[i] = &bounds{lo, hi}
	}
	return nil
}

// pyFloat reads a bound as Salt's float() does: a number, or a string
// holding one.
func pyFloat(v any) (float64, error) {
	if f, ok := py.Number(v); ok {
		return f, nil
	}
	if s, ok := v.(string); ok {
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("want a number, got %v", v)
}

// read returns the three load averages.
func (b *Beacon) read() ([3]float64, error) {
	var out [3]float64
	m, err := status.Reader{Root: b.root}.Loadavg()
	if err != nil {
		return out, fmt.Errorf("load: %w", err)
	}
	for i, k := range statusKeys {
		out[i] = m[k].(float64)
	}
	return out, nil
}

// Check fires when an average is out of its range (onchangeonly: has just
// gone out of it).
func (b *Beacon) Check(context.Context) ([]beacons.Event, error) {
	cur, err := b.read()
	if err != nil {
		return nil, err
	}
	prev := b.last
	if b.onChangeOnly {
		b.last = &cur
	}
	fire := false
	for i, r := range b.ranges {
		if r == nil {
			continue
		}
		v := cur[i]
		switch {
		case !b.onChangeOnly:
			fire = v < r.min || v > r.max
		case prev == nil:
			// The first reading: out of range counts as a change from the
			// range, if the beacon is to say so at startup.
			fire = b.emitAtStart && (v < r.min || v > r.max)
		default:
			fire = (v > r.max && prev[i] < r.max) || (v < r.min && prev[i] > r.min)
		}
		if fire {
			break
		}
	}
	if !fire {
		return nil, nil
	}
	data := make(map[string]any, len(keys))
	for i, k := range keys {
		data[k] = cur[i]
	}
	return []beacons.Event{{Data: data}}, nil
}

// Close releases nothing: the beacon holds no resources.
func (b *Beacon) Close() error { return nil }
