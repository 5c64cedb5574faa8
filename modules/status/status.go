// Package status is Salt's status execution module on Linux: uptime,
// loadavg, meminfo, cpuinfo, cpustats, vmstats, diskusage and version,
// read from /proc (and utmp for the users logged in) in Salt's shapes,
// without the subprocesses (who, df) Salt runs for some of them.
package status

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/internal/fsstat"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/disk"
)

// Reader reads the machine's state; its zero value reads the real machine.
type Reader struct {
	// Root is prefixed to the files read (/proc/uptime, /proc/mounts,
	// /run/utmp…); "" is the real root. The mount points diskusage finds
	// are measured on the machine itself.
	Root string
	// Now returns the current time (default time.Now).
	Now func() time.Time
}

// Module declares the status functions.
func Module(env *modules.Env) []function.Func { return Reader{}.Module(env) }

// Module declares the status functions reading through r.
func (r Reader) Module(*modules.Env) []function.Func {
	return r.onlyOnLinux([]function.Func{
		{
			Name: "status.uptime", ReadOnly: true,
			Doc: "How long the machine has been up: {seconds, since_iso, since_t, days, time (\"H:M\"), users " +
				"(sessions logged in, when utmp is there)}.",
			Run: func(context.Context, *function.Input) (any, error) { return r.Uptime() },
		},
		{
			Name: "status.loadavg", Doc: "The load averages: {1-min, 5-min, 15-min}.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return r.Loadavg() },
		},
		{
			Name: "status.meminfo", Doc: "/proc/meminfo as {field: {value, unit}} (values are strings, as Salt).", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return r.Meminfo(), nil },
		},
		{
			Name: "status.cpuinfo", ReadOnly: true,
			Doc: "/proc/cpuinfo as {field: value} (flags a list); as Salt, a later processor's fields replace an " +
				"earlier one's.",
			Run: func(context.Context, *function.Input) (any, error) { return r.Cpuinfo(), nil },
		},
		{
			Name: "status.cpustats", Doc: "/proc/stat as Salt's cpustats: cpu times, intr, softirq and the counters.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return r.Cpustats(), nil },
		},
		{
			Name: "status.vmstats", Doc: "/proc/vmstat as {counter: number}.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return r.table("/proc/vmstat"), nil },
		},
		{
			Name: "status.version", Doc: "The kernel's version line (/proc/version).", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) {
				b, err := os.ReadFile(r.Root + "/proc/version")
				if err != nil {
					return map[string]any{}, nil
				}
				return strings.TrimSpace(string(b)), nil
			},
		},
		{
			Name: "status.diskusage", VarArgs: true, ReadOnly: true,
			Doc: "Space of filesystems: {mount: {available, total}} in bytes; arguments are mount points " +
				"(starting with /) and filesystem types (globs: ext?), all filesystems without any.",
			Run: func(_ context.Context, in *function.Input) (any, error) {
				sel := make([]string, len(in.Extra))
				for i, a := range in.Extra {
					sel[i] = py.Str(a)
				}
				return r.Diskusage(sel...)
			},
		},
	})
}

// goos is the OS the agent runs on (a variable for the tests).
var goos = runtime.GOOS

// onlyOnLinux makes every function of fs refuse, saying why, on an OS
// without Linux's /proc (a Windows, macOS or FreeBSD agent), where reading
// it would answer empty mappings as if the machine had no memory or CPU.
// A Reader with a Root (the tests' /proc) reads that wherever it runs.
func (r Reader) onlyOnLinux(fs []function.Func) []function.Func {
	if goos == "linux" || r.Root != "" {
		return fs
	}
	for i := range fs {
		name := fs[i].Name
		fs[i].Run = func(context.Context, *function.Input) (any, error) {
			return nil, fmt.Errorf("%s is not available on %s: brine's status module reads Linux's /proc (Salt's win_status and BSD status are not ported)", name, goos)
		}
	}
	return fs
}

func (r Reader) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Uptime returns Salt's status.uptime.
func (r Reader) Uptime() (map[string]any, error) {
	now := r.now()
	b, err := os.ReadFile(r.Root + "/proc/uptime")
	if err != nil {
		return nil, errors.New("status.uptime: File /proc/uptime was not found")
	}
	f := strings.Fields(string(b))
	var up float64
	if len(f) > 0 {
		up, err = strconv.ParseFloat(f[0], 64)
	}
	if len(f) == 0 || err != nil {
		return nil, fmt.Errorf("status.uptime: /proc/uptime: unexpected %q", b)
	}
	seconds := int64(up)
	boot := now.Add(-time.Duration(seconds) * time.Second).UTC()
	out := map[string]any{
		"seconds":   seconds,
		"since_iso": isoformat(boot),
		"since_t":   boot.Unix(),
		"days":      seconds / 86400,
		"time":      fmt.Sprintf("%d:%d", seconds%86400/3600, seconds%3600/60),
	}
	if n, ok := r.users(); ok {
		out["users"] = n
	}
	return out, nil
}

// isoformat writes t as Python's naive datetime.isoformat: microseconds
// only when there are some.
func isoformat(t time.Time) string {
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// utmp records on Linux (glibc, 64-bit and 32-bit alike): 384 bytes, the
// type a 16-bit integer first, the user name at offset 44.
const (
	utmpSize    = 384
	utmpUserOff = 44
	userProcess = 7
)

// users counts the user sessions in utmp, as `who -s` lists them; false
// when there is no utmp to read.
func (r Reader) users() (int, bool) {
	var b []byte
	var err error
	for _, p := range []string{"/run/utmp", "/var/run/utmp"} {
		if b, err = os.ReadFile(r.Root + p); err == nil {
			break
		}
	}
	if err != nil {
		return 0, false
	}
	n := 0
	for off := 0; off+utmpSize <= len(b); off += utmpSize {
		rec := b[off : off+utmpSize]
		if int16(binary.NativeEndian.Uint16(rec)) == userProcess && rec[utmpUserOff] != 0 {
			n++
		}
	}
	return n, true
}

// Loadavg returns Salt's status.loadavg.
func (r Reader) Loadavg() (map[string]any, error) {
	b, err := os.ReadFile(r.Root + "/proc/loadavg")
	if err != nil {
		return nil, fmt.Errorf("status.loadavg is not available: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil, fmt.Errorf("status.loadavg: /proc/loadavg: unexpected %q", b)
	}
	out := map[string]any{}
	for i, k := range []string{"1-min", "5-min", "15-min"} {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil, fmt.Errorf("status.loadavg: /proc/loadavg: %w", err)
		}
		out[k] = v
	}
	return out, nil
}

// lines returns the non-empty lines of a file under the root (none when
// it cannot be read: Salt then returns an empty mapping).
func (r Reader) lines(name string) []string {
	b, err := os.ReadFile(r.Root + name)
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if sc.Text() != "" {
			out = append(out, sc.Text())
		}
	}
	return out
}

// Meminfo returns Salt's status.meminfo.
func (r Reader) Meminfo() map[string]any {
	out := map[string]any{}
	for _, l := range r.lines("/proc/meminfo") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v := map[string]any{"value": f[1]}
		if len(f) > 2 {
			v["unit"] = f[2]
		}
		out[strings.ReplaceAll(f[0], ":", "")] = v
	}
	return out
}

// Cpuinfo returns Salt's status.cpuinfo: one mapping for all processors,
// so the last one's values win.
func (r Reader) Cpuinfo() map[string]any {
	out := map[string]any{}
	for _, l := range r.lines("/proc/cpuinfo") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if k == "flags" {
			out[k] = py.List(strings.Fields(v))
		} else {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// Cpustats returns Salt's status.cpustats.
func (r Reader) Cpustats() map[string]any {
	out := map[string]any{}
	for _, l := range r.lines("/proc/stat") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "cpu":
			if len(f) < 9 {
				continue
			}
			out["cpu"] = map[string]any{"user": parseNumber(f[1]), "nice": parseNumber(f[2]), "system": parseNumber(f[3]),
				"idle": parseNumber(f[4]), "iowait": parseNumber(f[5]), "irq": parseNumber(f[6]), "softirq": parseNumber(f[7]),
				"steal": parseNumber(f[8])}
		case "intr", "softirq":
			counts := make([]any, 0, len(f)-2)
			for _, x := range f[2:] {
				counts = append(counts, parseNumber(x))
			}
			list := "irqs"
			if f[0] == "softirq" {
				list = "softirqs"
			}
			out[f[0]] = map[string]any{"total": parseNumber(f[1]), list: counts}
		default:
			out[f[0]] = parseNumber(f[1])
		}
	}
	return out
}

// table reads "name value" lines as {name: number}.
func (r Reader) table(name string) map[string]any {
	out := map[string]any{}
	for _, l := range r.lines(name) {
		if f := strings.Fields(l); len(f) >= 2 {
			out[f[0]] = parseNumber(f[1])
		}
	}
	return out
}

// parseNumber is Salt's _number, which parses a /proc field's text: an
// integer when the text is digits, else a float when it is one, else the
// text.
func parseNumber(s string) any {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}

// Diskusage returns Salt's status.diskusage of the mount points and
// filesystem types (globs) in sel, of every filesystem when sel is empty.
// A mount point named is an error if it cannot be measured; one selected
// by its type is left out (a mount the agent may not read).
func (r Reader) Diskusage(sel ...string) (map[string]any, error) {
	var paths []string
	var types []*fnmatch.Glob
	for _, s := range sel {
		if strings.HasPrefix(s, "/") {
			paths = append(paths, s)
		} else {
			types = append(types, fnmatch.Compile(s))
		}
	}
	if len(sel) == 0 {
		types = append(types, fnmatch.Compile("*"))
	}
	out := map[string]any{}
	if len(types) > 0 {
		mounts, err := disk.Mounts(r.Root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("status.diskusage: %w", err)
		}
		for _, m := range mounts {
			for _, g := range types {
				if g.Match(m.Type) {
					if u, err := space(m.Dir); err == nil {
						out[m.Dir] = u
					}
					break
				}
			}
		}
	}
	for _, p := range paths {
		u, err := space(p)
		if err != nil {
			return nil, fmt.Errorf("status.diskusage: %w", err)
		}
		out[p] = u
	}
	return out, nil
}

// space is Salt's statvfs measure: bytes available to non-root users and
// in all, in blocks of f_bsize.
func space(dir string) (map[string]any, error) {
	st, err := fsstat.Statfs(dir)
	if err != nil {
		return nil, fmt.Errorf("statvfs %s: %w", dir, err)
	}
	bs := st.Bsize
	return map[string]any{"available": st.Bavail * bs, "total": st.Blocks * bs}, nil
}
