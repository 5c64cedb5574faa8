package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is a process the suite runs, kills and restarts: a master (in its
// network namespace), an agent or a peer. Each start appends to the same
// log file, so a restarted process's history is one file.
type proc struct {
	name    string
	argv    []string
	logPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	stopped bool // SIGSTOPped
	starts  int
}

func newProc(name, logPath string, argv ...string) *proc {
	return &proc{name: name, argv: argv, logPath: logPath}
}

// start runs the process; the kernel kills it if the suite dies
// (Pdeathsig survives `ip netns exec`, which execs in place).
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return nil
	}
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "=== chaos: start %d of %s at %s\n", p.starts+1, p.name, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(done)
	}()
	p.cmd, p.done, p.stopped = cmd, done, false
	p.starts++
	return nil
}

// running reports whether the process is alive (stopped counts).
func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		p.cmd = nil
		return false
	default:
		return true
	}
}

// signal sends sig; SIGKILL and SIGTERM wait for the exit.
func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	if sig == syscall.SIGSTOP {
		p.stopped = true
	}
	if sig == syscall.SIGCONT {
		p.stopped = false
	}
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	if sig != syscall.SIGKILL && sig != syscall.SIGTERM {
		return
	}
	if p.isStopped() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	p.mu.Lock()
	p.cmd, p.stopped = nil, false
	p.mu.Unlock()
}

func (p *proc) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}
