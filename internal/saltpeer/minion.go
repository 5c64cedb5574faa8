package saltpeer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// MinionConfig is a salt-minion's configuration file as a test needs it.
type MinionConfig struct {
	ID string
	// Master is the master's host (default 127.0.0.1).
	Master string
	// MasterPort and PublishPort are the master's request and publish
	// ports (a brine master's ret_port and publish_port).
	MasterPort, PublishPort int
	// LogLevel is log_level_logfile (default info: a job's "Executing
	// command" line, a refused publish's serial).
	LogLevel string
	// Extra is YAML appended to the file (grains:, more options).
	Extra string
}

// Minion is one salt-minion's directory: its configuration file and its
// own root_dir, pki_dir, cachedir and sock_dir, so that minions started
// side by side (and salt-call run as one of them) share nothing.
type Minion struct {
	t    testing.TB
	tree string
	ID   string
	// Dir is the configuration directory, salt-minion's and salt-call's -c.
	Dir string
	// LogFile is the minion's log (log_level_logfile), printed when
	// the test fails; salt-call writes to it too.
	LogFile string

	cmd    *exec.Cmd
	out    *os.File
	exited chan struct{}
}

// NewMinion writes c into a directory of the test's: the paths, the
// current user (Salt would switch to user "root" otherwise), short waits
// for a key's acceptance and for re-authentication, and no reverse DNS
// for the fqdns grain (seconds per start on a machine without DNS).
func NewMinion(t testing.TB, tree string, c MinionConfig) *Minion {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if c.Master == "" {
		c.Master = "127.0.0.1"
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	dir := t.TempDir()
	m := &Minion{t: t, tree: tree, ID: c.ID, Dir: dir, LogFile: filepath.Join(dir, "minion.log")}
	conf := fmt.Sprintf(`id: %s
master: %s
master_port: %d
publish_port: %d
user: %s
root_dir: %s
pki_dir: %s
cachedir: %s
sock_dir: %s
pidfile: %s
log_file: %s
log_level: warning
log_level_logfile: %s
acceptance_wait_time: 2
acceptance_wait_time_max: 2
random_reauth_delay: 1
auth_timeout: 10
enable_fqdns_grains: false
ipv6: false
%s`, c.ID, c.Master, c.MasterPort, c.PublishPort, u.Username, dir, filepath.Join(dir, "pki"), filepath.Join(dir, "cache"),
		filepath.Join(dir, "sock"), filepath.Join(dir, "minion.pid"), m.LogFile, c.LogLevel, c.Extra)
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(m.LogFile)
			t.Logf("salt-minion %s (%s) log:\n%s%s", m.ID, dir, b, m.output())
		}
	})
	return m
}

// Start runs salt-minion in a process group of its own (it forks its
// keepalive parent's child and job processes), killed with all of it when
// the test ends.
func (m *Minion) Start() *Minion {
	m.t.Helper()
	out, err := os.Create(filepath.Join(m.Dir, "minion.out"))
	if err != nil {
		m.t.Fatal(err)
	}
	m.out = out
	m.cmd = Command(m.tree, "salt-minion", "-c", m.Dir)
	m.cmd.Stdout, m.cmd.Stderr = out, out
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		m.t.Fatalf("starting salt-minion %s with %s: %v", m.ID, Python, err)
	}
	m.exited = make(chan struct{})
	go func() { _ = m.cmd.Wait(); close(m.exited) }()
	m.t.Cleanup(m.Stop)
	return m
}

// Stop kills the minion's process group and waits for the minion.
func (m *Minion) Stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-m.exited:
	case <-time.After(10 * time.Second):
	}
	m.out.Close()
}

// Exited tells whether the salt-minion process has ended.
func (m *Minion) Exited() bool {
	if m.exited == nil {
		return false
	}
	select {
	case <-m.exited:
		return true
	default:
		return false
	}
}

// output is what the minion printed on its console (Python's tracebacks
// of a failed start are there, not in its log).
func (m *Minion) output() string {
	b, err := os.ReadFile(filepath.Join(m.Dir, "minion.out"))
	if err != nil || len(b) == 0 {
		return ""
	}
	return "console:\n" + string(b)
}

// Log is the minion's log file as it is now.
func (m *Minion) Log() string {
	b, _ := os.ReadFile(m.LogFile)
	return string(b)
}

// PublicKey is the minion's RSA public key file (pki_dir/minion.pub),
// as the minion sends it in its _auth load; the minion writes it as it
// starts, before it signs in.
func (m *Minion) PublicKey(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.Dir, "pki", "minion.pub"))
	if err != nil {
		t.Fatalf("salt-minion %s's key: %v", m.ID, err)
	}
	return string(b)
}

// SaltCallTimeout bounds a salt-call: one waiting for a master that does
// not answer would otherwise retry for minutes.
const SaltCallTimeout = 90 * time.Second

// SaltCall runs salt-call as this minion (its -c, so its key, its id and
// its master) and returns stdout, stderr and the exit status; a salt-call
// that cannot be started, or runs longer than SaltCallTimeout, fails the
// test.
func (m *Minion) SaltCall(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	cmd := Command(m.tree, "salt-call", append([]string{"-c", m.Dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("salt-call %s: %v", strings.Join(args, " "), err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(SaltCallTimeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("salt-call %s as %s still running after %v:\n%s%s", strings.Join(args, " "), m.ID, SaltCallTimeout, out.String(), errb.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	}
	t.Fatalf("salt-call %s: %v", strings.Join(args, " "), err)
	return "", "", -1
}
