package pkg

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules/service"
)

// upgradeOpts are upgrade's arguments the backends use.
type upgradeOpts struct {
	dist, forceConfNew, forceYes, skipVerify, downloadOnly, allowDowngrades bool
	fromrepo                                                                string
	// names limits dnf's upgrade to these packages (apt upgrades all).
	names []string
}

// upgrader is what upgrade and list_upgrades need of a backend.
type upgrader interface {
	// upgradable is {name: candidate version} of the packages an upgrade
	// (dist: a dist-upgrade) would bring.
	upgradable(ctx context.Context, dist bool, fromrepo string) (map[string]string, error)
	// upgrade upgrades the installed packages; the result is the package
	// manager's.
	upgrade(ctx context.Context, o upgradeOpts) (service.Result, error)
}

// upgradeFuncs declares pkg.upgrade and pkg.list_upgrades.
func (m *Manager) upgradeFuncs() []function.Func {
	refresh := function.Param{Name: "refresh", Kind: function.Bool, Default: true}
	return []function.Func{
		{Name: "pkg.upgrade", Doc: "Upgrade every installed package (apt-get upgrade, or dist-upgrade with dist_upgrade=True; dnf upgrade, of name or pkgs only when given), refreshing the package lists first unless refresh=False: {name: {old, new}} of what changed. Keywords: cache_valid_time, force_conf_new, force_yes, skip_verify, download_only, allow_downgrades, fromrepo.",
			Params: []function.Param{refresh,
				{Name: "dist_upgrade", Kind: function.Bool, Default: false},
			},
			VarKwargs: true, Run: m.upgrade},
		{Name: "pkg.list_upgrades", Doc: "The packages an upgrade would bring, {name: version} (apt: of a dist-upgrade unless dist_upgrade=False), refreshing the package lists first unless refresh=False.",
			Params: []function.Param{refresh,
				{Name: "dist_upgrade", Kind: function.Bool, Default: true},
			},
			VarKwargs: true, Run: m.listUpgrades},
	}
}

// refreshFirst refreshes the package lists as upgrade and list_upgrades
// do with refresh=True (cache_valid_time: unless they are that recent).
func (m *Manager) refreshFirst(ctx context.Context, b backend, in *function.Input) error {
	if !in.Bool("refresh") {
		return nil
	}
	var valid int64
	if v, ok := in.ExtraKwargs["cache_valid_time"]; ok {
		n, err := toInt(v)
		if err != nil {
			return fmt.Errorf("cache_valid_time: %w", err)
		}
		valid = n
	}
	_, err := b.refresh(ctx, valid, false)
	return err
}

func toInt(v any) (int64, error) {
	switch t := v.(type) {
	case int64:
		return t, nil
	case float64:
		return int64(t), nil
	case string:
		var n int64
		if _, err := fmt.Sscan(t, &n); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("want a number of seconds, got %v", v)
}

func (m *Manager) listUpgrades(ctx context.Context, in *function.Input) (any, error) {
	b, err := m.backend()
	if err != nil {
		return nil, err
	}
	up, ok := b.(upgrader)
	if !ok {
		return nil, fmt.Errorf("pkg.list_upgrades is not supported with this package manager")
	}
	fromrepo, _ := in.ExtraKwargs["fromrepo"].(string)
	return locked(ctx, func() (any, error) {
		if err := m.refreshFirst(ctx, b, in); err != nil {
			return nil, err
		}
		list, err := up.upgradable(ctx, in.Bool("dist_upgrade"), fromrepo)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(list))
		for n, v := range list {
			out[n] = v
		}
		return out, nil
	})
}

func (m *Manager) upgrade(ctx context.Context, in *function.Input) (any, error) {
	b, err := m.backend()
	if err != nil {
		return nil, err
	}
	up, ok := b.(upgrader)
	if !ok {
		return nil, fmt.Errorf("pkg.upgrade is not supported with this package manager")
	}
	kw := in.ExtraKwargs
	o := upgradeOpts{
		dist: in.Bool("dist_upgrade"), forceConfNew: isTrue(kw["force_conf_new"]), forceYes: isTrue(kw["force_yes"]),
		skipVerify: isTrue(kw["skip_verify"]), downloadOnly: isTrue(kw["download_only"]) || isTrue(kw["downloadonly"]),
		allowDowngrades: isTrue(kw["allow_downgrades"]),
	}
	o.fromrepo, _ = kw["fromrepo"].(string)
	name, _ := kw["name"].(string)
	pkgs, _ := kw["pkgs"].([]any)
	specs, err := targets(name, pkgs, "")
	if err != nil {
		return nil, err
	}
	for _, s := range specs {
		o.names = append(o.names, s.name)
	}
	if _, isApt := b.(apt); isApt && len(o.names) > 0 {
		// Salt's aptpkg.upgrade has no name or pkgs: it upgrades all.
		return nil, fmt.Errorf("pkg.upgrade with apt upgrades every package; to upgrade %s, use pkg.install with only_upgrade=True", strings.Join(o.names, ", "))
	}
	return locked(ctx, func() (any, error) {
		if err := m.refreshFirst(ctx, b, in); err != nil {
			return nil, err
		}
		old, _, err := b.list(ctx)
		if err != nil {
			return nil, err
		}
		res, err := up.upgrade(ctx, o)
		if err != nil {
			return nil, err
		}
		now, _, err := b.list(ctx)
		if err != nil {
			return nil, err
		}
		ch := changes(flat(old), flat(now))
		if res.Code != 0 {
			return nil, upgradeProblem(ch, res)
		}
		return ch, nil
	})
}

// upgradeProblem is Salt's error for a failed upgrade, with the changes
// it made before failing and the package manager's result in its info.
func upgradeProblem(ch map[string]any, res service.Result) error {
	return saltError(fmt.Sprintf("Problem encountered upgrading packages. Additional info follows:\n\nchanges:\n    %s\nresult:\n    retcode: %d\n    stderr: %s\n    stdout: %s",
		py.ReprValue(ch), res.Code, indentMore(res.Stderr), indentMore(res.Stdout)))
}

func indentMore(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n        ")
}

// aptConf is apt-get --just-print's line for a package it would
// configure: "Conf libxfont1 (1:1.4.5-1 Debian:testing [i386])".
var aptConf = regexp.MustCompile(`(?m)^Conf ([^ ]+) \(([^ ]+)`)

// parseAptUpgradable reads apt-get --just-print's output as Salt's
// _get_upgradable: the name and version of every Conf line.
func parseAptUpgradable(out string) map[string]string {
	list := map[string]string{}
	for _, m := range aptConf.FindAllStringSubmatch(out, -1) {
		list[m[1]] = m[2]
	}
	return list
}

func (a apt) upgradable(ctx context.Context, dist bool, fromrepo string) (map[string]string, error) {
	argv := []string{"apt-get", "--just-print", "upgrade"}
	if dist {
		argv[2] = "dist-upgrade"
	}
	if fromrepo != "" {
		argv = append(argv, "-o", "APT::Default-Release="+fromrepo)
	}
	res, err := a.m.run(ctx, aptEnv, argv...)
	if err != nil {
		return nil, err
	}
	if res.Code != 0 {
		msg := "Failed to get upgrades"
		if res.Stderr != "" {
			msg += ": " + res.Stderr
		} else if res.Stdout != "" {
			msg += ": " + res.Stdout
		}
		return nil, saltError(msg)
	}
	return parseAptUpgradable(res.Stdout), nil
}

func (a apt) upgrade(ctx context.Context, o upgradeOpts) (service.Result, error) {
	args := []string{"-o", "DPkg::Options::=--force-confold", "-o", "DPkg::Options::=--force-confdef"}
	if o.forceConfNew {
		args = []string{"-o", "DPkg::Options::=--force-confnew"}
	}
	args = appendIf(args, o.forceYes, "--force-yes")
	args = appendIf(args, o.skipVerify, "--allow-unauthenticated")
	args = appendIf(args, o.downloadOnly, "--download-only")
	args = appendIf(args, o.allowDowngrades, "--allow-downgrades")
	if o.dist {
		args = append(args, "dist-upgrade")
	} else {
		args = append(args, "upgrade")
	}
	return a.m.run(ctx, aptEnv, aptGet(args...)...)
}

// parseDnfUpgradable reads `dnf --quiet list upgrades` as Salt's
// _yum_pkginfo: after the header, name.arch, version and repository, three
// words at a time whatever the line breaks (long names wrap).
func parseDnfUpgradable(out, osArch string) map[string]string {
	var words []string
	for line := range strings.SplitSeq(out, "\n") {
		// Salt's _strip_headers drops the header lines.
		switch strings.ToLower(line) {
		case "installed packages", "available packages", "available upgrades", "updated packages", "upgraded packages":
			continue
		}
		words = append(words, strings.Fields(line)...)
	}
	list := map[string]string{}
	for i := 0; i+2 < len(words); i += 3 {
		name, version := words[i], strings.TrimRight(words[i+1], "-")
		if n, arch, ok := cutLast(name, "."); ok && !foreignArch(arch, osArch) {
			name = n
		}
		list[name] = version
	}
	return list
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func (d dnf) upgradable(ctx context.Context, _ bool, fromrepo string) (map[string]string, error) {
	arch, err := d.m.run(ctx, nil, "rpm", "--eval", "%{_arch}")
	if err != nil {
		return nil, err
	}
	argv := append([]string{"dnf", "--quiet"}, repoArgs(fromrepo)...)
	res, err := d.m.run(ctx, nil, append(argv, "list", "upgrades")...)
	if err != nil {
		return nil, err
	}
	if res.Code != 0 && strings.Contains(res.Stderr+res.Stdout, "Error:") {
		return map[string]string{}, nil
	}
	return parseDnfUpgradable(res.Stdout, strings.TrimSpace(arch.Stdout)), nil
}

func (d dnf) upgrade(ctx context.Context, o upgradeOpts) (service.Result, error) {
	argv := append([]string{"dnf", "--quiet", "-y"}, repoArgs(o.fromrepo)...)
	if o.skipVerify {
		argv = append(argv, "--nogpgcheck")
	}
	if o.downloadOnly {
		argv = append(argv, "--downloadonly")
	}
	return d.m.run(ctx, nil, append(append(argv, "upgrade"), o.names...)...)
}
