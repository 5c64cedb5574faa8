package main

import (
	"slices"
	"time"

	"github.com/brinehq/brine/bench/masterproc"
)

// memStat is what /proc/<pid>/status says of a process's memory.
type memStat = masterproc.MemStat

func readMem(pid int) (memStat, error) { return masterproc.ReadMem(pid) }

// sampleMem reads a process's memory n times, every apart, and returns the
// samples and the one with the median RSS.
func sampleMem(pid, n int, every time.Duration) ([]memStat, memStat, error) {
	var out []memStat
	for i := range n {
		if i > 0 {
			time.Sleep(every)
		}
		m, err := readMem(pid)
		if err != nil {
			return nil, memStat{}, err
		}
		out = append(out, m)
	}
	sorted := slices.Clone(out)
	slices.SortFunc(sorted, func(a, b memStat) int { return int(a.RSSKiB - b.RSSKiB) })
	return out, sorted[len(sorted)/2], nil
}
