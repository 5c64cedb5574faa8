package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// unitTypes are the unit suffixes Salt knows; a name without one is a
// service.
var unitTypes = []string{"service", "socket", "device", "mount", "automount", "swap", "target", "path", "timer"}

// unitDirs are where unit files are installed, the local one last.
var unitDirs = []string{"/lib/systemd/system", "/usr/lib/systemd/system", "/etc/systemd/system"}

// unitName is name as a unit: "nginx" is "nginx.service".
func unitName(name string) string {
	for _, t := range unitTypes {
		if strings.HasSuffix(name, "."+t) {
			return name
		}
	}
	return name + ".service"
}

// serviceName is how Salt lists a unit: a service without its suffix,
// any other unit whole; "" for a file that is no unit.
func serviceName(file string) string {
	i := strings.LastIndex(file, ".")
	if i < 0 {
		return ""
	}
	base, typ := file[:i], file[i+1:]
	switch {
	case !slices.Contains(unitTypes, typ):
		return ""
	case typ == "service":
		return base
	}
	return file
}

// systemd is the backend of machines booted with systemd.
type systemd struct{ m *Manager }

// cmd builds a systemctl command line; scope marks the commands Salt runs
// under systemd-run --scope.
func (s systemd) cmd(scope, noBlock bool, args ...string) []string {
	var argv []string
	if scope && s.m.Scope {
		argv = append(argv, "systemd-run", "--scope")
	}
	argv = append(argv, "systemctl")
	if noBlock {
		argv = append(argv, "--no-block")
	}
	return append(argv, args...)
}

// stripScope drops systemd-run's "Running scope as unit: run-….scope" from
// an error message, as Salt's _strip_scope.
func stripScope(msg string) string {
	var keep []string
	for line := range strings.SplitSeq(msg, "\n") {
		if !strings.HasSuffix(line, ".scope") {
			keep = append(keep, line)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// saltError is a message Salt's module has (a CommandExecutionError),
// kept word for word for whoever matches Salt's output.
type saltError string

func (e saltError) Error() string { return string(e) }

// failed is Salt's CommandExecutionError of a failed systemctl command:
// what it printed on stderr.
func failed(argv []string, res Result) error {
	if msg := stripScope(res.Stderr); msg != "" {
		return errors.New(msg)
	}
	return fmt.Errorf("%s failed with exit status %d", strings.Join(argv, " "), res.Code)
}

// status runs systemctl status, which Salt reads for availability and for
// unit files changed on disk.
func (s systemd) status(ctx context.Context, name string) (Result, error) {
	return s.m.run(ctx, s.cmd(false, false, "status", unitName(name), "-n", "0")...)
}

// availableIn is Salt's reading of systemctl status (systemd 231 and
// later): exit status 4 means no such unit.
func availableIn(res Result) bool { return res.Code >= 0 && res.Code < 4 }

// checkChanges reloads systemd's configuration when name's unit file
// changed on disk, or was written to /etc/systemd/system and systemd does
// not know it yet, as Salt does before acting on a unit: so that a state
// that writes a unit can start it.
func (s systemd) checkChanges(ctx context.Context, name string) error {
	st, err := s.status(ctx, name)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(s.m.path(filepath.Join("/etc/systemd/system", unitName(name))))
	untracked := statErr == nil && !availableIn(st)
	changed := strings.Contains(strings.ToLower(st.Stdout+st.Stderr), "'systemctl daemon-reload'")
	if !untracked && !changed {
		return nil
	}
	res, err := s.m.run(ctx, s.cmd(false, false, "--system", "daemon-reload")...)
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return saltError("Problem performing systemctl daemon-reload: " + strings.TrimSpace(res.Stdout+"\n"+res.Stderr))
	}
	return nil
}

// unmask removes the masks o asks to remove, as Salt's _check_unmask.
func (s systemd) unmask(ctx context.Context, name string, o opts) error {
	for _, runtime := range []bool{false, true} {
		if (!runtime && !o.unmask) || (runtime && !o.unmaskRuntime) {
			continue
		}
		dir := "/etc"
		args := []string{"unmask"}
		if runtime {
			dir = "/run"
			args = append(args, "--runtime")
		}
		link, err := os.Readlink(s.m.path(filepath.Join(dir, "systemd/system", unitName(name))))
		if err != nil || link != "/dev/null" {
			continue // not masked
		}
		res, err := s.m.run(ctx, s.cmd(true, false, append(args, unitName(name))...)...)
		if err != nil {
			return err
		}
		if res.Code != 0 {
			return saltError("Failed to unmask service '" + name + "'")
		}
	}
	return nil
}

func (s systemd) control(ctx context.Context, action, name string, o opts) (bool, error) {
	if err := s.checkChanges(ctx, name); err != nil {
		return false, err
	}
	if action != "stop" {
		if err := s.unmask(ctx, name, o); err != nil {
			return false, err
		}
	}
	argv := s.cmd(true, o.noBlock, action, unitName(name))
	res, err := s.m.run(ctx, argv...)
	if err != nil {
		return false, err
	}
	if action == "stop" {
		return res.Code == 0, nil
	}
	if res.Code != 0 {
		// Salt raises here, so that the reason (a masked unit, a failing
		// ExecStart) reaches the caller.
		return false, failed(argv, res)
	}
	return true, nil
}

func (s systemd) running(ctx context.Context, name, _ string) (bool, error) {
	if err := s.checkChanges(ctx, name); err != nil {
		return false, err
	}
	res, err := s.m.run(ctx, s.cmd(false, false, "is-active", unitName(name))...)
	return err == nil && res.Code == 0, err
}

func (s systemd) boot(ctx context.Context, name string, enable bool, o opts) (bool, error) {
	if err := s.checkChanges(ctx, name); err != nil {
		return false, err
	}
	if enable {
		if err := s.unmask(ctx, name, o); err != nil {
			return false, err
		}
	}
	sysvOnly, err := s.sysvServices()
	if err != nil {
		return false, err
	}
	if slices.Contains(sysvOnly, name) {
		// A SysV script without a unit: systemd runs it through its
		// generator, and its rc links decide boot.
		argv, err := s.sysvBoot(name, enable)
		if err != nil {
			return false, err
		}
		res, err := s.m.run(ctx, argv...)
		return err == nil && res.Code == 0, err
	}
	action := "disable"
	if enable {
		action = "enable"
	}
	argv := s.cmd(true, o.noBlock, action, unitName(name))
	res, err := s.m.run(ctx, argv...)
	if err != nil {
		return false, err
	}
	if !enable {
		return res.Code == 0, nil
	}
	if res.Code != 0 {
		return false, failed(argv, res)
	}
	return true, nil
}

// sysvBoot is the command enabling or disabling a SysV script at boot on a
// systemd machine: update-rc.d, or chkconfig where there is no update-rc.d.
func (s systemd) sysvBoot(name string, enable bool) ([]string, error) {
	var argv []string
	if s.m.Scope {
		argv = append(argv, "systemd-run", "--scope")
	}
	switch {
	case lookPath("update-rc.d"):
		if enable {
			return append(argv, "update-rc.d", "-f", name, "defaults", "99"), nil
		}
		return append(argv, "update-rc.d", "-f", name, "remove"), nil
	case lookPath("chkconfig"):
		if enable {
			return append(argv, "chkconfig", name, "on"), nil
		}
		return append(argv, "chkconfig", name, "off"), nil
	}
	return nil, saltError("Unable to find sysv service manager (tried update-rc.d, chkconfig)")
}

func lookPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

func (s systemd) enabled(ctx context.Context, name string) (bool, error) {
	res, err := s.m.run(ctx, s.cmd(false, false, "is-enabled", unitName(name))...)
	if err != nil {
		return false, err
	}
	switch {
	case res.Code == 0 && res.Stdout != "alias":
		return true, nil
	case res.Stdout == "alias":
		// An alias is as enabled as the unit behind it.
		id, err := s.m.run(ctx, s.cmd(false, false, "show", unitName(name), "-P", "Id")...)
		if err != nil {
			return false, err
		}
		res, err := s.m.run(ctx, s.cmd(false, false, "is-enabled", unitName(id.Stdout))...)
		return err == nil && res.Code == 0, err
	case strings.Contains(name, "@"):
		// Older systemd cannot tell for template instances: look for the
		// link systemctl enable makes.
		return s.instanceLinked(name), nil
	}
	sysvOnly, err := s.sysvServices()
	if err != nil || !slices.Contains(sysvOnly, name) {
		return false, err
	}
	return s.sysvEnabled(ctx, name)
}

// instanceLinked reports whether /etc/systemd/system holds a link named
// name (a template instance's, made by systemctl enable).
func (s systemd) instanceLinked(name string) bool {
	found := false
	root := s.m.path("/etc/systemd/system")
	_ = filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == name && d.Type()&fs.ModeSymlink != 0 {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// sysvEnabled reports whether a SysV script has a start link (S01name) in
// the current runlevel.
func (s systemd) sysvEnabled(ctx context.Context, name string) (bool, error) {
	ents, err := os.ReadDir(s.m.path("/etc/rc" + s.m.runlevel(ctx) + ".d"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	link := regexp.MustCompile(`^S\d{0,2}` + regexp.QuoteMeta(name) + `$`)
	for _, e := range ents {
		if link.MatchString(e.Name()) {
			return true, nil
		}
	}
	return false, nil
}

func (s systemd) available(ctx context.Context, name string) (bool, error) {
	if err := s.checkChanges(ctx, name); err != nil {
		return false, err
	}
	res, err := s.status(ctx, name)
	return err == nil && availableIn(res), err
}

// systemdServices lists the unit files installed, as Salt names them.
func (s systemd) systemdServices() (map[string]bool, error) {
	out := map[string]bool{}
	for _, dir := range unitDirs {
		p := s.m.path(dir)
		// A directory that is a link (/lib → /usr/lib) is listed through
		// its target already.
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			continue // unreadable: Salt skips it too
		}
		for _, e := range ents {
			if n := serviceName(e.Name()); n != "" {
				out[n] = true
			}
		}
	}
	return out, nil
}

// sysvServices lists the executable init scripts that have no unit.
func (s systemd) sysvServices() ([]string, error) {
	units, err := s.systemdServices()
	if err != nil {
		return nil, err
	}
	scripts, err := s.m.initScripts(true)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range scripts {
		if !units[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

func (s systemd) list(ctx context.Context, which string) ([]string, error) {
	sysvOnly, err := s.sysvServices()
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	if which == "all" {
		if set, err = s.systemdServices(); err != nil {
			return nil, err
		}
		for _, n := range sysvOnly {
			set[n] = true
		}
		return sorted(set), nil
	}
	res, err := s.m.run(ctx, s.cmd(false, false, "--full", "--no-legend", "--no-pager", "list-unit-files")...)
	if err != nil {
		return nil, err
	}
	for line := range strings.SplitSeq(res.Stdout, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1] != which {
			continue
		}
		if n := serviceName(f[0]); n != "" {
			set[n] = true
		}
	}
	for _, n := range sysvOnly {
		on, err := s.sysvEnabled(ctx, n)
		if err != nil {
			return nil, err
		}
		if on == (which == "enabled") {
			set[n] = true
		}
	}
	return sorted(set), nil
}
