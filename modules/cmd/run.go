package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/brinehq/brine/internal/py"
)

// Limits of a command's run; variables so that tests can shorten them.
var (
	// maxOutput caps what is kept of each of stdout and stderr: a command
	// printing without end must not exhaust the agent's memory, and what
	// is cut is counted in a note rather than failing the command.
	maxOutput = 16 << 20
	// killGrace is how long a command ended with its job has between
	// SIGTERM and SIGKILL to its process group.
	killGrace = 3 * time.Second
	// drainGrace is how long output is still read once a killed command's
	// process group is gone: a process that left the group (a daemon) may
	// hold the output open, and must not keep the job waiting.
	drainGrace = time.Second
)

// command is one command ready to run.
type command struct {
	// argv is the command and its arguments; argv[0] is looked up in the
	// PATH of env when it has no slash.
	argv []string
	// display is the command as Salt's messages show it: the shell line,
	// or the Python repr of the argument list.
	display string
	dir     string
	env     []string
	// stdin is written to the command's standard input (nil: /dev/null).
	stdin *string
	// cred switches user and groups (nil: the agent's); only Unix has it.
	cred *credential
	// cmdline, when set, is the command line the process is created with
	// as it is, not one made from argv: Windows passes a process one
	// string that each program parses itself, and cmd.exe's quoting is not
	// the one Go's argument escaping makes (Python's Popen with a string).
	//lint:ignore U1000 only Windows sets it (cmd_windows.go)
	cmdline string
	// umask is the command's umask (negative: the agent's).
	umask int
	// timeout kills the process group when it expires (0: none).
	timeout time.Duration
	// merge sends stderr to the same pipe as stdout (Salt's
	// stderr=subprocess.STDOUT), so that they interleave as written.
	merge bool
	// bg starts the command and returns at once, its output discarded.
	bg bool
	// cleanup runs once the command's process has exited (a script's
	// temporary copy is removed), also for bg.
	cleanup func()
}

// result is what a command did. stdout and stderr are as read, decoded
// and capped, not yet stripped.
type result struct {
	pid            int
	code           int
	stdout, stderr capture
	timedOut       bool
}

// capture keeps up to maxOutput bytes of a stream and counts the rest.
type capture struct {
	buf     []byte
	dropped int64
}

func (c *capture) readFrom(r io.Reader, limit int) {
	b := make([]byte, 32<<10)
	for {
		n, err := r.Read(b)
		keep := min(n, limit-len(c.buf))
		c.buf = append(c.buf, b[:keep]...)
		c.dropped += int64(n - keep)
		if err != nil {
			return
		}
	}
}

// text is the captured output as a string: invalid UTF-8 replaced (as
// Salt's decoding with errors="replace"), trailing whitespace removed when
// rstrip, and a note when some was not kept.
func (c *capture) text(rstrip bool) string {
	s := strings.ToValidUTF8(string(c.buf), "\uFFFD")
	if rstrip {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	if c.dropped > 0 {
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		s += fmt.Sprintf("[output truncated: %d bytes not kept]", c.dropped)
	}
	return s
}

// run runs c until it exits, its timeout expires or ctx ends. A timeout
// kills the process group and is reported in the result; the end of ctx
// (the job killed or terminated) sends the group SIGTERM, then SIGKILL
// after killGrace, and is returned as an error.
func (c *command) run(ctx context.Context) (*result, error) {
	path, err := lookPath(c.argv[0], pathOf(c.env), c.dir)
	if err != nil {
		c.done()
		return nil, err
	}
	path, args, err := c.withUmask(path)
	if err != nil {
		c.done()
		return nil, err
	}
	mk := func() *exec.Cmd {
		return &exec.Cmd{Path: path, Args: args, Dir: c.dir, Env: c.env, SysProcAttr: c.sysProcAttr()}
	}
	if c.bg {
		cmd, err := startCmd(mk, func(*exec.Cmd) {})
		if err != nil {
			c.done()
			return nil, err
		}
		go func() {
			_ = cmd.Wait()
			c.done()
		}()
		return &result{pid: cmd.Process.Pid}, nil
	}
	p, err := c.start(mk)
	if err != nil {
		c.done()
		return nil, err
	}
	defer c.done()
	return p.wait(ctx, c.timeout)
}

func (c *command) done() {
	if c.cleanup != nil {
		c.cleanup()
		c.cleanup = nil
	}
}

// running is a started command whose output is being read.
type running struct {
	cmd     *exec.Cmd
	res     *result
	exited  chan struct{} // closed once the process is reaped; waitErr set
	waitErr error
	drained chan struct{} // closed once the output readers are done
	readers []*os.File    // the parent's read ends, closed to stop reading
	stdin   *os.File      // the parent's write end of stdin, if any
	tree    processTree   // the command and what it started, ended together
}

// start starts cmd with pipes of its own rather than exec's copying
// goroutines: Wait then returns when the process exits, and reading stops
// when the agent decides, even if a process outside the group keeps the
// pipes open.
func (c *command) start(mk func() *exec.Cmd) (*running, error) {
	p := &running{res: &result{}, exited: make(chan struct{}), drained: make(chan struct{})}
	var childEnds []*os.File
	closeAll := func() {
		for _, f := range append(childEnds, p.readers...) {
			f.Close()
		}
		if p.stdin != nil {
			p.stdin.Close()
		}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	p.readers, childEnds = append(p.readers, outR), append(childEnds, outW)
	errR, errW := outR, outW
	if !c.merge {
		if errR, errW, err = os.Pipe(); err != nil {
			closeAll()
			return nil, fmt.Errorf("error pipe: %w", err)
		}
		p.readers, childEnds = append(p.readers, errR), append(childEnds, errW)
	}
	var inR *os.File
	if c.stdin != nil {
		if inR, p.stdin, err = os.Pipe(); err != nil {
			closeAll()
			return nil, fmt.Errorf("input pipe: %w", err)
		}
		childEnds = append(childEnds, inR)
	}
	cmd, err := startCmd(mk, func(cmd *exec.Cmd) {
		cmd.Stdout, cmd.Stderr = outW, errW
		if inR != nil {
			cmd.Stdin = inR
		}
	})
	if err != nil {
		closeAll()
		return nil, err
	}
	p.cmd = cmd
	if err := p.tree.attach(cmd); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		closeAll()
		return nil, err
	}
	for _, f := range childEnds {
		f.Close()
	}
	p.res.pid = cmd.Process.Pid
	if p.stdin != nil {
		// A command that exits without reading its input makes the
		// write fail; that is not an error of the command.
		go func(w *os.File, s string) {
			_, _ = io.WriteString(w, s)
			w.Close()
		}(p.stdin, *c.stdin)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.res.stdout.readFrom(outR, maxOutput) }()
	if !c.merge {
		wg.Add(1)
		go func() { defer wg.Done(); p.res.stderr.readFrom(errR, maxOutput) }()
	}
	go func() { wg.Wait(); close(p.drained) }()
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// startCmd starts a command made by mk with setIO's input and output.
// Exec fails with ETXTBSY when another goroutine forked while a script
// about to run was still open for writing (the child holds the descriptor
// until its own exec); that passes within moments, so it is retried.
func startCmd(mk func() *exec.Cmd, setIO func(*exec.Cmd)) (*exec.Cmd, error) {
	for i := 1; ; i++ {
		cmd := mk()
		setIO(cmd)
		err := cmd.Start()
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || i == 5 {
			return cmd, err
		}
		time.Sleep(time.Duration(i) * 20 * time.Millisecond)
	}
}

// wait waits for the process to exit and its output to end.
func (p *running) wait(ctx context.Context, timeout time.Duration) (*result, error) {
	defer p.release()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	finished := p.finished()
	select {
	case <-finished:
	case <-expired:
		p.res.timedOut = true
		p.stop(syscall.SIGKILL)
	case <-ctx.Done():
		p.stop(syscall.SIGTERM)
		return nil, context.Cause(ctx)
	}
	return p.res, p.exitCode()
}

// finished is closed once the process exited and its output ended.
func (p *running) finished() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		<-p.exited
		<-p.drained
		close(ch)
	}()
	return ch
}

// stop signals the process group: sig, then SIGKILL after killGrace if it
// is not finished; then it waits for the process and gives the output
// drainGrace to end before closing it.
func (p *running) stop(sig syscall.Signal) {
	p.signal(sig)
	if sig != syscall.SIGKILL {
		t := time.NewTimer(killGrace)
		select {
		case <-p.finished():
		case <-t.C:
		}
		t.Stop()
		p.signal(syscall.SIGKILL)
	}
	<-p.exited
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	select {
	case <-p.drained:
	case <-t.C:
		for _, f := range p.readers {
			f.Close()
		}
		<-p.drained
	}
}

// signal sends sig to the command's process tree; it may be gone already.
func (p *running) signal(sig syscall.Signal) {
	p.tree.signal(sig)
}

// release closes what the parent still holds once the command is over.
func (p *running) release() {
	p.tree.close()
	for _, f := range p.readers {
		f.Close()
	}
	if p.stdin != nil {
		p.stdin.Close()
	}
}

// exitCode sets the result's code as Python's returncode: the exit status,
// or minus the signal that killed the process.
func (p *running) exitCode() error {
	ps := p.cmd.ProcessState
	if ps == nil {
		return p.waitErr
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		p.res.code = -int(ws.Signal())
	} else {
		p.res.code = ps.ExitCode()
	}
	return nil
}

// pathOf returns the PATH of an environment.
func pathOf(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && envKey(k) == "PATH" {
			return v
		}
	}
	return defaultPath
}

// lookPath finds name as exec would in the command's environment: a name
// with a slash is taken as it is (relative to dir), a bare name is looked
// up in path.
func lookPath(name, path, dir string) (string, error) {
	if hasSeparator(name) {
		return name, nil
	}
	if name == "" {
		return "", errors.New("empty command")
	}
	if found := search(name, filepath.SplitList(path), dir); found != "" {
		return found, nil
	}
	return "", fmt.Errorf("[Errno 2] No such file or directory: %s", py.Repr(name))
}

// search returns the first executable file called name in dirs ("" when
// there is none); relative dirs are relative to base.
func search(name string, dirs []string, base string) string {
	for _, d := range dirs {
		if d == "" {
			d = "."
		}
		for _, n := range candidates(name) {
			p := filepath.Join(d, n)
			check := p
			if !filepath.IsAbs(check) && base != "" {
				check = filepath.Join(base, check)
			}
			if executable(check) {
				return p
			}
		}
	}
	return ""
}
