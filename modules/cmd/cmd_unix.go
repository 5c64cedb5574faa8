//go:build !windows

package cmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/brinehq/brine/internal/py"
)

// DefaultShell is the shell commands run with unless shell= says another
// (Salt's default is the minion's $SHELL; an agent's environment is a
// service's, so brine uses the POSIX shell).
const DefaultShell = "/bin/sh"

// defaultPath is where commands are looked up when the environment has no
// PATH (Python's os.defpath).
const defaultPath = "/bin:/usr/bin"

// resetsLocale: Salt sets the C locale's LC_* variables for a command
// unless told not to (reset_system_locale), so that it parses English.
const resetsLocale = true

// systemDirs are where cmd.which looks after the agent's PATH.
var systemDirs = []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin"}

// credential is the user and groups a command switches to.
type credential = syscall.Credential

// envKey is an environment variable's name as the environment keeps it:
// Unix names are case-sensitive.
func envKey(k string) string { return k }

// hasSeparator reports whether a command name is a path, not a name looked
// up in PATH.
func hasSeparator(name string) bool { return strings.Contains(name, "/") }

// candidates are the file names a command name may be found as.
func candidates(name string) []string { return []string{name} }

// rootDir is where a command runs when its user's home is not readable.
func rootDir() string { return "/" }

// readable reports whether the agent may read dir.
func readable(dir string) bool { return unix.Access(dir, unix.R_OK) == nil }

// executable reports whether path is a regular file (symlinks followed)
// the agent may execute.
func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && unix.Access(path, unix.X_OK) == nil
}

// sysProcAttr puts the command in a process group of its own (so that it
// is ended with what it started) as the user of cred.
func (c *command) sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
}

// withUmask returns what runs path with c's arguments and umask.
func (c *command) withUmask(path string) (string, []string, error) {
	if c.umask < 0 {
		return path, c.argv, nil
	}
	// Go cannot set a child's umask between fork and exec; a shell sets it
	// and execs the command in its place, same pid.
	args := append([]string{"/bin/sh", "-c", fmt.Sprintf(`umask %04o && exec "$@"`, c.umask), "sh", path}, c.argv[1:]...)
	return "/bin/sh", args, nil
}

// processTree is a command's process group: its pgid is the command's pid
// (Setpgid).
type processTree struct{ pid int }

func (t *processTree) attach(cmd *exec.Cmd) error {
	t.pid = cmd.Process.Pid
	return nil
}

// signal sends sig to the process group; it may be gone already.
func (t *processTree) signal(sig syscall.Signal) { _ = unix.Kill(-t.pid, sig) }

func (t *processTree) close() {}

// chownScript gives a staged script to the user a command runs as.
func chownScript(c *command, paths ...string) error {
	if c.cred == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return err
		}
	}
	return nil
}

// setArgv sets what c runs from o's command: a shell line or an argument
// list, split shlex-style unless it runs through the shell.
func (c *command) setArgv(o *options) error {
	if o.pythonShell && o.shell == "" {
		return fmt.Errorf("%s: python_shell=True needs a shell", o.fun)
	}
	var err error
	switch cmd := o.cmd.(type) {
	case string:
		if o.pythonShell {
			c.argv, c.display = []string{o.shell, "-c", cmd}, cmd
			break
		}
		if c.argv, err = Split(cmd); err != nil {
			return fmt.Errorf("%s: %w", o.fun, err)
		}
		c.display = py.ReprList(c.argv)
	case []any:
		words := py.Strs(cmd)
		c.display = py.ReprList(words)
		if o.pythonShell && len(words) > 0 {
			// Python's Popen(list, shell=True): the first item is the
			// shell's script, the others its $0, $1…
			words = append([]string{o.shell, "-c"}, words...)
		}
		c.argv = words
	}
	if len(c.argv) == 0 || c.argv[0] == "" {
		return fmt.Errorf("%s: no command given", o.fun)
	}
	return nil
}

// credential looks up runas and group and sets the command's credential;
// it returns the home directory of the user the command runs as.
func (r runner) credential(o *options, c *command) (string, error) {
	if o.runas == "" && o.group == "" {
		// No home ($HOME unset) runs the command in /.
		home, _ := os.UserHomeDir()
		return home, nil
	}
	cred := &syscall.Credential{Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}
	home, _ := os.UserHomeDir()
	if o.runas != "" {
		u, err := user.Lookup(o.runas)
		if err != nil {
			return "", fmt.Errorf("%s: User '%s' is not available", o.fun, o.runas)
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err := errors.Join(err1, err2); err != nil {
			return "", fmt.Errorf("%s: user '%s': %w", o.fun, o.runas, err)
		}
		cred.Uid, cred.Gid, home = uint32(uid), uint32(gid), u.HomeDir
		ids, err := u.GroupIds()
		if err != nil {
			return "", fmt.Errorf("%s: groups of user '%s': %w", o.fun, o.runas, err)
		}
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
		o.env["HOME"], o.env["USER"], o.env["LOGNAME"] = u.HomeDir, u.Username, u.Username
	} else {
		groups, err := os.Getgroups()
		if err != nil {
			return "", fmt.Errorf("%s: the agent's groups: %w", o.fun, err)
		}
		for _, g := range groups {
			cred.Groups = append(cred.Groups, uint32(g))
		}
	}
	if o.group != "" {
		g, err := user.LookupGroup(o.group)
		if err != nil {
			return "", fmt.Errorf("%s: Group '%s' is not available", o.fun, o.group)
		}
		gid, err := strconv.ParseUint(g.Gid, 10, 32)
		if err != nil {
			return "", fmt.Errorf("%s: group '%s': %w", o.fun, o.group, err)
		}
		cred.Gid = uint32(gid)
	}
	if cred.Uid == uint32(os.Geteuid()) && cred.Gid == uint32(os.Getegid()) && o.group == "" {
		// The agent's own user: nothing to switch, no privilege needed.
		return home, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%s: runas/group need the agent to run as root (it runs as uid %d)", o.fun, os.Geteuid())
	}
	c.cred = cred
	return home, nil
}

// shellAvailable reports whether shell can run commands: Salt checks the
// path is an executable file.
func shellAvailable(shell string) bool { return executable(shell) }
