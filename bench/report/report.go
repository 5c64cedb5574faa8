// Package report is the JSON file every benchmark writes under bench/results/:
// the machine it ran on, its results, and the targets checked against
// them, so a reader sees at a glance what was measured and whether it passed.
package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Report is one benchmark run.
type Report struct {
	Benchmark string `json:"benchmark"`
	Date      string `json:"date"`
	GoVersion string `json:"go"`
	CPUs      int    `json:"cpus"`
	// LoadAvg is /proc/loadavg when the run started: the machines are
	// shared, and a loaded one explains a slow figure.
	LoadAvg string `json:"load_avg"`
	// Setup describes what was measured against (servers, versions, flags).
	Setup   map[string]string `json:"setup,omitempty"`
	Results any               `json:"results"`
	Targets []Target          `json:"targets"`
	Pass    bool              `json:"pass"`
	Notes   []string          `json:"notes,omitempty"`

	failed bool
}

// Target is a goal from an issue checked against one result.
type Target struct {
	Result string  `json:"result"`
	Metric string  `json:"metric"`
	Op     string  `json:"op"` // ">=" or "<="
	Value  float64 `json:"value"`
	Got    float64 `json:"got"`
	Pass   bool    `json:"pass"`
}

// New starts the report of benchmark name.
func New(name string) *Report {
	r := &Report{Benchmark: name, Date: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), Setup: map[string]string{}, LoadAvg: LoadAvg()}
	return r
}

// LoadAvg is /proc/loadavg now ("" off Linux), for a benchmark that also
// notes how busy the machine was when it finished.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Check records whether got meets the target op value for result's metric.
func (r *Report) Check(result, metric, op string, value, got float64) {
	pass := false
	switch op {
	case ">=":
		pass = got >= value
	case "<=":
		pass = got <= value
	default:
		panic(fmt.Sprintf("report: unknown operator %q", op))
	}
	r.Targets = append(r.Targets, Target{Result: result, Metric: metric, Op: op, Value: value, Got: got, Pass: pass})
}

// Fail marks the run as not passing for a reason no target expresses (lost
// or duplicated work, an error), and notes why.
func (r *Report) Fail(reason string) {
	r.failed = true
	r.Notes = append(r.Notes, "FAIL: "+reason)
}

// Write settles Pass and writes the report as indented JSON to path.
func (r *Report) Write(path string) error {
	r.Pass = !r.failed
	for _, t := range r.Targets {
		r.Pass = r.Pass && t.Pass
	}
	b, err := r.json()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Print writes the report as Write last wrote it to w, for a benchmark that
// also shows it on its output.
func (r *Report) Print(w io.Writer) error {
	b, err := r.json()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Finish ends a benchmark's run: it writes the report to path, prints it
// to w, and returns an error when a target was missed, so that the
// benchmark's exit status says so.
func (r *Report) Finish(path string, w io.Writer) error {
	if err := r.Write(path); err != nil {
		return err
	}
	if err := r.Print(w); err != nil {
		return err
	}
	if !r.Pass {
		return errors.New("a target was missed")
	}
	return nil
}

func (r *Report) json() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	return append(b, '\n'), err
}

// Percentile returns the p-quantile (0 < p <= 1) of sorted values, nearest
// rank; 0 for no values.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Millis summarises durations as sorted milliseconds, for Percentile.
func Millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	slices.Sort(out)
	return out
}

// StartCPUProfile writes a CPU profile of the rest of the run to path (no
// profile when path is empty); the caller defers the returned stop.
func StartCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// ProbeFsync times n appends of 4 KiB, each followed by fsync, in dir. Every
// durable event waits for an fsync, so a latency target below the disk's
// own fsync latency cannot be met: the figure goes in the report's setup
// beside the results it bounds.
func ProbeFsync(dir string, n int) (string, error) {
	f, err := os.CreateTemp(dir, "fsync-probe-")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	block := make([]byte, 4096)
	ds := make([]time.Duration, 0, n)
	for range n {
		if _, err := f.Write(block); err != nil {
			return "", err
		}
		start := time.Now()
		if err := f.Sync(); err != nil {
			return "", err
		}
		ds = append(ds, time.Since(start))
	}
	ms := Millis(ds)
	return fmt.Sprintf("%d × (append 4 KiB + fsync) in %s: p50 %.3f ms, p99 %.3f ms, max %.3f ms",
		n, dir, Percentile(ms, 0.50), Percentile(ms, 0.99), ms[len(ms)-1]), nil
}

// fsTypes names the filesystems statfs reports by magic number
// (linux/magic.h) that a benchmark's directory is likely on.
var fsTypes = map[int64]string{
	0x01021994: "tmpfs", 0xEF53: "ext2/3/4", 0x58465342: "xfs", 0x9123683E: "btrfs",
	0x794C7630: "overlayfs", 0x2FC12FC1: "zfs", 0xF2F52010: "f2fs", 0x6969: "nfs", 0x9FA0: "proc",
}

// FSType names the filesystem dir is on, for a report's setup: where a
// benchmark's files are decides what their syncs cost.
func FSType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "filesystem unknown: " + err.Error()
	}
	if name, ok := fsTypes[int64(st.Type)]; ok {
		return name
	}
	return fmt.Sprintf("filesystem 0x%x", st.Type)
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// ProcCPU is a process's user+system CPU time from /proc/<pid>/stat
// (pid 0: this process).
func ProcCPU(pid int) time.Duration {
	path := "/proc/self/stat"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/stat", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * clockTick
}

// Round rounds v to digits decimals, halves away from zero.
func Round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	if v < 0 {
		return -float64(int64(-v*p+0.5)) / p
	}
	return float64(int64(v*p+0.5)) / p
}

// Main runs a benchmark's run until it returns or the process is
// interrupted (SIGINT, SIGTERM), with this process's CPU profile written to
// cpuprofile when set, and exits 1 with the error, prefixed by name.
func Main(name, cpuprofile string, run func(ctx context.Context) error) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	Run(name, cpuprofile, func() error {
		defer cancel()
		return run(ctx)
	})
}

// Run is Main for a benchmark that takes no context: an interrupt ends
// the process at once, as it does any command's.
func Run(name, cpuprofile string, run func() error) {
	stop, err := StartCPUProfile(cpuprofile)
	if err == nil {
		err = run()
		stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// Clip is b as a string, cut to its first n bytes (and marked so) when
// longer: what a benchmark quotes of a command's output in an error or a
// result stays readable.
func Clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
