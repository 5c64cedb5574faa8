// Package masterproc runs `brine master` as a process of its own for the
// benchmarks that measure a master with many agents (bench/agents,
// bench/jobs), so that its memory, CPU and disk writes are its own and can
// be read from /proc, and counts what the master and the agents logged. It
// runs `brine agent` the same way for a benchmark that measures one agent's
// own CPU and memory (bench/beacons).
package masterproc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Master is one run of `brine master` (or `brine agent`, StartAgent; or
// any command, StartCommand) as a separate process, so that its memory and CPU are its own and can be read
// from /proc.
type Master struct {
	cmd  *exec.Cmd
	what string // "master" or "agent", for errors
	log  *os.File
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done
}

// Start runs bin as a master on the configuration directory dir,
// its output going to logPath. The process gets SIGKILL if this one dies
// without stopping it (the kernel sees to it, whatever kills us).
func Start(bin, dir, logPath string) (*Master, error) { return start(bin, "master", dir, logPath) }

// StartAgent runs bin as an agent on the configuration directory dir, as
// Start runs a master.
func StartAgent(bin, dir, logPath string) (*Master, error) { return start(bin, "agent", dir, logPath) }

func start(bin, what, dir, logPath string) (*Master, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	return run(what, f, nil, bin, what, "-c", dir)
}

// StartCommand runs argv (a master or agent under `ip netns exec`, a peer
// such as dnsmasq) as what, its output appended to logPath, so that a
// process started again keeps one log.
func StartCommand(what, logPath string, argv ...string) (*Master, error) {
	return StartGroup(what, logPath, false, nil, argv...)
}

// StartGroup runs argv as StartCommand does, with the environment env
// (nil: this process's) and, when group, in a process group of its own
// (its id the process's): a daemon that forks workers (a salt-master) is
// then ended as a whole by signalling the group.
func StartGroup(what, logPath string, group bool, env []string, argv ...string) (*Master, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return run(what, f, func(cmd *exec.Cmd) {
		cmd.Env = env
		cmd.SysProcAttr.Setpgid = group
	}, argv...)
}

// run starts argv with its output to f, which it closes once the process
// has exited; setup (when not nil) adjusts the command before it starts.
func run(what string, f *os.File, setup func(*exec.Cmd), argv ...string) (*Master, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if setup != nil {
		setup(cmd)
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	m := &Master{cmd: cmd, what: what, log: f, done: make(chan struct{})}
	go func() {
		m.err = cmd.Wait()
		f.Close()
		close(m.done)
	}()
	return m, nil
}

// PID is the process's id.
func (m *Master) PID() int { return m.cmd.Process.Pid }

// Done is closed once the process has exited.
func (m *Master) Done() <-chan struct{} { return m.done }

// Exited reports whether the process has exited.
func (m *Master) Exited() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// Signal sends sig (SIGSTOP, SIGCONT…) to a process that has not exited.
func (m *Master) Signal(sig os.Signal) {
	if !m.Exited() {
		_ = m.cmd.Process.Signal(sig)
	}
}

// Stop sends SIGTERM and waits for the exit, killing the process after
// timeout; it returns how long the clean stop took.
func (m *Master) Stop(timeout time.Duration) (time.Duration, error) {
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
		return time.Since(start), fmt.Errorf("the %s did not stop within %s of SIGTERM: killed", m.what, timeout)
	}
}

// Kill ends the process at once (cleanup on an error path).
func (m *Master) Kill() {
	select {
	case <-m.done:
	default:
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

// LogSummary counts a master log's warnings and errors by message.
func LogSummary(path string) (warn, errs int, msgs map[string]int) {
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

// Tail is the end of a file, for an error message.
func Tail(path string, n int) string {
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

// RaiseNoFile raises this process's open-file limit to at least need (up
// to the hard limit), explicitly, so that the master started after it
// inherits it too (Go gives children the limit it found unless it was set
// with Setrlimit).
func RaiseNoFile(need uint64) (syscall.Rlimit, error) {
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

// LogTally counts the agents' log records by level and message.
type LogTally map[string]int

// LogCounter is an slog.Handler counting records (info and above) by
// level, message and kind of error: what a fleet of agents logged.
type LogCounter struct {
	mu     sync.Mutex
	counts LogTally
}

// NewLogCounter is an empty LogCounter.
func NewLogCounter() *LogCounter { return &LogCounter{counts: LogTally{}} }

// Reset forgets the counts.
func (c *LogCounter) Reset() {
	c.mu.Lock()
	c.counts = LogTally{}
	c.mu.Unlock()
}

// Snapshot copies the counts.
func (c *LogCounter) Snapshot() LogTally {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := LogTally{}
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Enabled implements slog.Handler.
func (c *LogCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

// Handle implements slog.Handler.
func (c *LogCounter) Handle(_ context.Context, r slog.Record) error {
	key := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			msg := a.Value.String()
			// Keep the kind of error, not every agent's address in it.
			if i := strings.LastIndex(msg, ": "); i >= 0 {
				msg = msg[i+2:]
			}
			key += ": " + msg
			return false
		}
		return true
	})
	c.mu.Lock()
	c.counts[key]++
	c.mu.Unlock()
	return nil
}

// WithAttrs implements slog.Handler.
func (c *LogCounter) WithAttrs([]slog.Attr) slog.Handler { return c }

// WithGroup implements slog.Handler.
func (c *LogCounter) WithGroup(string) slog.Handler { return c }
