// Package service is Salt's service execution module: start, stop,
// restart, reload, status, enable, disable, enabled, disabled, available,
// missing, get_all, get_enabled and get_disabled, with Salt's arguments
// and return shapes.
//
// As Salt's virtual service module, it has two backends on Linux: systemd
// (systemctl, as salt/modules/systemd_service.py) when the machine was
// booted with systemd, and Debian's SysV tools otherwise (service,
// update-rc.d, /etc/init.d and /etc/rc?.d, as debian_service.py). The
// backend is chosen at every call rather than once: an agent may start
// before a container's init, and tests swap it. On Windows the backend is
// the Service Control Manager (as win_service.py); on macOS and FreeBSD
// there is none yet, and the functions say so.
package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/modules"
)

// Result is what one command did.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Runner runs argv without a shell. An error means the command could not
// run at all; its exit status is Result.Code.
type Runner func(ctx context.Context, argv ...string) (Result, error)

// waitDelay bounds how long a finished command's output is waited for:
// an init script that starts its daemon without closing stdout would
// otherwise hold the call until the daemon exits.
const waitDelay = 5 * time.Second

// Exec is the Runner that runs real commands.
func Exec(ctx context.Context, argv ...string) (Result, error) { return ExecEnv(ctx, nil, argv...) }

// Run runs argv and makes a non-zero exit an error carrying what the
// command said (its stderr, else its stdout): for the tools a state runs
// to change the machine (useradd, groupmod…).
func Run(ctx context.Context, argv ...string) error {
	res, err := Exec(ctx, argv...)
	if err != nil {
		return err
	}
	if res.Code != 0 {
		msg := res.Stderr
		if msg == "" {
			msg = res.Stdout
		}
		return fmt.Errorf("%s: exit status %d: %s", strings.Join(argv, " "), res.Code, msg)
	}
	return nil
}

// ExecEnv runs argv with env added to the agent's environment (the
// package modules' DEBIAN_FRONTEND and the like). Output is trimmed.
func ExecEnv(ctx context.Context, env []string, argv ...string) (Result, error) {
	if len(argv) == 0 {
		return Result{}, errors.New("empty command")
	}
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if env != nil {
		c.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.WaitDelay = waitDelay
	err := c.Run()
	res := Result{Stdout: strings.TrimSpace(stdout.String()), Stderr: strings.TrimSpace(stderr.String())}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.Exited():
		res.Code = exit.ExitCode()
	case err != nil && ctx.Err() != nil:
		return res, fmt.Errorf("%s: %w", strings.Join(argv, " "), ctx.Err())
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		return res, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return res, nil
}

// Manager runs the service functions.
type Manager struct {
	// Run runs the commands (Exec when nil).
	Run Runner
	// Systemd reports whether the machine was booted with systemd
	// (/run/systemd/system exists, as sd_booted checks, when nil).
	Systemd func() bool
	// Scope wraps systemctl's changing commands in systemd-run --scope, as
	// Salt does, so that restarting the agent's own unit does not kill the
	// command restarting it.
	Scope bool
	// Root is the directory the init scripts, rc links and unit files are
	// read under ("" for /).
	Root string
	// Self is the agent's own unit, whose stop and restart do not wait for
	// the job to finish unless no_block=False says so: waiting would
	// deadlock, the agent being what stops (Salt's salt-minion rule).
	Self string
}

// opts are the systemd arguments of the changing functions; SysV has no
// use for them.
type opts struct {
	noBlock, unmask, unmaskRuntime bool
}

// backend is one init system.
type backend interface {
	// control starts, stops, restarts or reloads name.
	control(ctx context.Context, action, name string, o opts) (bool, error)
	// running is service.status of one service.
	running(ctx context.Context, name, sig string) (bool, error)
	// boot enables or disables name at boot.
	boot(ctx context.Context, name string, enable bool, o opts) (bool, error)
	enabled(ctx context.Context, name string) (bool, error)
	available(ctx context.Context, name string) (bool, error)
	// list returns the services: all, enabled or disabled, sorted.
	list(ctx context.Context, which string) ([]string, error)
}

func (m *Manager) run(ctx context.Context, argv ...string) (Result, error) {
	if m.Run == nil {
		return Exec(ctx, argv...)
	}
	return m.Run(ctx, argv...)
}

// path returns p under m.Root.
func (m *Manager) path(p string) string {
	if m.Root == "" {
		return p
	}
	return filepath.Join(m.Root, p)
}

// backend picks the init system for this call.
func (m *Manager) backend() backend {
	if b := platformBackend(m); b != nil {
		return b
	}
	booted := m.Systemd
	if booted == nil {
		booted = func() bool {
			fi, err := os.Stat("/run/systemd/system")
			return err == nil && fi.IsDir()
		}
	}
	if booted() {
		return systemd{m}
	}
	return sysv{m}
}

// validName refuses what no init system names a service and a command
// would take for something else: an option, or a path.
func validName(name string) error {
	if name == "" || strings.HasPrefix(name, "-") || strings.ContainsAny(name, "/\x00 \t\n") {
		return fmt.Errorf("invalid service name %q", name)
	}
	return nil
}

// globbing is Salt's test for a service name that is a glob.
var globbing = regexp.MustCompile(`\*|\?|\[.+\]`)

// runlevel is the current runlevel, "2" (Debian's default, as Salt
// assumes) when it is unknown, as in a container without init.
func (m *Manager) runlevel(ctx context.Context) string {
	res, err := m.run(ctx, "runlevel")
	if f := strings.Fields(res.Stdout); err == nil && len(f) >= 2 && !strings.Contains(res.Stdout, "unknown") {
		return f[1]
	}
	return "2"
}

// rcEnabled lists the services with a start link in /etc/rcS.d or the
// current runlevel's /etc/rcN.d (S01name), as Debian's get_enabled.
func (m *Manager) rcEnabled(ctx context.Context) ([]string, error) {
	start := regexp.MustCompile(`^S\d+(.+)$`)
	var out []string
	for _, dir := range []string{"/etc/rcS.d", "/etc/rc" + m.runlevel(ctx) + ".d"} {
		ents, err := os.ReadDir(m.path(dir))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if s := start.FindStringSubmatch(e.Name()); s != nil && !slices.Contains(out, s[1]) {
				out = append(out, s[1])
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// initScripts lists /etc/init.d; executable only keeps the runnable ones
// (systemd's view), otherwise all but README (Debian's).
func (m *Manager) initScripts(executable bool) ([]string, error) {
	ents, err := os.ReadDir(m.path("/etc/init.d"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "README" {
			continue
		}
		if executable {
			fi, err := os.Stat(filepath.Join(m.path("/etc/init.d"), name))
			if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				continue
			}
		}
		out = append(out, name)
	}
	return out, nil
}

// sorted returns the set's members sorted, never nil.
func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Module declares the service functions for env's agent.
func Module(env *modules.Env) []function.Func {
	m := &Manager{Self: "brine-agent", Scope: scopeDefault(env)}
	return m.Funcs()
}

// scopeDefault is Salt's: systemd-run --scope when it exists, unless the
// agent's systemd.scope option is False.
func scopeDefault(env *modules.Env) bool {
	if env != nil && env.Opts != nil {
		if v, ok := env.Opts()["systemd.scope"].(bool); ok && !v {
			return false
		}
	}
	_, err := exec.LookPath("systemd-run")
	return err == nil
}

// Funcs declares the service functions run by m.
func (m *Manager) Funcs() []function.Func {
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	noBlock := function.Param{Name: "no_block", Kind: function.Bool, Default: false}
	// Stop and restart of the agent's own unit default to not blocking.
	noBlockSelf := function.Param{Name: "no_block", Kind: function.Bool}
	unmask := function.Param{Name: "unmask", Kind: function.Bool, Default: false}
	unmaskRuntime := function.Param{Name: "unmask_runtime", Kind: function.Bool, Default: false}
	control := func(action string) function.Handler {
		return m.named(func(ctx context.Context, b backend, n string, in *function.Input) (any, error) {
			o := opts{noBlock: in.Bool("no_block"), unmask: in.Bool("unmask"), unmaskRuntime: in.Bool("unmask_runtime")}
			if !in.Has("no_block") {
				o.noBlock = m.Self != "" && unitName(n) == unitName(m.Self)
			}
			return b.control(ctx, action, n, o)
		})
	}
	boot := func(enable bool) function.Handler {
		return m.named(func(ctx context.Context, b backend, n string, in *function.Input) (any, error) {
			if err := noRoot(in); err != nil {
				return nil, err
			}
			return b.boot(ctx, n, enable, opts{noBlock: in.Bool("no_block"), unmask: in.Bool("unmask"), unmaskRuntime: in.Bool("unmask_runtime")})
		})
	}
	list := func(which string) function.Handler {
		return func(ctx context.Context, _ *function.Input) (any, error) { return m.backend().list(ctx, which) }
	}
	return []function.Func{
		{Name: "service.start", Doc: "Start a service: True, or an error with what the init system said.",
			Params: []function.Param{name, noBlock, unmask, unmaskRuntime}, Run: control("start")},
		{Name: "service.stop", Doc: "Stop a service: True when it stopped.",
			Params: []function.Param{name, noBlockSelf}, Run: control("stop")},
		{Name: "service.restart", Doc: "Restart a service: True, or an error with what the init system said.",
			Params: []function.Param{name, noBlockSelf, unmask, unmaskRuntime}, Run: control("restart")},
		{Name: "service.reload", Doc: "Reload a service's configuration: True, or an error with what the init system said.",
			Params: []function.Param{name, noBlock, unmask, unmaskRuntime}, Run: control("reload")},
		{Name: "service.status", Doc: "Whether a service runs; a glob gives {service: bool}. sig: a regular expression found in a running command line instead (SysV).",
			Params: []function.Param{{Name: "name", Kind: function.String, Required: true}, {Name: "sig", Kind: function.String}}, ReadOnly: true,
			Run: m.status},
		{Name: "service.enable", Doc: "Start a service at boot.",
			Params: []function.Param{name, noBlock, unmask, unmaskRuntime}, VarKwargs: true, Run: boot(true)},
		{Name: "service.disable", Doc: "Do not start a service at boot.",
			Params: []function.Param{name, noBlock}, VarKwargs: true, Run: boot(false)},
		{Name: "service.enabled", Doc: "Whether a service starts at boot.",
			Params: []function.Param{name}, VarKwargs: true, ReadOnly: true,
			Run: m.named(func(ctx context.Context, b backend, n string, in *function.Input) (any, error) {
				if err := noRoot(in); err != nil {
					return nil, err
				}
				return b.enabled(ctx, n)
			})},
		{Name: "service.disabled", Doc: "Whether a service does not start at boot.",
			Params: []function.Param{name}, ReadOnly: true,
			Run: m.named(func(ctx context.Context, b backend, n string, _ *function.Input) (any, error) {
				on, err := b.enabled(ctx, n)
				return !on && err == nil, err
			})},
		{Name: "service.available", Doc: "Whether a service is installed.",
			Params: []function.Param{name}, ReadOnly: true,
			Run: m.named(func(ctx context.Context, b backend, n string, _ *function.Input) (any, error) {
				return b.available(ctx, n)
			})},
		{Name: "service.missing", Doc: "Whether a service is not installed.",
			Params: []function.Param{name}, ReadOnly: true,
			Run: m.named(func(ctx context.Context, b backend, n string, _ *function.Input) (any, error) {
				ok, err := b.available(ctx, n)
				return !ok && err == nil, err
			})},
		{Name: "service.get_all", Doc: "Every installed service, sorted.", ReadOnly: true, Run: list("all")},
		{Name: "service.get_enabled", Doc: "The services started at boot, sorted.", ReadOnly: true, Run: list("enabled")},
		{Name: "service.get_disabled", Doc: "The installed services not started at boot, sorted.", ReadOnly: true, Run: list("disabled")},
	}
}

// named wraps a function of one service name: it checks the name and
// picks the backend.
func (m *Manager) named(f func(context.Context, backend, string, *function.Input) (any, error)) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		n := in.String("name")
		if err := validName(n); err != nil {
			return nil, err
		}
		return f(ctx, m.backend(), n, in)
	}
}

// noRoot refuses Salt's root argument (acting on an image mounted
// elsewhere), which brine does not support, rather than ignoring it.
func noRoot(in *function.Input) error {
	if r, ok := in.ExtraKwargs["root"]; ok && r != nil && r != "" {
		return errors.New("the root argument is not supported")
	}
	return nil
}

// status is service.status: a bool, or {service: bool} for a glob.
func (m *Manager) status(ctx context.Context, in *function.Input) (any, error) {
	name, sig := in.String("name"), in.String("sig")
	b := m.backend()
	if _, ok := b.(sysv); ok && sig != "" {
		// Debian's status looks for sig before it looks at the name.
		return b.running(ctx, name, sig)
	}
	if !globbing.MatchString(name) {
		if err := validName(name); err != nil {
			return nil, err
		}
		return b.running(ctx, name, sig)
	}
	all, err := b.list(ctx, "all")
	if err != nil {
		return nil, err
	}
	g := fnmatch.Compile(name)
	out := map[string]any{}
	for _, s := range all {
		if !g.Match(s) {
			continue
		}
		on, err := b.running(ctx, s, sig)
		if err != nil {
			return nil, err
		}
		out[s] = on
	}
	return out, nil
}
