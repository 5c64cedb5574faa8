// Package disk is Salt's disk execution module's usage: the space of each
// mounted filesystem, in the shape Salt parses from `df -P`, measured with
// statfs(2) on the mounts of /proc/mounts rather than by running df, so
// that it needs no subprocess and cannot hang on df's output format.
package disk

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/brinehq/brine/internal/fsstat"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
)

// Mount is one line of /proc/mounts.
type Mount struct {
	// Device is what is mounted ("/dev/sda1", "tmpfs").
	Device string
	// Dir is where it is mounted.
	Dir string
	// Type is the filesystem type ("ext4").
	Type string
}

// Mounts reads root's /proc/mounts ("" is the real root), in its order;
// on Windows the drives, and on macOS and FreeBSD getfsstat's mounts
// (systemMounts).
func Mounts(root string) ([]Mount, error) {
	if m, ok, err := systemMounts(root); ok {
		return m, err
	}
	b, err := os.ReadFile(root + "/proc/mounts")
	if err != nil {
		return nil, err
	}
	var out []Mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		out = append(out, Mount{Device: unescape(f[0]), Dir: unescape(f[1]), Type: f[2]})
	}
	return out, nil
}

// unescape decodes the octal escapes the kernel writes for spaces, tabs,
// newlines and backslashes in /proc/mounts ("\040").
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Reader measures the filesystems; its zero value reads the real machine.
type Reader struct {
	// Root is prefixed to the files read (/proc/mounts); "" is the real
	// root. The mount points it lists are measured on the machine itself.
	Root string
}

// Module declares the disk functions.
func Module(env *modules.Env) []function.Func { return Reader{}.Module(env) }

// Module declares the disk functions reading through r.
func (r Reader) Module(*modules.Env) []function.Func {
	return []function.Func{
		{
			Name: "disk.usage", ReadOnly: true,
			Doc: "Usage of each mounted filesystem as df -P shows it: {mount: {filesystem, 1K-blocks, used, available, " +
				"capacity, mounted}} (strings, as Salt parses them). args may be \"a\" to include filesystems " +
				"without blocks (proc, sysfs…) and duplicate mounts of a device.",
			Params: []function.Param{{Name: "args", Kind: function.Any}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				all, err := flags(in.Value("args"))
				if err != nil {
					return nil, err
				}
				return r.Usage(all)
			},
		},
	}
}

// flags checks df flags as Salt does, and reports whether "a" is among
// them; the other flags Salt passes to df change its output units and are
// refused rather than ignored.
func flags(v any) (bool, error) {
	if v == nil {
		return false, nil
	}
	var fs []string
	switch t := v.(type) {
	case []any:
		for _, f := range t {
			fs = append(fs, py.Str(f))
		}
	default:
		for _, c := range py.Str(v) {
			fs = append(fs, string(c))
		}
	}
	all := false
	for _, f := range fs {
		switch f {
		case "a":
			all = true
		case "k", "P":
		case "B", "h", "H", "i", "l", "t", "T", "x", "v":
			return false, fmt.Errorf("disk.usage: flag %s is not supported (only a, k and P)", f)
		default:
			return false, fmt.Errorf("disk.usage: Invalid flag passed to disk.usage: %s", f)
		}
	}
	return all, nil
}

// usage is one filesystem's line of df -P.
type usage struct {
	mount   Mount
	dev     uint64
	blocks  uint64 // in 1K blocks, as the others
	used    uint64
	avail   uint64
	percent string
}

// Usage measures every mounted filesystem as df -P does: filesystems
// without blocks are left out, and of the mounts of one device only the
// one nearest the root is kept, unless all.
func (r Reader) Usage(all bool) (map[string]any, error) {
	mounts, err := Mounts(r.Root)
	if err != nil {
		return nil, fmt.Errorf("disk.usage: %w", err)
	}
	var kept []*usage
	for _, m := range mounts {
		u, ok := measure(m)
		if !ok || (!all && u.blocks == 0) {
			continue
		}
		if all {
			kept = append(kept, u)
			continue
		}
		replaced := false
		for i, seen := range kept {
			if seen.dev != u.dev {
				continue
			}
			replaced = true
			// GNU df's choice between two mounts of one device: a real
			// device over a pseudo one, the mount nearer the root, the
			// later of two mounts on one directory.
			if (strings.Contains(u.mount.Device, "/") && !strings.Contains(seen.mount.Device, "/")) ||
				len(seen.mount.Dir) > len(u.mount.Dir) ||
				(seen.mount.Device != u.mount.Device && seen.mount.Dir == u.mount.Dir) {
				kept[i] = u
			}
			break
		}
		if !replaced {
			kept = append(kept, u)
		}
	}
	out := make(map[string]any, len(kept))
	for _, u := range kept {
		out[u.mount.Dir] = map[string]any{
			"filesystem": u.mount.Device,
			"1K-blocks":  strconv.FormatUint(u.blocks, 10),
			"used":       strconv.FormatUint(u.used, 10),
			"available":  strconv.FormatUint(u.avail, 10),
			"capacity":   u.percent,
			"mounted":    u.mount.Dir,
		}
	}
	return out, nil
}

// measure statfs's a mount as df does: sizes in 1K blocks rounded up, the
// capacity the used share of what non-root users can have, rounded up.
// A mount that cannot be measured (gone, not permitted) is skipped, as df
// does.
func measure(m Mount) (*usage, bool) {
	st, err := fsstat.Statfs(m.Dir)
	if err != nil {
		return nil, false
	}
	size := st.Frsize
	if size == 0 {
		size = st.Bsize
	}
	kb := func(n uint64) uint64 { return (n*size + 1023) / 1024 }
	u := &usage{mount: m, dev: st.Dev, blocks: kb(st.Blocks), used: kb(st.Blocks - st.Bfree), avail: kb(st.Bavail)}
	u.percent = "-"
	if total := (st.Blocks - st.Bfree) + st.Bavail; total > 0 {
		used := st.Blocks - st.Bfree
		u.percent = strconv.FormatUint((used*100+total-1)/total, 10) + "%"
	}
	return u, true
}
