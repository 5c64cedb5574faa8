package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
)

// saltArchive is the Salt release the peers directory beside the
// repository holds (../shared/peers, see its README).
const saltArchive = "salt-3006.6.tar.gz"

// python is Debian's Python 3, which has the packages Salt needs (the
// peers README lists them); another python3 on the PATH may not.
const python = "/usr/bin/python3"

// saltTree finds a Salt 3006.6 tree: src (the -salt-src flag, SALT_SRC by
// default), else /tmp/salt/salt-3006.6, else the archive in
// ../shared/peers unpacked into a temporary directory that cleanup
// removes.
func saltTree(src string) (dir string, cleanup func(), err error) {
	cleanup = func() {}
	var tried []string
	for _, d := range []string{src, "/tmp/salt/salt-3006.6"} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "scripts", "salt-master")); err == nil {
			abs, err := filepath.Abs(d)
			return abs, cleanup, err
		}
		tried = append(tried, d)
	}
	archive := filepath.Join("..", "shared", "peers", saltArchive)
	if _, err := os.Stat(archive); err != nil {
		return "", cleanup, fmt.Errorf("no Salt tree (tried %s): set SALT_SRC (or -salt-src) to an unpacked Salt 3006.6 with its scripts/, or provide %s: %w",
			strings.Join(tried, ", "), archive, err)
	}
	tmp, err := os.MkdirTemp("", "brine-bench-saltside-salt-")
	if err != nil {
		return "", cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	out, err := exec.Command("tar", "xzf", archive, "-C", tmp, "salt-3006.6/salt", "salt-3006.6/shim", "salt-3006.6/scripts").CombinedOutput()
	if err != nil {
		cleanup()
		return "", func() {}, fmt.Errorf("unpack %s: %w: %s", archive, err, out)
	}
	return filepath.Join(tmp, "salt-3006.6"), cleanup, nil
}

// saltEnv is the environment Salt's scripts run with: the tree and its
// shim (looseversion, which Debian 12 lacks) on the Python path.
func saltEnv(src string) []string {
	return append(os.Environ(), "PYTHONPATH="+src+":"+filepath.Join(src, "shim"))
}

// runUser is the user Salt's daemons run as: this process's, so that no
// privilege is needed and the files they write are ours.
func runUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}

// saltMasterConfig is a salt-master's configuration: everything under
// dir, on 127.0.0.1's pubPort and retPort, accepting any minion, serving
// fileRoot.
func saltMasterConfig(dir string, pubPort, retPort int, fileRoot string) string {
	return fmt.Sprintf(`root_dir: %[1]s
pki_dir: %[1]s/pki
cachedir: %[1]s/cache
sock_dir: %[1]s/sock
log_file: %[1]s/master.log
log_level_logfile: info
user: %[2]s
interface: 127.0.0.1
publish_port: %[3]d
ret_port: %[4]d
auto_accept: True
file_roots:
  base: [%[5]s]
`, dir, runUser(), pubPort, retPort, fileRoot)
}

// minionConfig is the salt-minion's configuration for one side: its key
// (pki_dir) shared by both sides, its cache its own (cachedir), its
// master 127.0.0.1 on masterPort (Salt's 4506 role) and pubPort (4505).
func minionConfig(dir, cache, logLevel string, masterPort, pubPort int) string {
	return fmt.Sprintf(`id: %[1]s
root_dir: %[2]s
pki_dir: %[2]s/pki
cachedir: %[3]s
sock_dir: %[3]s/sock
log_file: %[3]s/minion.log
log_level_logfile: %[4]s
user: %[5]s
master: 127.0.0.1
master_port: %[6]d
publish_port: %[7]d
acceptance_wait_time: 1
`, minionID, dir, cache, logLevel, runUser(), masterPort, pubPort)
}

// group is a daemon (salt-master, salt-minion) run in a process group of
// its own, so that it and every process it forks (Salt's workers, the
// minion's job processes) are ended together.
type group struct {
	name    string
	proc    *masterproc.Master
	log     string
	stopped bool
}

// startGroup runs argv as name in a new process group, its output
// appended to logPath. The leader gets SIGKILL should this process die
// without stopping it.
func startGroup(name, logPath string, env []string, argv ...string) (*group, error) {
	p, err := masterproc.StartGroup(name, logPath, true, env, argv...)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &group{name: name, proc: p, log: logPath}, nil
}

// exited reports whether the group's leader has exited.
func (g *group) exited() bool { return g.proc.Exited() }

// stop sends the group SIGTERM, waits up to timeout for the leader, then
// sends SIGKILL to whatever of the group is left (a worker that outlived
// its master) and waits for the group to be empty. The group is looked for
// in /proc before it is signalled again, so that a process group id
// reused after the group ended is never signalled.
//
// A group stopped once is not signalled again: its id may have been
// reused since.
func (g *group) stop(timeout time.Duration) error {
	if g.stopped {
		return nil
	}
	g.stopped = true
	pgid := g.proc.PID()
	var err error
	if !g.exited() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-g.proc.Done():
		case <-time.After(timeout):
			err = fmt.Errorf("%s did not stop within %s of SIGTERM: killed", g.name, timeout)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(groupPIDs(pgid)) > 0 || !g.exited() {
		if time.Now().After(deadline) {
			return errors.Join(err, fmt.Errorf("%s: processes %v of its group still there after SIGKILL", g.name, groupPIDs(pgid)))
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// cpu is the CPU time (user + system) the group's live processes have
// used: a salt-master's is spread over its workers.
func (g *group) cpu() time.Duration {
	var t time.Duration
	for _, pid := range groupPIDs(g.proc.PID()) {
		t += report.ProcCPU(pid)
	}
	return t
}

// groupPIDs lists the processes whose process group is pgid, from /proc.
func groupPIDs(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 > len(s) {
			continue
		}
		// After the command's ")": state, ppid, pgrp.
		if f := strings.Fields(s[i+2:]); len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
