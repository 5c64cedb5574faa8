// Package sysctl is Salt's sysctl execution module (linux_sysctl):
// kernel parameters read and set through /proc/sys, as sysctl -n and
// sysctl -w do, and kept in a configuration file read at boot, edited as
// Salt's sysctl.persist edits it, so that the sysctl.present state and
// an operator's sysctl.persist do the same thing.
package sysctl

import (
	"bufio"
	"bytes"
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
)

// Kernel is where parameters are read and written: Proc is /proc/sys,
// Booted whether systemd 207 or later runs the machine (which decides
// the default configuration file).
type Kernel struct {
	Proc   string
	Booted func() bool
}

// Host is this machine's kernel.
var Host = &Kernel{Proc: "/proc/sys", Booted: systemdBooted}

// Module declares the sysctl functions.
func Module(*modules.Env) []function.Func {
	k := Host
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	value := function.Param{Name: "value", Kind: function.Any, Required: true}
	return []function.Func{
		{Name: "sysctl.default_config", ReadOnly: true, Doc: "The file sysctl.persist writes by default: " +
			"/etc/sysctl.d/99-salt.conf under systemd (207 or later), else /etc/sysctl.conf.",
			Run: func(context.Context, *function.Input) (any, error) { return k.DefaultConfig(), nil }},
		{Name: "sysctl.get", ReadOnly: true, Doc: "The value of the kernel parameter name (sysctl -n's output, or its error).",
			Params: []function.Param{name},
			Run:    func(_ context.Context, in *function.Input) (any, error) { return k.Get(in.String("name")), nil }},
		{Name: "sysctl.show", ReadOnly: true, Doc: "Every kernel parameter and its value (sysctl -a), or the settings of " +
			"config_file.",
			Params: []function.Param{{Name: "config_file", Kind: function.Any, Default: false}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if cf := in.Value("config_file"); py.Truth(cf) {
					if _, err := os.Stat(py.Str(cf)); err != nil {
						return []any{}, nil // Salt's return for a missing file
					}
					m, err := Show(py.Str(cf))
					if err != nil || m == nil {
						return m, err
					}
					return strMap(m), nil
				}
				return showAll(ctx)
			}},
		{Name: "sysctl.assign", Doc: "Set the kernel parameter name to value now (not at boot); {name: value} as the kernel shows it.",
			Params: []function.Param{name, value},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				n, v := in.String("name"), py.Str(in.Value("value"))
				if err := k.Assign(n, v); err != nil {
					return nil, err
				}
				return map[string]any{n: k.Get(n)}, nil
			}},
		{Name: "sysctl.persist", Doc: "Set the kernel parameter name to value now and in config (Salt's default file when " +
			"not given): \"Updated\" or \"Already set\".",
			Params: []function.Param{name, value, {Name: "config", Kind: function.Any}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				config := k.DefaultConfig()
				if v := in.Value("config"); v != nil {
					config = py.Str(v)
				}
				return k.Persist(in.String("name"), py.Str(in.Value("value")), config)
			}},
	}
}

func strMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// showAll is sysctl -a as Salt reads it: "name = value" lines.
func showAll(ctx context.Context) (any, error) {
	bin, err := exec.LookPath("sysctl")
	if err != nil {
		return nil, commentf("Command 'sysctl' cannot be found")
	}
	out, _ := exec.CommandContext(ctx, bin, "-a").Output()
	m := map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " = "); ok {
			m[k] = v
		}
	}
	return m, nil
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

// DefaultConfig is Salt's sysctl.default_config.
func (k *Kernel) DefaultConfig() string {
	if k.Booted() {
		return "/etc/sysctl.d/99-salt.conf"
	}
	return "/etc/sysctl.conf"
}

// procPath is the /proc/sys file of a parameter: dots are directories,
// slashes (in interface names) dots.
func (k *Kernel) procPath(name string) string {
	return filepath.Join(k.Proc, strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name))
}

// Get is sysctl.get: sysctl -n's output, its error text when the
// parameter cannot be read (as Salt's cmd.run returns it).
func (k *Kernel) Get(name string) string {
	b, err := os.ReadFile(k.procPath(name))
	if err != nil {
		var pe *fs.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				msg = "No such file or directory"
			}
		}
		return fmt.Sprintf("sysctl: cannot stat %s: %s", k.procPath(name), msg)
	}
	return strings.TrimRight(string(b), "\n")
}

// Assign is sysctl.assign: the value written to /proc/sys and read back.
func (k *Kernel) Assign(name, value string) error {
	p := k.procPath(name)
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("sysctl %s does not exist", name)
	}
	if err := os.WriteFile(p, []byte(value+"\n"), 0); err != nil {
		return fmt.Errorf("sysctl -w failed: sysctl: setting key \"%s\": %v", name, errors.Unwrap(err))
	}
	if got := k.Get(name); sanitize(got) != sanitize(value) {
		return fmt.Errorf("sysctl -w failed: %s = %s", name, got)
	}
	return nil
}

var spaces = regexp.MustCompile(`\s+`)

// sanitize is Salt's _sanitize_sysctl_value: whitespace runs as one tab,
// as the kernel shows multi-valued parameters.
func sanitize(v string) string { return spaces.ReplaceAllString(v, "\t") }

// Show is sysctl.show(config_file): the file's name = value settings
// (nil and no error when the file does not exist).
func Show(config string) (map[string]string, error) {
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

// Persist is Salt's sysctl.persist: "Updated" or "Already set".
func (k *Kernel) Persist(name, value, config string) (string, error) {
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
		key, v, ok := strings.Cut(line, "=")
		key, v = strings.TrimSpace(key), strings.TrimSpace(v)
		if !ok || strings.HasPrefix(key, "#") || key != name {
			out = append(out, line)
			continue
		}
		if sanitize(v) == sanitize(value) {
			if sanitize(k.Get(name)) != sanitize(value) {
				if err := k.Assign(name, value); err != nil {
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
	if err := k.Assign(name, value); err != nil {
		return "", err
	}
	return "Updated", nil
}

// comment is a failure worded as Salt words it, capital included.
type comment string

func (c comment) Error() string { return string(c) }

func commentf(format string, args ...any) error { return comment(fmt.Sprintf(format, args...)) }
