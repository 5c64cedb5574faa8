package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// master is one run of `brine master` as a separate process, so that its
// memory and CPU are its own and can be read from /proc.
type master struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done
}

// startMaster runs bin as a master on the configuration directory dir,
// its output going to logPath. The process gets SIGKILL if this one dies
// without stopping it (the kernel sees to it, whatever kills us).
func startMaster(bin, dir, logPath string) (*master, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "master", "-c", dir)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	m := &master{cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		m.err = cmd.Wait()
		f.Close()
		close(m.done)
	}()
	return m, nil
}

func (m *master) pid() int { return m.cmd.Process.Pid }

// stop sends SIGTERM and waits for the exit, killing the process after
// timeout; it returns how long the clean stop took.
func (m *master) stop(timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	select {
	case <-m.done:
		return 0, m.err
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
		return time.Since(start), m.err
	case <-time.After(timeout):
		_ = m.cmd.Process.Kill()
		<-m.done
		return time.Since(start), fmt.Errorf("the master did not stop within %s of SIGTERM: killed", timeout)
	}
}

// kill ends the process at once (cleanup on an error path).
func (m *master) kill() {
	select {
	case <-m.done:
	default:
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

// logSummary counts a master log's warnings and errors by message.
func logSummary(path string) (warn, errs int, msgs map[string]int) {
	msgs = map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, msgs
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var lvl string
		switch {
		case strings.Contains(line, "level=WARN"):
			warn++
			lvl = "WARN"
		case strings.Contains(line, "level=ERROR"):
			errs++
			lvl = "ERROR"
		default:
			continue
		}
		msg := line
		if i := strings.Index(line, "msg="); i >= 0 {
			msg = line[i+4:]
			if strings.HasPrefix(msg, `"`) {
				if j := strings.Index(msg[1:], `"`); j >= 0 {
					msg = msg[1 : j+1]
				}
			} else if j := strings.IndexByte(msg, ' '); j >= 0 {
				msg = msg[:j]
			}
		}
		msgs[lvl+" "+msg]++
	}
	return warn, errs, msgs
}

// tail is the end of a file, for an error message.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

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

// raiseNoFile raises this process's open-file limit to at least need (up
// to the hard limit), explicitly, so that the master started after it
// inherits it too (Go gives children the limit it found unless it was set
// with Setrlimit).
func raiseNoFile(need uint64) (syscall.Rlimit, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return lim, err
	}
	if lim.Max < need {
		return lim, fmt.Errorf("RLIMIT_NOFILE hard limit %d is below the %d file descriptors needed (raise it with ulimit -Hn as root, or run fewer -agents)", lim.Max, need)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return lim, err
	}
	return lim, nil
}
