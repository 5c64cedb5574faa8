package pkg

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// aptEnv keeps apt and dpkg from asking anything, as Salt's DPKG_ENV_VARS:
// an agent has no terminal to answer on.
var aptEnv = []string{
	"APT_LISTBUGS_FRONTEND=none",
	"APT_LISTCHANGES_FRONTEND=none",
	"DEBIAN_FRONTEND=noninteractive",
	"UCF_FORCE_CONFFOLD=1",
}

// aptLockWait is how long apt waits for another process's dpkg lock
// (unattended-upgrades runs daily) before failing.
const aptLockWait = "DPkg::Lock::Timeout=300"

// aptListsPaths are what refresh_db's cache_valid_time measures the age
// of: the lists directory changes only when a list did (Salt reads only
// it), partial/ at every apt-get update.
var aptListsPaths = []string{"/var/lib/apt/lists", "/var/lib/apt/lists/partial"}

// apt is the backend of Debian and its derivatives.
type apt struct{ m *Manager }

func (a apt) list(ctx context.Context) (installed, removed map[string][]string, err error) {
	arch, err := a.m.run(ctx, nil, "dpkg", "--print-architecture")
	if err != nil {
		return nil, nil, err
	}
	res, err := a.m.run(ctx, nil, "dpkg-query", "--showformat", "${Status} ${Package} ${Version} ${Architecture}\n", "-W")
	if err != nil {
		return nil, nil, err
	}
	// dpkg-query exits 1 when some listed package is unknown; with no
	// name given that does not happen, and output is what counts.
	if res.Code != 0 && res.Stdout == "" {
		return nil, nil, fmt.Errorf("dpkg-query: %s", res.Stderr)
	}
	installed, removed = map[string][]string{}, map[string][]string{}
	for line := range strings.SplitSeq(res.Stdout, "\n") {
		// "install ok installed zsh 5.9-4+b1 amd64"
		// "deinstall ok config-files mc 3:4.8.29-2 amd64"
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		want, state, name, version, pkgArch := f[0], f[2], f[3], f[4], f[5]
		// A package of another architecture is name:arch, as Salt shows it.
		if pkgArch != "all" && pkgArch != arch.Stdout {
			name += ":" + pkgArch
		}
		switch {
		case (want == "install" || want == "hold") && state == "installed":
			installed[name] = append(installed[name], version)
		case want == "deinstall":
			removed[name] = append(removed[name], version)
		case want == "purge" && state == "installed":
			// Marked for purge but still needed: still installed.
			installed[name] = append(installed[name], version)
		}
	}
	return installed, removed, nil
}

// aptGet is apt-get's command line with the options every call takes.
func aptGet(args ...string) []string {
	return append([]string{"apt-get", "-q", "-y", "-o", aptLockWait}, args...)
}

func (a apt) install(ctx context.Context, specs []spec, installed map[string][]string, o installOpts) error {
	args := []string{"-o", "DPkg::Options::=--force-confold", "-o", "DPkg::Options::=--force-confdef"}
	var pkgs []string
	downgrade := false
	for _, s := range specs {
		if s.version == "" {
			pkgs = append(pkgs, s.name)
			continue
		}
		for _, v := range installed[s.name] {
			if a.compare(s.version, v) < 0 {
				downgrade = true
			}
		}
		pkgs = append(pkgs, s.name+"="+s.version)
	}
	args = appendIf(args, downgrade, "--allow-downgrades")
	args = appendIf(args, !o.installRecommends, "--no-install-recommends")
	args = appendIf(args, o.upgrade, "--only-upgrade")
	args = appendIf(args, o.skipVerify, "--allow-unauthenticated")
	args = appendIf(args, o.reinstall, "--reinstall")
	args = appendIf(args, o.fromrepo != "", "-t", o.fromrepo)
	args = append(append(args, "install"), pkgs...)
	res, err := a.m.run(ctx, aptEnv, aptGet(args...)...)
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return problem("installing", res)
	}
	return nil
}

func (a apt) remove(ctx context.Context, names []string, purge bool) error {
	action := "remove"
	if purge {
		action = "purge"
	}
	res, err := a.m.run(ctx, aptEnv, aptGet(append([]string{action}, names...)...)...)
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return problem("removing", res)
	}
	return nil
}

func (a apt) candidate(ctx context.Context, name, fromrepo string) (string, error) {
	argv := []string{"apt-cache", "-q", "policy", name}
	if fromrepo != "" {
		argv = append(argv, "-o", "APT::Default-Release="+fromrepo)
	}
	res, err := a.m.run(ctx, nil, argv...)
	if err != nil {
		return "", err
	}
	var cand string
	for line := range strings.SplitSeq(res.Stdout, "\n") {
		if f := strings.Fields(line); strings.Contains(line, "Candidate") && len(f) >= 2 {
			cand = f[len(f)-1]
		}
	}
	if strings.EqualFold(cand, "(none)") {
		cand = ""
	}
	return cand, nil
}

// getSize is the download size apt-get update prints after a Get line.
var getSize = regexp.MustCompile(` \[.+B\]$`)

// refresh runs apt-get update and reads its report as Salt does: a source
// fetched (Get) is True, unchanged (Hit) None, ignored or failed (Ign,
// Err) False.
func (a apt) refresh(ctx context.Context, cacheValidTime int64, failhard bool) (any, error) {
	out := map[string]any{}
	if cacheValidTime > 0 {
		for _, p := range aptListsPaths {
			if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) < time.Duration(cacheValidTime)*time.Second {
				return out, nil
			}
		}
	}
	res, err := a.m.run(ctx, aptEnv, "apt-get", "-q", "-o", aptLockWait, "update")
	if err != nil {
		return nil, err
	}
	if res.Code != 0 {
		return nil, saltError(res.Stderr)
	}
	var failed []string
	for line := range strings.SplitSeq(res.Stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		ident := strings.Join(f[1:], " ")
		switch {
		case strings.Contains(f[0], "Get"):
			out[getSize.ReplaceAllString(ident, "")] = true
		case strings.Contains(f[0], "Ign"):
			out[ident] = false
		case strings.Contains(f[0], "Hit"):
			out[ident] = nil
		case strings.Contains(f[0], "Err"):
			out[ident] = false
			failed = append(failed, ident)
		}
	}
	if failhard && len(failed) > 0 {
		return nil, saltError("Error getting repos: " + strings.Join(failed, ", "))
	}
	return out, nil
}

func (apt) compare(a, b string) int { return compareDeb(a, b) }

// appendIf is args with more after them when on: apt-get's switches
// that an option turns on, one line each in Salt's order.
func appendIf(args []string, on bool, more ...string) []string {
	if on {
		return append(args, more...)
	}
	return args
}
