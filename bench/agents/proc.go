package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// memStat is what /proc/<pid>/status says of a process's memory.
type memStat struct {
	RSSKiB  int64 `json:"rss_kib"`
	AnonKiB int64 `json:"rss_anon_kib"`
	FileKiB int64 `json:"rss_file_kib"`
	Threads int   `json:"threads"`
}

func readMem(pid int) (memStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memStat{}, err
	}
	var m memStat
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
