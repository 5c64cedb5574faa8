package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// master is one run of `brine master` as a separate process, so that its
// CPU is its own and it can be killed outright.
type master struct {
	cmd  *exec.Cmd
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
		return nil, fmt.Errorf("starting the master: %w", err)
	}
	m := &master{cmd: cmd, done: make(chan struct{})}
	go func() {
		m.err = cmd.Wait()
		f.Close()
		close(m.done)
	}()
	return m, nil
}

func (m *master) pid() int { return m.cmd.Process.Pid }

// stop sends SIGTERM and waits for the exit, killing the process after
// timeout.
func (m *master) stop(timeout time.Duration) error {
	select {
	case <-m.done:
		return m.err
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
		return m.err
	case <-time.After(timeout):
		_ = m.cmd.Process.Kill()
		<-m.done
		return fmt.Errorf("the master did not stop within %s of SIGTERM: killed", timeout)
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (m *master) kill() {
	select {
	case <-m.done:
	default:
		_ = m.cmd.Process.Kill()
		<-m.done
	}
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
