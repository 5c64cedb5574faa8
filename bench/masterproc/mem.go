package masterproc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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
