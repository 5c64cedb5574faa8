//go:build windows

package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/brinehq/brine/internal/py"
)

// DefaultShell is cmd.exe, as Salt's Windows minion: %COMSPEC%.
var DefaultShell = comspec()

// defaultPath is where commands are looked up when the environment has no
// PATH.
var defaultPath = systemRoot() + `\system32;` + systemRoot()

// resetsLocale: Salt sets no LC_* variables on Windows, whose programs do
// not read them.
const resetsLocale = false

// systemDirs are where cmd.which looks after the agent's PATH.
var systemDirs = []string{systemRoot() + `\system32`, systemRoot()}

// credential is empty: commands run as the agent's account (runas is
// refused, see credential).
type credential struct{}

// comspec is Windows' command interpreter, as Python's Popen(shell=True)
// finds it.
func comspec() string {
	if s := os.Getenv("COMSPEC"); s != "" {
		return s
	}
	return systemRoot() + `\system32\cmd.exe`
}

func systemRoot() string {
	if s := os.Getenv("SystemRoot"); s != "" {
		return s
	}
	return `C:\Windows`
}

// envKey is an environment variable's name as the environment keeps it:
// Windows names are case-insensitive, and Python's os.environ on Windows
// upper-cases them, so Path and PATH are one variable.
func envKey(k string) string { return strings.ToUpper(k) }

// hasSeparator reports whether a command name is a path, not a name looked
// up in PATH.
func hasSeparator(name string) bool { return strings.ContainsAny(name, `/\:`) }

// pathExts are the extensions of executable files (%PATHEXT%).
func pathExts() []string {
	v := os.Getenv("PATHEXT")
	if v == "" {
		v = ".COM;.EXE;.BAT;.CMD"
	}
	var out []string
	for _, e := range strings.Split(strings.ToLower(v), ";") {
		if e != "" && e[0] == '.' {
			out = append(out, e)
		}
	}
	return out
}

// candidates are the file names a command name may be found as: the name
// if it has an executable extension, then the name with each of PATHEXT,
// as cmd.exe searches.
func candidates(name string) []string {
	exts := pathExts()
	var out []string
	if slices.Contains(exts, strings.ToLower(filepath.Ext(name))) {
		out = append(out, name)
	}
	for _, e := range exts {
		out = append(out, name+e)
	}
	return out
}

// rootDir is where a command runs when its user's home is not readable
// (Python's os.path.abspath(os.sep)).
func rootDir() string {
	if d := os.Getenv("SystemDrive"); d != "" {
		return d + `\`
	}
	return `C:\`
}

// readable reports whether the agent may read dir.
func readable(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// executable reports whether path is a regular file with an executable
// extension: Windows has no execute bit.
func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && slices.Contains(pathExts(), strings.ToLower(filepath.Ext(path)))
}

// shellAvailable reports whether shell can run commands. cmd.exe is always
// there (Salt checks nothing on Windows); PowerShell is looked up, so that
// a system without it says so.
func shellAvailable(shell string) bool {
	if !isPowerShell(shell) {
		return true
	}
	if hasSeparator(shell) {
		return executable(shell)
	}
	_, err := lookPath(shell, os.Getenv("PATH"), "")
	return err == nil
}

// isPowerShell reports whether shell is Windows PowerShell or PowerShell
// Core, by name or path, as Salt decides.
func isPowerShell(shell string) bool {
	s := strings.ToLower(strings.TrimSpace(shell))
	return strings.Contains(s, "powershell") || strings.Contains(s, "pwsh")
}

// sysProcAttr gives the command its own command line when it has one, and
// no console window: the agent is a service.
func (c *command) sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CmdLine: c.cmdline, HideWindow: true,
		CreationFlags: windows.CREATE_NO_WINDOW}
}

// withUmask returns what runs path with c's arguments; Windows has no
// umask (Salt's preexec_fn is refused there).
func (c *command) withUmask(path string) (string, []string, error) {
	if c.umask >= 0 {
		return "", nil, fmt.Errorf("umask is not available on Windows")
	}
	return path, c.argv, nil
}

// processTree is a job object holding the command and every process it
// starts, so that a timeout or the job's end terminates them all, as the
// process group does on Unix.
type processTree struct{ job windows.Handle }

func (t *processTree) attach(cmd *exec.Cmd) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("job object: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("job object: open process %d: %w", cmd.Process.Pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("job object: assign process %d: %w", cmd.Process.Pid, err)
	}
	t.job = job
	return nil
}

// signal terminates every process of the job: Windows has no SIGTERM a
// console-less process could be sent, so both signals terminate.
func (t *processTree) signal(syscall.Signal) {
	if t.job != 0 {
		_ = windows.TerminateJobObject(t.job, 1)
	}
}

func (t *processTree) close() {
	if t.job != 0 {
		windows.CloseHandle(t.job)
		t.job = 0
	}
}

// chownScript does nothing: commands run as the agent's account.
func chownScript(*command, ...string) error { return nil }

// credential refuses runas and group, which brine's Windows agent does not
// do (Salt's needs the user's password and its win_runas), and returns the
// agent's home directory.
func (r runner) credential(o *options, _ *command) (string, error) {
	if o.runas != "" {
		return "", fmt.Errorf("%s: runas is not supported on Windows by brine's agent", o.fun)
	}
	if o.group != "" {
		return "", fmt.Errorf("%s: group is not currently available on Windows", o.fun)
	}
	home, _ := os.UserHomeDir()
	return home, nil
}

// setArgv sets what c runs from o's command as Salt's Windows minion does.
// A shell line runs as `cmd.exe /c "line"` (Python's Popen(shell=True)),
// or with shell=powershell as `powershell -NonInteractive -NoProfile
// -ExecutionPolicy Bypass -Command line`. Without the shell a string is
// the process's command line as it is (Windows programs parse their own),
// and a list is quoted as Python's list2cmdline.
func (c *command) setArgv(o *options) error {
	if o.pythonShell && o.shell == "" {
		return fmt.Errorf("%s: python_shell=True needs a shell", o.fun)
	}
	ps := isPowerShell(o.shell)
	switch cmd := o.cmd.(type) {
	case string:
		c.display = cmd
		switch {
		case ps:
			c.powerShell(o.shell, "-Command", strings.TrimSpace(cmd))
		case o.pythonShell:
			c.viaCmd(cmd)
		default:
			c.argv = []string{firstWord(cmd)}
			c.cmdline = cmd
		}
	case []any:
		words := py.Strs(cmd)
		c.display = py.ReprList(words)
		if len(words) == 0 {
			break
		}
		switch {
		case strings.EqualFold(filepath.Ext(words[0]), ".ps1"):
			// A script cmd.exe would open in an editor: PowerShell runs
			// it, the shell= one if it is PowerShell.
			shell := o.shell
			if !ps {
				shell = "powershell"
			}
			c.powerShell(shell, append([]string{"-File"}, words...)...)
		case ps:
			c.powerShell(o.shell, "-Command", strings.Join(words, " "))
		case o.pythonShell || isBatch(words[0]):
			// CreateProcess runs no batch file itself: cmd.exe does.
			c.viaCmd(list2cmdline(words))
		default:
			c.argv = words
		}
	}
	if len(c.argv) == 0 || c.argv[0] == "" {
		return fmt.Errorf("%s: no command given", o.fun)
	}
	return nil
}

// viaCmd runs line through cmd.exe as Python's Popen(line, shell=True).
func (c *command) viaCmd(line string) {
	c.argv = []string{comspec(), "/c", line}
	c.cmdline = fmt.Sprintf(`%s /c "%s"`, syscall.EscapeArg(comspec()), line)
}

// powerShell runs PowerShell with args after Salt's options.
func (c *command) powerShell(shell string, args ...string) {
	c.argv = append([]string{shell, "-NonInteractive", "-NoProfile", "-ExecutionPolicy", "Bypass"}, args...)
}

// isBatch reports whether path is a batch file.
func isBatch(path string) bool {
	e := strings.ToLower(filepath.Ext(path))
	return e == ".bat" || e == ".cmd"
}

// firstWord is the program a command line starts with, as CreateProcess
// reads it: up to the closing quote when it starts with one, else up to
// the first space or tab.
func firstWord(line string) string {
	line = strings.TrimLeft(line, " \t")
	if rest, ok := strings.CutPrefix(line, `"`); ok {
		w, _, _ := strings.Cut(rest, `"`)
		return w
	}
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		return line[:i]
	}
	return line
}

// list2cmdline joins words into one command line quoted as Python's
// subprocess.list2cmdline (the same rules as syscall.EscapeArg).
func list2cmdline(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = syscall.EscapeArg(w)
	}
	return strings.Join(q, " ")
}
