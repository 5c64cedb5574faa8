package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/master/rpc"
)

// Master is a benchmark's `brine master`, run as a process of its own on
// the configuration masterproc.Prepare wrote, with an operator's
// connection to it. A master restarted on the same directory (Restart)
// keeps one Master; each run has its own log.
type Master struct {
	Setup *masterproc.Setup
	// Proc is the current run's process.
	Proc *masterproc.Master
	// Key is the master's public key, for dialling it again.
	Key []byte
	// Op is an operator's connection, dialled at the first start; it
	// redials across a restart.
	Op *gateway.Client
	// Logs are the runs' log files, the current one last.
	Logs []string
}

// StartMaster starts the master of s with its output to the file logName
// in s.Dir, waits for its key and dials it as an operator. On an error the
// master is killed and the error ends with the master's log.
func StartMaster(ctx context.Context, s *masterproc.Setup, logName string) (*Master, error) {
	m := &Master{Setup: s}
	if err := m.Restart(logName); err != nil {
		return nil, err
	}
	var err error
	if m.Key, err = masterproc.WaitKey(ctx, s.KeyFile()); err != nil {
		m.Proc.Kill()
		return nil, m.Fail(err)
	}
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	m.Op, err = gateway.Dial(dctx, s.ReqAddr(), m.Key)
	cancel()
	if err != nil {
		m.Proc.Kill()
		return nil, m.Fail(fmt.Errorf("the master does not answer: %w", err))
	}
	return m, nil
}

// Restart starts a new run of the master on the same directory and ports,
// its output to logName in the setup's directory; the previous run must
// have exited.
func (m *Master) Restart(logName string) error {
	path := filepath.Join(m.Setup.Dir, logName)
	p, err := masterproc.Start(m.Setup.Bin, m.Setup.MasterDir, path)
	if err != nil {
		return err
	}
	m.Proc, m.Logs = p, append(m.Logs, path)
	return nil
}

// PID is the current run's process id.
func (m *Master) PID() int { return m.Proc.PID() }

// Fail adds the end of the current run's log to err.
func (m *Master) Fail(err error) error {
	return fmt.Errorf("%w\nmaster log (last lines):\n%s", err, masterproc.Tail(m.Logs[len(m.Logs)-1], 20))
}

// Close kills the master if it still runs and closes the operator's
// connection: the way out on an error.
func (m *Master) Close() {
	m.Proc.Kill()
	if m.Op != nil {
		m.Op.Close()
	}
}

// End stops the master with SIGTERM and adds to rep's notes a stop that
// was not clean and what each run logged as warnings and errors.
func (m *Master) End(rep *report.Report) {
	if _, err := m.Proc.Stop(30 * time.Second); err != nil {
		rep.Notes = append(rep.Notes, "stopping the master at the end: "+err.Error())
	}
	for i, path := range m.Logs {
		w, e, msgs := masterproc.LogSummary(path)
		switch {
		case w+e == 0:
		case len(m.Logs) == 1:
			rep.Notes = append(rep.Notes, fmt.Sprintf("the master logged %d warnings and %d errors: %v", w, e, msgs))
		default:
			rep.Notes = append(rep.Notes, fmt.Sprintf("master run %d logged %d warnings and %d errors: %v", i+1, w, e, msgs))
		}
	}
}

// Watch follows the master's bus from the beginning of its log — nothing
// is missed however late the watch subscribes, and it catches up across a
// restart — calling add for each event whose tag matches pattern, until
// the returned stop is called. stop returns how the watch ended
// (context.Canceled when stop ended it) and may be called again.
func (m *Master) Watch(ctx context.Context, pattern string, add func(*bus.Event) error) (stop func() error) {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Op.Watch(wctx, m.Setup.PubAddr(), pattern, bus.Beginning, add) }()
	return sync.OnceValue(func() error {
		cancel()
		return <-done
	})
}

// Listed waits until cond (when not nil) holds and the master lists n
// agents matched by the glob tgt as connected, so that a job reaches
// them; it asks every `every`, for at most timeout.
func (m *Master) Listed(ctx context.Context, tgt string, n int, timeout, every time.Duration, cond func() bool) error {
	var rep rpc.TargetReply
	err := masterproc.Poll(ctx, timeout, every, func() bool {
		if cond != nil && !cond() {
			return false
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return m.Op.Call(cctx, rpc.ExecTargets, rpc.TargetRequest{Tgt: tgt, TgtType: "glob"}, &rep) == nil && len(rep.Connected) == n
	})
	if err != nil {
		return fmt.Errorf("the master lists %d of %d agents connected %v: %w", len(rep.Connected), n, rep.Connected, err)
	}
	return nil
}

// ReturnedTrue reads a job's ret event (its data) only as far as the
// verdict a test.ping or test.sleep needs: success, and a return of true.
// The watch that reads them competes with the master for the same cores,
// so the rest of the return is not decoded.
func ReturnedTrue(data []byte) (bool, error) {
	var load struct {
		Success bool            `json:"success"`
		Return  json.RawMessage `json:"return"`
	}
	if err := json.Unmarshal(data, &load); err != nil {
		return false, err
	}
	return load.Success && bytes.Equal(bytes.TrimSpace(load.Return), []byte("true")), nil
}

// CLIRun is one run of the brine CLI against the master, and what it cost.
type CLIRun struct {
	Stdout, Stderr bytes.Buffer
	// Start and End bracket the command, from its exec to its exit.
	Start, End time.Time
	// MasterCPU and BenchCPU are the master's and this process's CPU
	// over the run, CLICPU the command's own.
	MasterCPU, BenchCPU, CLICPU time.Duration
	// Exit is the command's exit status.
	Exit int
}

// Wall is the command's wall time.
func (r *CLIRun) Wall() time.Duration { return r.End.Sub(r.Start) }

// Returns reads the output of `brine exec --static --out json --show-jid`:
// the jid line, then one JSON document {id: return}.
func (r *CLIRun) Returns() (jid string, rets map[string]any, err error) {
	out := r.Stdout.Bytes()
	line, rest, ok := bytes.Cut(out, []byte("\n"))
	j, found := strings.CutPrefix(string(line), "jid: ")
	if !ok || !found {
		return "", nil, fmt.Errorf("no jid line in the CLI's output: %q", report.Clip(out, 200))
	}
	if err := json.Unmarshal(rest, &rets); err != nil {
		return j, nil, fmt.Errorf("the CLI's JSON output: %w: %q", err, report.Clip(rest, 200))
	}
	return j, rets, nil
}

// CLI runs `brine <command> -c <master dir> args…`, the way an operator on
// the master's machine would, and times it. A command that ran and failed
// is no error (its Exit and Stderr say why); one that could not be run is.
func (m *Master) CLI(ctx context.Context, command string, args ...string) (*CLIRun, error) {
	r := &CLIRun{}
	cmd := exec.CommandContext(ctx, m.Setup.Bin, append([]string{command, "-c", m.Setup.MasterDir}, args...)...)
	cmd.Stdout, cmd.Stderr = &r.Stdout, &r.Stderr
	m0, s0 := report.ProcCPU(m.PID()), report.ProcCPU(0)
	r.Start = time.Now()
	err := cmd.Run()
	r.End = time.Now()
	r.MasterCPU, r.BenchCPU = report.ProcCPU(m.PID())-m0, report.ProcCPU(0)-s0
	if ps := cmd.ProcessState; ps != nil {
		r.CLICPU = ps.UserTime() + ps.SystemTime()
		r.Exit = ps.ExitCode()
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return r, fmt.Errorf("brine %s: %w", command, err)
	}
	return r, nil
}
