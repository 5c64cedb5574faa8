package pkg

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// rpmFormat is rpm's line per package, with Salt's separator (no package
// field can hold it).
const rpmFormat = "%{NAME}_|-%{EPOCH}_|-%{VERSION}_|-%{RELEASE}_|-%{ARCH}\n"

// dnf is the backend of Fedora, RHEL and their derivatives.
type dnf struct{ m *Manager }

func (d dnf) list(ctx context.Context) (installed, removed map[string][]string, err error) {
	arch, err := d.m.run(ctx, nil, "rpm", "--eval", "%{_arch}")
	if err != nil {
		return nil, nil, err
	}
	res, err := d.m.run(ctx, nil, "rpm", "-qa", "--queryformat", rpmFormat)
	if err != nil {
		return nil, nil, err
	}
	if res.Code != 0 {
		return nil, nil, fmt.Errorf("rpm -qa: %s", res.Stderr)
	}
	installed = map[string][]string{}
	for line := range strings.SplitSeq(res.Stdout, "\n") {
		f := strings.Split(strings.TrimSpace(line), "_|-")
		if len(f) != 5 {
			continue
		}
		name, epoch, version, release, pkgArch := f[0], f[1], f[2], f[3], f[4]
		if name == "gpg-pubkey" {
			continue // imported signing keys, not packages
		}
		v := version + "-" + release
		if epoch != "" && epoch != "(none)" && epoch != "0" {
			v = epoch + ":" + v
		}
		if foreignArch(pkgArch, arch.Stdout) {
			name += "." + pkgArch
		}
		installed[name] = append(installed[name], v)
	}
	// rpm keeps no configuration of removed packages.
	return installed, map[string][]string{}, nil
}

// foreignArch is Salt's rule for naming a package name.arch: neither
// noarch, nor the machine's, nor 32-bit x86 on 64-bit x86.
func foreignArch(pkgArch, osArch string) bool {
	switch {
	case pkgArch == "noarch" || pkgArch == osArch:
		return false
	case osArch == "x86_64" && slices.Contains([]string{"i386", "i486", "i586", "i686"}, pkgArch):
		return false
	}
	return true
}

// repoArgs limit dnf to fromrepo, as Salt's fromrepo does.
func repoArgs(fromrepo string) []string {
	if fromrepo == "" {
		return nil
	}
	return []string{"--disablerepo=*", "--enablerepo=" + fromrepo}
}

// install runs dnf once per kind of change, as Salt's yumpkg: install
// (or upgrade), downgrade, reinstall.
func (d dnf) install(ctx context.Context, specs []spec, installed map[string][]string, o installOpts) error {
	groups := map[string][]string{}
	var order []string
	add := func(action, pkg string) {
		if _, ok := groups[action]; !ok {
			order = append(order, action)
		}
		groups[action] = append(groups[action], pkg)
	}
	for _, s := range specs {
		pkg := s.name
		if s.version != "" {
			pkg += "-" + s.version
		}
		have := installed[s.name]
		switch {
		case o.reinstall && len(have) > 0 && (s.version == "" || slices.ContainsFunc(have, func(v string) bool { return d.compare(v, s.version) == 0 })):
			add("reinstall", pkg)
		case s.version != "" && slices.ContainsFunc(have, func(v string) bool { return d.compare(s.version, v) < 0 }):
			add("downgrade", pkg)
		case o.upgrade:
			add("upgrade", pkg)
		default:
			add("install", pkg)
		}
	}
	for _, action := range order {
		argv := []string{"dnf", "-y"}
		argv = append(argv, repoArgs(o.fromrepo)...)
		if o.skipVerify {
			argv = append(argv, "--nogpgcheck")
		}
		if !o.installRecommends {
			argv = append(argv, "--setopt=install_weak_deps=False")
		}
		argv = append(append(argv, action), groups[action]...)
		res, err := d.m.run(ctx, nil, argv...)
		if err != nil {
			return err
		}
		if res.Code != 0 {
			return problem("installing", res)
		}
	}
	return nil
}

func (d dnf) remove(ctx context.Context, names []string, _ bool) error {
	res, err := d.m.run(ctx, nil, append([]string{"dnf", "-y", "remove"}, names...)...)
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return problem("removing", res)
	}
	return nil
}

func (d dnf) candidate(ctx context.Context, name, fromrepo string) (string, error) {
	argv := append([]string{"dnf", "-q"}, repoArgs(fromrepo)...)
	argv = append(argv, "repoquery", "--available", "--latest-limit", "1", "--queryformat", "%{epoch}:%{version}-%{release}\n", name)
	res, err := d.m.run(ctx, nil, argv...)
	if err != nil {
		return "", err
	}
	var best string
	for line := range strings.SplitSeq(res.Stdout, "\n") {
		v := strings.TrimPrefix(strings.TrimSpace(line), "0:")
		if v != "" && (best == "" || d.compare(v, best) > 0) {
			best = v
		}
	}
	return best, nil
}

// refresh refreshes dnf's metadata; Salt's yumpkg returns True.
func (d dnf) refresh(ctx context.Context, _ int64, _ bool) (any, error) {
	res, err := d.m.run(ctx, nil, "dnf", "-y", "makecache")
	if err != nil {
		return nil, err
	}
	if res.Code != 0 {
		return nil, saltError(strings.TrimSpace(res.Stderr + "\n" + res.Stdout))
	}
	return true, nil
}

func (dnf) compare(a, b string) int { return compareRPM(a, b) }
