// Package diskusage is Salt's diskusage beacon: it fires for each mounted
// filesystem whose usage is at or above the threshold configured for its
// mount point.
//
//	beacons:
//	  diskusage:
//	    - /: 63%
//	    - /mnt/nfs: 50%
//	    - '^/srv/.*': 90%
//
// Each key is a regular expression of mount points, as in Salt: it must
// match from the start of the mount point, and a $ is added when it does
// not end with one, so "/" is the root filesystem only and "/srv/.*" every
// mount under /srv. Mount points are those of /proc/mounts, every
// filesystem included (Salt reads psutil.disk_partitions(all=True)).
//
// The event is salt/beacon/<id>/diskusage/, one per mount point at or
// above its threshold at every check, with Salt's payload: the mount point
// and psutil's disk_usage().percent, the share of the space non-root users
// can have that is used, rounded to one decimal:
// {"mount": "/", "diskusage": 71.3} (and id).
//
// Where brine differs from Salt (salt/beacons/diskusage.py), and why:
//   - A mount point several keys match gets one event, against the lowest
//     of their thresholds; Salt sends one per matching key (the same data
//     twice). The keys being a mapping once configured, no order among them
//     could make one override another, as Salt's documentation says
//     regular expressions do.
//   - A mount point mounted over (two lines in /proc/mounts) is measured
//     and reported once, since statfs sees only the top filesystem.
//   - The regular expressions are Go's (RE2): no lookaheads, so Salt's
//     example '^\/(?!home).*$' is refused when the beacon starts, as are a
//     bad expression and a threshold that is not a percentage from 0 to
//     100; Salt fails at each check or never fires.
//   - A check in which no key matches any mount point is an error (the
//     agent logs it), rather than an idle beacon; a key matching nothing
//     while others match is fine (a filesystem not mounted yet).
package diskusage

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/brinehq/brine/internal/fsstat"

	"github.com/brinehq/brine/beacons"
	"github.com/brinehq/brine/beacons/internal/percent"
	"github.com/brinehq/brine/modules/disk"
)

// Module is the diskusage beacon.
var Module = beacons.Module{
	Name: "diskusage",
	Doc:  "Fires for each mount point (regular expressions) whose usage is at or above its threshold.",
	New:  func(cfg beacons.Config) (beacons.Beacon, error) { return newBeacon(cfg) },
}

// watch is one configured mount point expression and its threshold.
type watch struct {
	key       string
	re        *regexp.Regexp
	threshold float64
}

// Beacon is one configured diskusage beacon.
type Beacon struct {
	watches []watch
	// mounts lists the mounted filesystems (disk.Mounts of the real root;
	// tests replace it).
	mounts func() ([]disk.Mount, error)
}

func newBeacon(cfg beacons.Config) (*Beacon, error) {
	if len(cfg) == 0 {
		return nil, errors.New("no mount point: want mount points (or regular expressions of them) with a threshold, as /: 90%")
	}
	b := &Beacon{mounts: func() ([]disk.Mount, error) { return disk.Mounts("") }}
	for k, v := range cfg {
		expr := k
		if !strings.HasSuffix(expr, "$") {
			expr += "$"
		}
		re, err := regexp.Compile("^(?:" + expr + ")")
		if err != nil {
			return nil, fmt.Errorf("%s: not a regular expression of mount points (Go's RE2 syntax, without lookaheads): %w", k, err)
		}
		th, err := percent.Threshold(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		b.watches = append(b.watches, watch{key: k, re: re, threshold: th})
	}
	slices.SortFunc(b.watches, func(a, b watch) int { return strings.Compare(a.key, b.key) })
	return b, nil
}

// Usage is psutil's disk_usage(dir).percent: the used share of the
// blocks non-root users can have (used and available to them).
func Usage(dir string) (float64, error) {
	st, err := fsstat.Statfs(dir)
	if err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	used := st.Blocks - st.Bfree
	return percent.Of(used, used+st.Bavail), nil
}

// Check measures the mount points the keys match and fires for those at
// or above their threshold, in /proc/mounts' order.
func (b *Beacon) Check(context.Context) ([]beacons.Event, error) {
	mounts, err := b.mounts()
	if err != nil {
		return nil, fmt.Errorf("diskusage: %w", err)
	}
	var evs []beacons.Event
	seen := map[string]bool{}
	for _, m := range mounts {
		if seen[m.Dir] {
			continue
		}
		seen[m.Dir] = true
		threshold, matched := 0.0, false
		for _, w := range b.watches {
			if w.re.MatchString(m.Dir) && (!matched || w.threshold < threshold) {
				threshold, matched = w.threshold, true
			}
		}
		if !matched {
			continue
		}
		// A mount that cannot be measured (gone since /proc/mounts was
		// read, not permitted) is passed over, as Salt does.
		u, err := Usage(m.Dir)
		if err != nil || u < threshold {
			continue
		}
		evs = append(evs, beacons.Event{Key: m.Dir, Data: map[string]any{"mount": m.Dir, "diskusage": u}})
	}
	if len(evs) == 0 && !b.anyMatch(seen) {
		keys := make([]string, len(b.watches))
		for i, w := range b.watches {
			keys[i] = w.key
		}
		return nil, fmt.Errorf("diskusage: no mount point matches %s", strings.Join(keys, ", "))
	}
	return evs, nil
}

// anyMatch reports whether a key matches one of the mount points.
func (b *Beacon) anyMatch(dirs map[string]bool) bool {
	for d := range dirs {
		for _, w := range b.watches {
			if w.re.MatchString(d) {
				return true
			}
		}
	}
	return false
}

// Close releases nothing: the beacon holds no resources.
func (b *Beacon) Close() error { return nil }
