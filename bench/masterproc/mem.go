package masterproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/bench/report"
)

// MemStat is what /proc/<pid>/status says of a process's memory.
type MemStat struct {
	RSSKiB  int64 `json:"rss_kib"`
	AnonKiB int64 `json:"rss_anon_kib"`
	FileKiB int64 `json:"rss_file_kib"`
	Threads int   `json:"threads"`
}

// ReadMem reads process pid's memory from /proc/<pid>/status.
func ReadMem(pid int) (MemStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return MemStat{}, err
	}
	var m MemStat
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			m.RSSKiB = n
		case "RssAnon":
			m.AnonKiB = n
		case "RssFile":
			m.FileKiB = n
		case "Threads":
			m.Threads = int(n)
		}
	}
	if m.RSSKiB == 0 {
		return m, errors.New("no VmRSS in /proc/" + strconv.Itoa(pid) + "/status")
	}
	return m, nil
}

// SampleMem reads process pid's memory n times, every apart, and returns
// the samples and the one with the median RSS: one reading of a Go
// process's RSS moves with its GC and scavenger, and the benchmarks that
// compare a master before and after (bench/agents, bench/saltminions)
// compare medians.
func SampleMem(pid, n int, every time.Duration) ([]MemStat, MemStat, error) {
	var out []MemStat
	for i := range n {
		if i > 0 {
			time.Sleep(every)
		}
		s, err := ReadMem(pid)
		if err != nil {
			return nil, MemStat{}, err
		}
		out = append(out, s)
	}
	sorted := slices.Clone(out)
	slices.SortFunc(sorted, func(a, b MemStat) int { return int(a.RSSKiB - b.RSSKiB) })
	return out, sorted[len(sorted)/2], nil
}

// RSSPoint is one reading of a process's memory on the way through a
// long idle.
type RSSPoint struct {
	Seconds float64 `json:"t"` // since the idle's start
	RSSKiB  int64   `json:"rss_kib"`
	AnonKiB int64   `json:"anon_kib"`
}

// LongIdle keeps still until d after since, reading process pid's memory
// every 5 s on the way (series), then takes the median of 5 samples a
// second apart (SampleMem) and the seconds since since at its end: a
// master's RSS after a fleet's onboarding only tells connection state
// from the burst's leftovers once the Go runtime's periodic GC (forced
// after 2 minutes without one) and its scavenger have run. Its error is
// ctx's, when ctx ended first.
func LongIdle(ctx context.Context, pid int, since time.Time, d time.Duration) (series []RSSPoint, median MemStat, seconds float64, err error) {
	end := since.Add(d)
	for time.Until(end) > 5*time.Second {
		if !Sleep(ctx, 5*time.Second) {
			return series, median, 0, ctx.Err()
		}
		if m, err := ReadMem(pid); err == nil {
			series = append(series, RSSPoint{Seconds: report.Round(time.Since(since).Seconds(), 1), RSSKiB: m.RSSKiB, AnonKiB: m.AnonKiB})
		}
	}
	if !Sleep(ctx, time.Until(end)) {
		return series, median, 0, ctx.Err()
	}
	_, median, _ = SampleMem(pid, 5, time.Second)
	return series, median, report.Round(time.Since(since).Seconds(), 1), nil
}
