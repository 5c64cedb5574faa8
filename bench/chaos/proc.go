package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/brinehq/brine/bench/masterproc"
)

// proc is a process the suite runs, kills and starts again: a master (in
// its network namespace), an agent or a peer. Every run appends to the
// same log file, after a line saying which start it is, so that a
// restarted process's history is one file.
type proc struct {
	name    string
	argv    []string
	logPath string

	mu     sync.Mutex
	cur    *masterproc.Master // the current run; nil before the first
	starts int
}

func newProc(name, logPath string, argv ...string) *proc {
	return &proc{name: name, argv: argv, logPath: logPath}
}

// start runs the process unless it runs already; the kernel kills it if
// the suite dies (Pdeathsig survives `ip netns exec`, which execs in place).
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil && !p.cur.Exited() {
		return nil
	}
	banner := fmt.Sprintf("=== chaos: start %d of %s at %s\n", p.starts+1, p.name, time.Now().UTC().Format(time.RFC3339Nano))
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err == nil {
		_, err = f.WriteString(banner)
		f.Close()
	}
	if err != nil {
		return err
	}
	m, err := masterproc.StartCommand(p.name, p.logPath, p.argv...)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.cur = m
	p.starts++
	return nil
}

// run is the current run, nil before the first start.
func (p *proc) run() *masterproc.Master {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// running reports whether the process is alive (a stopped one is).
func (p *proc) running() bool {
	m := p.run()
	return m != nil && !m.Exited()
}

// signal sends sig (SIGSTOP, SIGCONT) to the process if it runs.
func (p *proc) signal(sig os.Signal) {
	if m := p.run(); m != nil {
		m.Signal(sig)
	}
}

// kill ends the process with SIGKILL (a stopped one too) and waits for it.
func (p *proc) kill() {
	if m := p.run(); m != nil {
		m.Kill()
	}
}
