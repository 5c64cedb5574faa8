package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// writeBytes is what a process caused to be written to storage so far
// (write_bytes of /proc/<pid>/io; pid 0: this process), 0 when unknown.
func writeBytes(pid int) int64 {
	path := "/proc/self/io"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/io", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "write_bytes:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// errNoPerf is perfRecord's refusal when perf is not installed.
var errNoPerf = errors.New("perf is not installed (apt-get install linux-perf)")

func havePerf() error {
	if _, err := exec.LookPath("perf"); err != nil {
		return errNoPerf
	}
	return nil
}

// perfRecord samples a process's stacks with Linux perf until the returned
// stop is called: the master has no profiling endpoint of its own, and a
// Go binary keeps frame pointers and symbols, so perf's call graphs name
// its functions.
func perfRecord(pid int, path string) (stop func() error, err error) {
	cmd := exec.Command("perf", "record", "-F", "499", "-g", "-p", fmt.Sprint(pid), "-o", path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf record: %w", err)
	}
	return func() error {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("perf record: %w: %s", err, strings.TrimSpace(out.String()))
		}
		return nil
	}, nil
}
