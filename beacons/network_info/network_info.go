// Package network_info is Salt's network_info beacon: it compares the
// counters of network interfaces (/proc/net/dev) with configured values
// and fires, per interface, while one of them matches.
//
//	beacons:
//	  network_info:
//	    - interfaces:
//	        eth0:
//	          type: greater
//	          bytes_sent: 100000
//	          errin: 100
//
// The counters are psutil's net_io_counters names: bytes_sent, bytes_recv,
// packets_sent, packets_recv, errin, errout, dropin and dropout. With type
// equal (the default) an interface fires when one of the counters it names
// equals its value, with type greater when one is above it. The event is
// salt/beacon/<id>/network_info/ (no sub-tag), one per interface firing,
// at every check, with Salt's payload: the interface's name and all eight
// counters as integers,
// {"interface": "eth0", "network_info": {"bytes_sent": 1441135, …}} (and id).
//
// Where brine differs from Salt (salt/beacons/network_info.py), and why:
// the configuration is checked when the beacon starts — interfaces is
// required and not empty, each interface names at least one counter, no
// key but the counters and type, a type of equal or greater (Salt reads
// any other as equal), counter values non-negative integers — where Salt
// accepts an unknown key beside a known one, or no interfaces at all, and
// then never fires. An interface absent from the machine is passed over at
// each check, as in Salt (it may come later), unless none of those
// configured exists: that check is an error the agent logs. Counters are
// the kernel's 64-bit ones as they are; psutil's nowrap correction of
// counters wrapping around (32-bit kernels) is not made.
package network_info

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/brinehq/brine/beacons"
)

// Module is the network_info beacon.
var Module = beacons.LinuxOnly(runtime.GOOS, "/proc/net/dev", beacons.Module{
	Name: "network_info",
	Doc:  "Fires for each interface one of whose counters (bytes_sent, errin…) equals (or is greater than) its value.",
	New:  func(cfg beacons.Config) (beacons.Beacon, error) { return newBeacon(cfg, "") },
})

// Counters are psutil's names of the /proc/net/dev counters the beacon
// compares and reports, in Salt's order.
var Counters = []string{"bytes_sent", "bytes_recv", "packets_sent", "packets_recv", "errin", "errout", "dropin", "dropout"}

// devColumn is the column of /proc/net/dev (after the name) of each of
// Counters: the receive columns first, the transmit ones from the ninth.
var devColumn = map[string]int{"bytes_recv": 0, "packets_recv": 1, "errin": 2, "dropin": 3,
	"bytes_sent": 8, "packets_sent": 9, "errout": 10, "dropout": 11}

// iface is one configured interface.
type iface struct {
	name    string
	greater bool
	values  map[string]uint64
}

// Beacon is one configured network_info beacon.
type Beacon struct {
	ifaces []iface
	// root is prefixed to /proc/net/dev (tests).
	root string
}

func newBeacon(cfg beacons.Config, root string) (*Beacon, error) {
	b := &Beacon{root: root}
	for k := range cfg {
		if k != "interfaces" {
			return nil, fmt.Errorf("%s: unknown option (want interfaces)", k)
		}
	}
	v, ok := cfg["interfaces"]
	if !ok {
		return nil, errors.New("interfaces: required (a mapping of interface names to counters and their values)")
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, fmt.Errorf("interfaces: want a mapping of interface names to counters and their values, got %v", v)
	}
	for name, c := range m {
		it, err := parseIface(name, c)
		if err != nil {
			return nil, fmt.Errorf("interfaces: %s: %w", name, err)
		}
		b.ifaces = append(b.ifaces, it)
	}
	slices.SortFunc(b.ifaces, func(a, b iface) int { return strings.Compare(a.name, b.name) })
	return b, nil
}

func parseIface(name string, v any) (iface, error) {
	it := iface{name: name, values: map[string]uint64{}}
	m, ok := v.(map[string]any)
	if !ok {
		return it, fmt.Errorf("want a mapping of counters (%s) to values, and type, got %v", strings.Join(Counters, ", "), v)
	}
	for k, x := range m {
		if k == "type" {
			switch x {
			case "equal":
			case "greater":
				it.greater = true
			default:
				return it, fmt.Errorf("type: want equal or greater, got %v", x)
			}
			continue
		}
		if !slices.Contains(Counters, k) {
			return it, fmt.Errorf("%s: unknown counter (want type or one of %s)", k, strings.Join(Counters, ", "))
		}
		n, err := count(x)
		if err != nil {
			return it, fmt.Errorf("%s: %w", k, err)
		}
		it.values[k] = n
	}
	if len(it.values) == 0 {
		return it, fmt.Errorf("no counter: want one of %s", strings.Join(Counters, ", "))
	}
	return it, nil
}

// count reads a counter's value as Salt's int() does: an integer, a float
// without a fraction or a string of digits; not a negative one, which no
// counter equals or is under.
func count(v any) (uint64, error) {
	switch v := v.(type) {
	case int:
		if v >= 0 {
			return uint64(v), nil
		}
	case int64:
		if v >= 0 {
			return uint64(v), nil
		}
	case uint64:
		return v, nil
	case float64:
		if v >= 0 && v == math.Trunc(v) && v < math.MaxUint64 {
			return uint64(v), nil
		}
	case string:
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("want a non-negative integer, got %v", v)
}

// Stats reads the counters of each interface from root's /proc/net/dev
// ("" is the real root) as psutil.net_io_counters(pernic=True) does.
func Stats(root string) (map[string]map[string]uint64, error) {
	b, err := os.ReadFile(root + "/proc/net/dev")
	if err != nil {
		return nil, fmt.Errorf("network counters: %w", err)
	}
	lines := strings.Split(string(b), "\n")
	out := map[string]map[string]uint64{}
	for i, l := range lines {
		if i < 2 || strings.TrimSpace(l) == "" {
			continue
		}
		colon := strings.LastIndexByte(l, ':')
		var f []string
		if colon > 0 {
			f = strings.Fields(l[colon+1:])
		}
		if len(f) < 16 {
			return nil, fmt.Errorf("network counters: /proc/net/dev line %d: unexpected %q", i+1, l)
		}
		c := make(map[string]uint64, len(Counters))
		for k, col := range devColumn {
			if c[k], err = strconv.ParseUint(f[col], 10, 64); err != nil {
				return nil, fmt.Errorf("network counters: /proc/net/dev line %d: %w", i+1, err)
			}
		}
		out[strings.TrimSpace(l[:colon])] = c
	}
	return out, nil
}

// Check fires for each configured interface one of whose counters equals
// (type greater: is above) its configured value.
func (b *Beacon) Check(context.Context) ([]beacons.Event, error) {
	stats, err := Stats(b.root)
	if err != nil {
		return nil, err
	}
	var evs []beacons.Event
	found := false
	for _, it := range b.ifaces {
		c, ok := stats[it.name]
		if !ok {
			continue
		}
		found = true
		fire := false
		for k, want := range it.values {
			if (it.greater && c[k] > want) || (!it.greater && c[k] == want) {
				fire = true
				break
			}
		}
		if !fire {
			continue
		}
		// int64, the integers of brine's payloads (a counter reaching
		// 2^63 is not to be seen).
		info := make(map[string]any, len(c))
		for k, n := range c {
			info[k] = int64(n)
		}
		evs = append(evs, beacons.Event{Key: it.name, Data: map[string]any{"interface": it.name, "network_info": info}})
	}
	if !found {
		names := make([]string, len(b.ifaces))
		for i, it := range b.ifaces {
			names[i] = it.name
		}
		return nil, fmt.Errorf("network_info: no interface %s on this machine", strings.Join(names, ", "))
	}
	return evs, nil
}

// Close releases nothing: the beacon holds no resources.
func (b *Beacon) Close() error { return nil }
