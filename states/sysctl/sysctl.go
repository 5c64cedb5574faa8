// Package sysctl is Salt's sysctl state module: sysctl.present, a kernel
// parameter set now (/proc/sys) and in a configuration file read at boot,
// with Salt's comments and changes ({name: value}).
//
// The configuration file is Salt's default: /etc/sysctl.d/99-salt.conf
// when systemd (207 or later) runs the machine, else /etc/sysctl.conf,
// edited as Salt's sysctl.persist edits it (the parameter's line
// replaced, or "name = value" appended). The running value is read and
// written through /proc/sys directly, as sysctl -n and sysctl -w do.
package sysctl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// Module declares sysctl.present.
func Module(*modules.Env) []function.Func {
	s := &states{proc: "/proc/sys", booted: systemdBooted}
	return []function.Func{{
		Name: "sysctl.present", Doc: "Ensure the kernel parameter name has value, now and in the configuration file config.",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true},
			{Name: "value", Kind: function.Any, Required: true}, {Name: "config", Kind: function.Any}},
		Run: func(ctx context.Context, in *function.Input) (any, error) { return s.present(ctx, in), nil },
	}}
}

type states struct {
	proc   string      // /proc/sys
	booted func() bool // whether systemd 207 or later runs the machine
}

// systemdBooted is Salt's systemd.booted and version >= 207.
func systemdBooted() bool {
	if fi, err := os.Stat("/run/systemd/system"); err != nil || !fi.IsDir() {
		return false
	}
	out, err := exec.Command("systemctl", "--version").Output()
	if err != nil {
		return false
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return false
	}
	v, err := strconv.Atoi(f[1])
	return err == nil && v >= 207
}

// defaultConfig is Salt's sysctl.default_config.
func (s *states) defaultConfig() string {
	if s.booted() {
		return "/etc/sysctl.d/99-salt.conf"
	}
	return "/etc/sysctl.conf"
}

// procPath is the /proc/sys file of a parameter: dots are directories,
// slashes (in interface names) dots.
func (s *states) procPath(name string) string {
	return filepath.Join(s.proc, strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name))
}

// get is sysctl.get: sysctl -n's output, its error text when the
// parameter cannot be read (as Salt's cmd.run returns it).
func (s *states) get(name string) string {
	b, err := os.ReadFile(s.procPath(name))
	if err != nil {
		var pe *fs.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				msg = "No such file or directory"
			}
		}
		return fmt.Sprintf("sysctl: cannot stat %s: %s", s.procPath(name), msg)
	}
	return strings.TrimRight(string(b), "\n")
}

// assign is sysctl.assign: the value written to /proc/sys and read back.
func (s *states) assign(name, value string) error {
	p := s.procPath(name)
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("sysctl %s does not exist", name)
	}
	if err := os.WriteFile(p, []byte(value+"\n"), 0); err != nil {
		return fmt.Errorf("sysctl -w failed: sysctl: setting key \"%s\": %v", name, errors.Unwrap(err))
	}
	if got := s.get(name); sanitize(got) != sanitize(value) {
		return fmt.Errorf("sysctl -w failed: %s = %s", name, got)
	}
	return nil
}

var spaces = regexp.MustCompile(`\s+`)

// sanitize is Salt's _sanitize_sysctl_value: whitespace runs as one tab,
// as the kernel shows multi-valued parameters.
func sanitize(v string) string { return spaces.ReplaceAllString(v, "\t") }

// show is sysctl.show(config_file): the file's name = value settings
// (nil and no error when the file does not exist).
func show(config string) (map[string]string, error) {
	raw, err := os.ReadFile(config)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimRight(k, " \t")] = strings.TrimLeft(v, " \t")
		}
	}
	return out, nil
}

// persist is Salt's sysctl.persist: "Updated" or "Already set".
func (s *states) persist(name, value, config string) (string, error) {
	if fi, err := os.Stat(config); err != nil || !fi.Mode().IsRegular() {
		if err := os.MkdirAll(filepath.Dir(config), 0o755); err != nil {
			return "", commentf("Could not write to file: %s", config)
		}
		if err := os.WriteFile(config, []byte("#\n# Kernel sysctl configuration\n#\n"), 0o644); err != nil {
			return "", commentf("Could not write to file: %s", config)
		}
	}
	raw, err := os.ReadFile(config)
	if err != nil {
		return "", commentf("Could not read from file: %s", config)
	}
	var out []string
	edited := false
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || strings.HasPrefix(k, "#") || k != name {
			out = append(out, line)
			continue
		}
		if sanitize(v) == sanitize(value) {
			if sanitize(s.get(name)) != sanitize(value) {
				if err := s.assign(name, value); err != nil {
					return "", err
				}
				return "Updated", nil
			}
			return "Already set", nil
		}
		out = append(out, fmt.Sprintf("%s = %s\n", name, value))
		edited = true
	}
	if !edited {
		out = append(out, fmt.Sprintf("%s = %s\n", name, value))
	}
	if err := os.WriteFile(config, []byte(strings.Join(out, "")), 0o644); err != nil {
		return "", commentf("Could not write to file: %s", config)
	}
	if err := s.assign(name, value); err != nil {
		return "", err
	}
	return "Updated", nil
}

var blanks = regexp.MustCompile(` +|\t+`)

func (s *states) present(ctx context.Context, in *function.Input) state.Result {
	name := in.String("name")
	value := py.Str(in.Value("value"))
	config := s.defaultConfig()
	if v := in.Value("config"); v != nil {
		config = py.Str(v)
	}
	if state.From(ctx).Test {
		configured, err := show(config)
		if err != nil {
			return state.Pending(name, fmt.Sprintf("Sysctl option %s might be changed, we failed to check config file at "+
				"%s. The file is either unreadable, or missing.", name, config), nil)
		}
		current := s.get(name)
		_, inConfig := configured[name]
		switch {
		case current != "" && inConfig:
			if strings.Join(strings.Fields(value), " ") == strings.Join(strings.Fields(current), " ") {
				return state.Succeeded(name, fmt.Sprintf("Sysctl value %s = %s is already set", name, value), nil)
			}
		case current != "":
			if blanks.ReplaceAllString(current, " ") != blanks.ReplaceAllString(value, " ") {
				return state.Pending(name, fmt.Sprintf("Sysctl option %s set to be changed to %s", name, value), nil)
			}
			return state.Pending(name, fmt.Sprintf("Sysctl value is currently set on the running system but not in a "+
				"config file. Sysctl option %s set to be changed to %s in config file.", name, value), nil)
		case inConfig:
			return state.Pending(name, fmt.Sprintf("Sysctl value %[1]s is present in configuration file but is not "+
				"present in the running config. The value %[1]s is set to be changed to %[2]s", name, value), nil)
		}
		return state.Pending(name, fmt.Sprintf("Sysctl option %s would be changed to %s", name, value), nil)
	}
	update, err := s.persist(name, value, config)
	if err != nil {
		return state.Failed(name, "Failed to set %s to %s: %v", name, value, err)
	}
	if update == "Updated" {
		return state.Succeeded(name, fmt.Sprintf("Updated sysctl value %s = %s", name, value),
			map[string]any{name: in.Value("value")})
	}
	return state.Succeeded(name, fmt.Sprintf("Sysctl value %s = %s is already set", name, value), nil)
}

// comment is a failure worded as Salt words it, capital included.
type comment string

func (c comment) Error() string { return string(c) }

func commentf(format string, args ...any) error { return comment(fmt.Sprintf(format, args...)) }
