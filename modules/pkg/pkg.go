// Package pkg is Salt's pkg execution module: install, remove, purge,
// version, list_pkgs, latest_version, refresh_db, upgrade_available,
// upgrade, list_upgrades, hold, unhold, get_selections, owner, file_list
// and file_dict, with Salt's arguments and return shapes
// (install, remove, purge and upgrade return {name: {"old": version,
// "new": version}} of what changed).
//
// Two backends share the functions, chosen by what the machine has: apt
// and dpkg (as salt/modules/aptpkg.py), and dnf and rpm (as yumpkg.py).
// Package operations of one agent run one at a time, as the package
// managers' own locks require; apt also waits for another process's lock
// (unattended-upgrades) instead of failing at once.
package pkg

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/service"
)

// Runner runs argv with env added to the agent's environment, as
// service.ExecEnv.
type Runner func(ctx context.Context, env []string, argv ...string) (service.Result, error)

// Manager runs the pkg functions.
type Manager struct {
	// Run runs the commands (service.ExecEnv when nil).
	Run Runner
	// Backend is "apt" or "dnf"; "" picks the one whose tools are
	// installed, at each call.
	Backend string
}

// lock serializes package operations across the agent: dpkg and rpm take
// a machine-wide lock, so a second operation would only fail.
var lock = make(chan struct{}, 1)

// locked runs f holding lock, unless ctx ends first.
func locked[T any](ctx context.Context, f func() (T, error)) (T, error) {
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("waiting for another package operation: %w", ctx.Err())
	}
	defer func() { <-lock }()
	return f()
}

// spec is one package to install: a name and, optionally, a version.
type spec struct{ name, version string }

// installOpts are install's arguments the backends use.
type installOpts struct {
	fromrepo                   string
	skipVerify, reinstall      bool
	installRecommends, upgrade bool
}

// backend is one package manager.
type backend interface {
	// list returns the installed packages and the removed ones whose
	// configuration remains (purge removes them), name → versions.
	list(ctx context.Context) (installed, removed map[string][]string, err error)
	// install installs specs; installed is what list returned before.
	install(ctx context.Context, specs []spec, installed map[string][]string, o installOpts) error
	// remove removes (purge: with their configuration) names.
	remove(ctx context.Context, names []string, purge bool) error
	// candidate is the version the package manager would install ("" when
	// none).
	candidate(ctx context.Context, name, fromrepo string) (string, error)
	// refresh updates the package lists: refresh_db's return.
	refresh(ctx context.Context, cacheValidTime int64, failhard bool) (any, error)
	// compare compares two versions: -1, 0 or 1.
	compare(a, b string) int
}

func (m *Manager) run(ctx context.Context, env []string, argv ...string) (service.Result, error) {
	if m.Run == nil {
		return service.ExecEnv(ctx, env, argv...)
	}
	return m.Run(ctx, env, argv...)
}

// backend picks the package manager for this call.
func (m *Manager) backend() (backend, error) {
	if err := platformErr(); err != nil {
		return nil, err
	}
	name := m.Backend
	if name == "" {
		switch {
		case has("apt-get") && has("dpkg-query"):
			name = "apt"
		case has("dnf") && has("rpm"):
			name = "dnf"
		default:
			return nil, errors.New("no supported package manager: found neither apt-get and dpkg-query nor dnf and rpm")
		}
	}
	switch name {
	case "apt":
		return apt{m}, nil
	case "dnf":
		return dnf{m}, nil
	}
	return nil, fmt.Errorf("package manager %q is not supported (apt or dnf)", name)
}

func has(tool string) bool {
	_, err := exec.LookPath(tool)
	return err == nil
}

// saltError is a message Salt's module has (a CommandExecutionError),
// kept word for word for whoever matches Salt's output.
type saltError string

func (e saltError) Error() string { return string(e) }

// problem is Salt's error for a failed install or removal, with what the
// package manager said, as Salt prints its info.
func problem(doing string, res service.Result) error {
	msg := res.Stderr
	if msg == "" {
		msg = res.Stdout
	}
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", res.Code)
	}
	return saltError(fmt.Sprintf("Problem encountered %s package(s). Additional info follows:\n\nerrors:\n    - %s",
		doing, strings.ReplaceAll(msg, "\n", "\n      ")))
}

// validName refuses what a package manager would take for an option.
func validName(name string) error {
	if name == "" || strings.HasPrefix(name, "-") || strings.ContainsAny(name, " \t\n\x00") {
		return fmt.Errorf("invalid package name %q", name)
	}
	return nil
}

// targets reads name and pkgs as Salt's pkg_resource.parse_targets: pkgs
// (names, or {name: version} mappings) wins over name, a comma-separated
// list whose every package gets version.
func targets(name string, pkgs []any, version string) ([]spec, error) {
	var out []spec
	if pkgs != nil {
		for i, p := range pkgs {
			switch t := p.(type) {
			case string:
				out = append(out, spec{name: t})
			case map[string]any:
				if len(t) != 1 {
					return nil, fmt.Errorf("pkgs: item %d: want one name: version, got %d keys", i, len(t))
				}
				for k, v := range t {
					s := spec{name: k}
					if v != nil {
						s.version = str(v)
					}
					out = append(out, s)
				}
			default:
				return nil, fmt.Errorf("pkgs: item %d: want a name or {name: version}, got %T", i, p)
			}
		}
	} else if name != "" {
		for n := range strings.SplitSeq(name, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, spec{name: n, version: version})
			}
		}
	}
	for i := range out {
		if err := validName(out[i].name); err != nil {
			return nil, err
		}
		// Salt accepts "=1.2-3" for "1.2-3".
		out[i].version = strings.TrimLeft(out[i].version, "=")
	}
	return out, nil
}

// str formats a version given as a YAML number the way Python's str would.
func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// isTrue is Salt's salt.utils.data.is_true, for **kwargs flags.
func isTrue(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case int64:
		return t > 0
	case float64:
		return t > 0
	case string:
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return f > 0
		}
		return strings.EqualFold(t, "true")
	}
	return false
}

// flat is list_pkgs's default shape: versions joined by commas.
func flat(pkgs map[string][]string) map[string]string {
	out := make(map[string]string, len(pkgs))
	for n, vs := range pkgs {
		out[n] = strings.Join(vs, ",")
	}
	return out
}

// changes is Salt's compare_dicts of two list_pkgs.
func changes(old, new map[string]string) map[string]any {
	out := map[string]any{}
	for n, v := range new {
		if o, ok := old[n]; !ok || o != v {
			out[n] = map[string]any{"old": old[n], "new": v}
		}
	}
	for n, o := range old {
		if _, ok := new[n]; !ok {
			out[n] = map[string]any{"old": o, "new": ""}
		}
	}
	return out
}

// Module declares the pkg functions.
func Module(*modules.Env) []function.Func { return (&Manager{}).Funcs() }

// Funcs declares the pkg functions run by m.
func (m *Manager) Funcs() []function.Func {
	name := function.Param{Name: "name", Kind: function.String}
	pkgs := function.Param{Name: "pkgs", Kind: function.List}
	return append([]function.Func{
		{Name: "pkg.install", Doc: "Install packages (name, a comma-separated list, or pkgs: names or {name: version}): {name: {old, new}} of what changed.",
			Params: []function.Param{name,
				{Name: "refresh", Kind: function.Bool, Default: false},
				{Name: "fromrepo", Kind: function.String},
				{Name: "skip_verify", Kind: function.Bool, Default: false},
				{Name: "debconf", Kind: function.Any},
				pkgs,
				{Name: "sources", Kind: function.Any},
				{Name: "reinstall", Kind: function.Bool, Default: false},
				{Name: "version", Kind: function.String},
				{Name: "install_recommends", Kind: function.Bool, Default: true},
				{Name: "only_upgrade", Kind: function.Bool, Default: false},
			},
			VarKwargs: true, Run: m.install},
		{Name: "pkg.remove", Doc: "Remove packages: {name: {old, new}} of what changed.",
			Params: []function.Param{name, pkgs}, VarKwargs: true, Run: m.uninstall(false)},
		{Name: "pkg.purge", Doc: "Remove packages and their configuration: {name: {old, new}} of what changed.",
			Params: []function.Param{name, pkgs}, VarKwargs: true, Run: m.uninstall(true)},
		{Name: "pkg.version", Doc: "Installed version of a package (\"\" when not installed); of several, or of a glob, {name: version}.",
			VarArgs: true, VarKwargs: true, ReadOnly: true, Run: m.version},
		{Name: "pkg.list_pkgs", Doc: "Installed packages as {name: version}.",
			Params: []function.Param{
				{Name: "versions_as_list", Kind: function.Bool, Default: false},
				{Name: "removed", Kind: function.Bool, Default: false},
			},
			VarKwargs: true, ReadOnly: true, Run: m.listPkgs},
		{Name: "pkg.latest_version", Doc: "The version an install would bring, \"\" when the installed one is the latest; of several, {name: version}. Refreshes the package lists unless refresh=False.",
			VarArgs: true, VarKwargs: true, Run: m.latestVersion},
		{Name: "pkg.version_cmp", Doc: "Compare two versions as the package manager does: -1, 0 or 1 (ignore_epoch: without their epochs).",
			Params: []function.Param{
				{Name: "pkg1", Kind: function.String, Required: true},
				{Name: "pkg2", Kind: function.String, Required: true},
				{Name: "ignore_epoch", Kind: function.Bool, Default: false},
			},
			VarKwargs: true, ReadOnly: true, Run: m.versionCmp},
		{Name: "pkg.refresh_db", Doc: "Update the package lists: apt, {source: True (fetched), None (unchanged) or False (failed)}; dnf, True.",
			Params: []function.Param{
				{Name: "cache_valid_time", Kind: function.Int, Default: int64(0)},
				{Name: "failhard", Kind: function.Bool, Default: false},
			},
			VarKwargs: true, Run: m.refreshDB},
		{Name: "pkg.upgrade_available", Doc: "Whether a newer version of the package can be installed.",
			Params:    []function.Param{{Name: "name", Kind: function.String, Required: true}},
			VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				v, err := m.latest(ctx, []string{in.String("name")}, in.ExtraKwargs)
				if err != nil {
					return nil, err
				}
				return v[in.String("name")] != "", nil
			}},
	}, slices.Concat(m.upgradeFuncs(), m.holdFuncs(), m.fileFuncs())...)
}

func (m *Manager) install(ctx context.Context, in *function.Input) (any, error) {
	for _, unsupported := range []string{"debconf", "sources"} {
		if in.Value(unsupported) != nil {
			return nil, fmt.Errorf("the %s argument is not supported", unsupported)
		}
	}
	specs, err := targets(in.String("name"), in.List("pkgs"), in.String("version"))
	if err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return map[string]any{}, nil
	}
	b, err := m.backend()
	if err != nil {
		return nil, err
	}
	return locked(ctx, func() (any, error) {
		if in.Bool("refresh") {
			if _, err := b.refresh(ctx, 0, false); err != nil {
				return nil, err
			}
		}
		old, _, err := b.list(ctx)
		if err != nil {
			return nil, err
		}
		o := installOpts{
			fromrepo: in.String("fromrepo"), skipVerify: in.Bool("skip_verify"), reinstall: in.Bool("reinstall"),
			installRecommends: in.Bool("install_recommends"), upgrade: in.Bool("only_upgrade"),
		}
		if err := b.install(ctx, specs, old, o); err != nil {
			return nil, err
		}
		now, _, err := b.list(ctx)
		if err != nil {
			return nil, err
		}
		return changes(flat(old), flat(now)), nil
	})
}

func (m *Manager) uninstall(purge bool) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		specs, err := targets(in.String("name"), in.List("pkgs"), "")
		if err != nil {
			return nil, err
		}
		b, err := m.backend()
		if err != nil {
			return nil, err
		}
		return locked(ctx, func() (any, error) {
			old, oldRemoved, err := b.list(ctx)
			if err != nil {
				return nil, err
			}
			var names []string
			for _, s := range specs {
				_, inst := old[s.name]
				_, conf := oldRemoved[s.name]
				if (inst || (purge && conf)) && !slices.Contains(names, s.name) {
					names = append(names, s.name)
				}
			}
			if len(names) == 0 {
				return map[string]any{}, nil
			}
			if err := b.remove(ctx, names, purge); err != nil {
				return nil, err
			}
			now, nowRemoved, err := b.list(ctx)
			if err != nil {
				return nil, err
			}
			out := changes(flat(old), flat(now))
			if purge {
				// A purge also clears what remove left: config-files only.
				for n, c := range changes(flat(oldRemoved), flat(nowRemoved)) {
					if _, ok := out[n]; !ok && c.(map[string]any)["new"] == "" {
						out[n] = c
					}
				}
			}
			return out, nil
		})
	}
}

// names reads the positional package names of version and latest_version.
func names(in *function.Input) ([]string, error) {
	out := make([]string, 0, len(in.Extra))
	for i, a := range in.Extra {
		s, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("package %d: want a name, got %T", i+1, a)
		}
		out = append(out, s)
	}
	return out, nil
}

// version is Salt's pkg_resource.version.
func (m *Manager) version(ctx context.Context, in *function.Input) (any, error) {
	ns, err := names(in)
	if err != nil {
		return nil, err
	}
	asList := isTrue(in.ExtraKwargs["versions_as_list"])
	out := map[string]any{}
	glob := false
	if len(ns) > 0 {
		b, err := m.backend()
		if err != nil {
			return nil, err
		}
		installed, _, err := b.list(ctx)
		if err != nil {
			return nil, err
		}
		value := func(vs []string) any {
			if asList {
				l := make([]any, len(vs))
				for i, v := range vs {
					l[i] = v
				}
				return l
			}
			return strings.Join(vs, ",")
		}
		for _, n := range ns {
			if !strings.Contains(n, "*") {
				out[n] = value(installed[n])
				continue
			}
			glob = true
			g := fnmatch.Compile(n)
			for p, vs := range installed {
				if g.Match(p) {
					out[p] = value(vs)
				}
			}
		}
	}
	if len(out) == 1 && !glob {
		for _, v := range out {
			return v, nil
		}
	}
	return out, nil
}

func (m *Manager) listPkgs(ctx context.Context, in *function.Input) (any, error) {
	b, err := m.backend()
	if err != nil {
		return nil, err
	}
	installed, removed, err := b.list(ctx)
	if err != nil {
		return nil, err
	}
	pkgs := installed
	if in.Bool("removed") {
		pkgs = removed
	}
	out := make(map[string]any, len(pkgs))
	for n, vs := range pkgs {
		if in.Bool("versions_as_list") {
			l := make([]any, len(vs))
			for i, v := range vs {
				l[i] = v
			}
			out[n] = l
		} else {
			out[n] = strings.Join(vs, ",")
		}
	}
	return out, nil
}

func (m *Manager) latestVersion(ctx context.Context, in *function.Input) (any, error) {
	ns, err := names(in)
	if err != nil {
		return nil, err
	}
	if len(ns) == 0 {
		return "", nil
	}
	v, err := m.latest(ctx, ns, in.ExtraKwargs)
	if err != nil {
		return nil, err
	}
	if len(ns) == 1 {
		return v[ns[0]], nil
	}
	out := make(map[string]any, len(v))
	for n, s := range v {
		out[n] = s
	}
	return out, nil
}

// latest is Salt's latest_version for names: the candidate of each,
// unless an installed version is as new (show_installed: the candidate
// regardless). kwargs: refresh (default True), fromrepo, show_installed.
func (m *Manager) latest(ctx context.Context, ns []string, kwargs map[string]any) (map[string]string, error) {
	for _, n := range ns {
		if err := validName(n); err != nil {
			return nil, err
		}
	}
	refresh, ok := kwargs["refresh"]
	if !ok {
		refresh = true
	}
	fromrepo, _ := kwargs["fromrepo"].(string)
	showInstalled := isTrue(kwargs["show_installed"])
	b, err := m.backend()
	if err != nil {
		return nil, err
	}
	if isTrue(refresh) {
		if _, err := locked(ctx, func() (any, error) { return b.refresh(ctx, 0, false) }); err != nil {
			return nil, err
		}
	}
	installed, _, err := b.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ns))
	for _, n := range ns {
		cand, err := b.candidate(ctx, n, fromrepo)
		if err != nil {
			return nil, err
		}
		have := installed[n]
		switch {
		case len(have) == 0 || showInstalled:
			out[n] = cand
		case cand != "" && !slices.ContainsFunc(have, func(v string) bool { return b.compare(v, cand) >= 0 }):
			out[n] = cand
		default:
			out[n] = ""
		}
	}
	return out, nil
}

func (m *Manager) refreshDB(ctx context.Context, in *function.Input) (any, error) {
	b, err := m.backend()
	if err != nil {
		return nil, err
	}
	return locked(ctx, func() (any, error) { return b.refresh(ctx, in.Int("cache_valid_time"), in.Bool("failhard")) })
}

// versionCmp is Salt's pkg.version_cmp, which the pkg states compare an
// installed version with a wanted one (">=1.2") by.
func (m *Manager) versionCmp(_ context.Context, in *function.Input) (any, error) {
	b, err := m.backend()
	if err != nil {
		return nil, err
	}
	a, c := in.String("pkg1"), in.String("pkg2")
	if in.Bool("ignore_epoch") {
		a, c = withoutEpoch(a), withoutEpoch(c)
	}
	return int64(b.compare(a, c)), nil
}

// withoutEpoch drops a version's "N:" epoch.
func withoutEpoch(v string) string {
	if i := strings.IndexByte(v, ':'); i >= 0 {
		return v[i+1:]
	}
	return v
}
