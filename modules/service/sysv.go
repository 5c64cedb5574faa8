package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// sysv is the backend of Debian machines without systemd: the service
// command runs /etc/init.d scripts, update-rc.d manages their rc links.
type sysv struct{ m *Manager }

func (s sysv) control(ctx context.Context, action, name string, _ opts) (bool, error) {
	res, err := s.m.run(ctx, "service", name, action)
	return err == nil && res.Code == 0, err
}

func (s sysv) running(ctx context.Context, name, sig string) (bool, error) {
	if sig != "" {
		return processMatching(sig, s.m.path("/proc"))
	}
	res, err := s.m.run(ctx, "service", name, "status")
	return err == nil && res.Code == 0, err
}

// boot enables or disables name's start links. update-rc.d's enable and
// disable only edit existing links, so a script that has none gets them
// first, started or not: Salt runs insserv for that, which current Debian
// no longer installs.
func (s sysv) boot(ctx context.Context, name string, enable bool, _ opts) (bool, error) {
	linked, err := s.linked(name)
	if err != nil {
		return false, err
	}
	action := map[[2]bool]string{
		{true, true}: "enable", {true, false}: "defaults",
		{false, true}: "disable", {false, false}: "defaults-disabled",
	}[[2]bool{enable, linked}]
	res, err := s.m.run(ctx, "update-rc.d", name, action)
	return err == nil && res.Code == 0, err
}

// linked reports whether name has a start or stop link in any runlevel.
func (s sysv) linked(name string) (bool, error) {
	link := regexp.MustCompile(`^[SK]\d*` + regexp.QuoteMeta(name) + `$`)
	dirs, err := filepath.Glob(s.m.path("/etc/rc[0-6S].d"))
	if err != nil {
		return false, err
	}
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if link.MatchString(e.Name()) {
				return true, nil
			}
		}
	}
	return false, nil
}

func (s sysv) enabled(ctx context.Context, name string) (bool, error) {
	on, err := s.m.rcEnabled(ctx)
	return slices.Contains(on, name), err
}

func (s sysv) available(ctx context.Context, name string) (bool, error) {
	all, err := s.list(ctx, "all")
	return slices.Contains(all, name), err
}

func (s sysv) list(ctx context.Context, which string) ([]string, error) {
	on, err := s.m.rcEnabled(ctx)
	if err != nil {
		return nil, err
	}
	if which == "enabled" {
		return on, nil
	}
	scripts, err := s.m.initScripts(false)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, n := range scripts {
		set[n] = true
	}
	if which == "disabled" {
		for _, n := range on {
			delete(set, n)
		}
		return sorted(set), nil
	}
	for _, n := range on {
		set[n] = true
	}
	return sorted(set), nil
}

// processMatching is Salt's status.pid(sig) as service.status uses it:
// whether a process other than this one has a command line in which the
// regular expression sig is found.
func processMatching(sig, proc string) (bool, error) {
	re, err := regexp.Compile(sig)
	if err != nil {
		return false, fmt.Errorf("sig %q: %w", sig, err)
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return false, err
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(proc, e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue // gone, or a kernel thread
		}
		if re.MatchString(strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ")) {
			return true, nil
		}
	}
	return false, nil
}
