//go:build linux

package pkg

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/brinehq/brine/modules/service"
)

// list_upgrades reads apt-get --just-print as Salt does: the output
// captured on Debian 12 gives exactly what salt-call --local
// pkg.list_upgrades refresh=False returned on the same machine.
func TestParseAptUpgradableMatchesSalt(t *testing.T) {
	out, err := os.ReadFile("testdata/apt-just-print-dist-upgrade.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/apt-just-print-dist-upgrade.salt.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	got := parseAptUpgradable(string(out))
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("parsed %d upgrades, Salt %d; differing: %v", len(got), len(want), mapDiff(got, want))
	}
}

func mapDiff(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, k+": "+v+" / "+b[k])
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			d = append(d, k+": - / "+v)
		}
	}
	return d
}

// upgrade's command lines, and its return: the changes between the
// package lists before and after.
func TestAptUpgradeCommands(t *testing.T) {
	before := "install ok installed zsh 5.9-4+b1 amd64\ninstall ok installed bash 5.2.15-2+b8 amd64\n"
	after := "install ok installed zsh 5.9-4+b1 amd64\ninstall ok installed bash 5.2.15-2+b13 amd64\ninstall ok installed libnew1 1.0-1 amd64\n"
	f := &fake{answers: map[string]service.Result{
		"dpkg --print-architecture": {Stdout: "amd64"},
		dpkgQuery:                   {Stdout: before},
		"apt-get --just-print dist-upgrade": {Stdout: "Inst bash [5.2.15-2+b8] (5.2.15-2+b13 Debian:12.15/oldstable [amd64])\n" +
			"Conf bash (5.2.15-2+b13 Debian:12.15/oldstable [amd64])\nConf libnew1:i386 (1.0-1 Debian:12.15/oldstable [i386])\n"},
		"apt-get --just-print upgrade -o APT::Default-Release=bookworm-backports": {Stdout: ""},
	}}
	upgrading := func(ctx context.Context, env []string, argv ...string) (service.Result, error) {
		res, err := f.run(ctx, env, argv...)
		if argv[0] == "apt-get" && (argv[len(argv)-1] == "upgrade" || argv[len(argv)-1] == "dist-upgrade") && argv[1] == "-q" && !slices.Contains(argv, "--download-only") {
			f.mu.Lock()
			f.answers[dpkgQuery] = service.Result{Stdout: after}
			f.mu.Unlock()
		}
		return res, err
	}
	c := caller(t, registry(t, &Manager{Run: upgrading, Backend: "apt"}))
	list := []string{"dpkg --print-architecture", dpkgQuery}
	for _, tc := range []struct {
		fun   string
		args  []any
		want  any
		calls []string
	}{
		{"pkg.list_upgrades", []any{map[string]any{"refresh": false}}, map[string]any{"bash": "5.2.15-2+b13", "libnew1:i386": "1.0-1"},
			[]string{"apt-get --just-print dist-upgrade"}},
		{"pkg.list_upgrades", []any{map[string]any{"refresh": false, "dist_upgrade": false, "fromrepo": "bookworm-backports"}}, map[string]any{},
			[]string{"apt-get --just-print upgrade -o APT::Default-Release=bookworm-backports"}},
		{"pkg.list_upgrades", nil, map[string]any{"bash": "5.2.15-2+b13", "libnew1:i386": "1.0-1"},
			[]string{"apt-get -q -o DPkg::Lock::Timeout=300 update", "apt-get --just-print dist-upgrade"}},
		{"pkg.upgrade", []any{map[string]any{"refresh": false}},
			map[string]any{"bash": map[string]any{"old": "5.2.15-2+b8", "new": "5.2.15-2+b13"}, "libnew1": map[string]any{"old": "", "new": "1.0-1"}},
			append(append(clone(list), aptPrefix+aptOpts+"upgrade"), list...)},
		{"pkg.upgrade", []any{map[string]any{"dist_upgrade": true, "force_conf_new": true, "download_only": true, "allow_downgrades": true, "skip_verify": true}},
			map[string]any{},
			append(append([]string{"apt-get -q -o DPkg::Lock::Timeout=300 update", "dpkg --print-architecture", dpkgQuery},
				aptPrefix+"-o DPkg::Options::=--force-confnew --allow-unauthenticated --download-only --allow-downgrades dist-upgrade"), list...)},
	} {
		got, err := c(tc.fun, tc.args...)
		calls := f.take()
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s%v = %#v, %v; want %#v", tc.fun, tc.args, got, err, tc.want)
		}
		if !reflect.DeepEqual(calls, tc.calls) {
			t.Errorf("%s%v ran\n  %s\nwant\n  %s", tc.fun, tc.args, strings.Join(calls, "\n  "), strings.Join(tc.calls, "\n  "))
		}
		f.answers[dpkgQuery] = service.Result{Stdout: before}
	}

	// A failed upgrade is Salt's error, with the changes made before it.
	f.answers[aptPrefix+aptOpts+"upgrade"] = service.Result{Code: 100, Stderr: "E: Sub-process /usr/bin/dpkg returned an error code (1)"}
	_, err := c("pkg.upgrade", map[string]any{"refresh": false})
	if err == nil || !strings.HasPrefix(err.Error(), "Problem encountered upgrading packages. Additional info follows:") ||
		!strings.Contains(err.Error(), "'bash': {'new': '5.2.15-2+b13', 'old': '5.2.15-2+b8'}") || !strings.Contains(err.Error(), "retcode: 100") {
		t.Errorf("failed upgrade: %v", err)
	}
	f.take()
	// apt upgrades every package: naming some is refused rather than
	// upgrading all of them behind the caller's back.
	if _, err := c("pkg.upgrade", map[string]any{"refresh": false, "pkgs": []any{"bash"}}); err == nil || !strings.Contains(err.Error(), "only_upgrade=True") {
		t.Errorf("upgrade(pkgs=[bash]) with apt: %v", err)
	}
	if calls := f.take(); len(calls) != 0 {
		t.Errorf("a refused upgrade ran %v", calls)
	}
	f.answers["apt-get --just-print dist-upgrade"] = service.Result{Code: 100, Stderr: "E: Could not open lock file"}
	if _, err := c("pkg.list_upgrades", map[string]any{"refresh": false}); err == nil || err.Error() != "Failed to get upgrades: E: Could not open lock file" {
		t.Errorf("failing list_upgrades: %v", err)
	}
}

// dnf's list upgrades output, wrapped where a name is long, read as
// Salt's _yum_pkginfo reads it.
func TestDnfUpgrades(t *testing.T) {
	out := "Available Upgrades\nbash.x86_64        5.2.26-4.fc40       updates\n" +
		"a-very-long-package-name-that-wraps.noarch\n                   1.2-3.fc40          updates\n" +
		"glibc.i686         2.39-5.fc40         updates\nwine.aarch64  2:9.2-1.fc40  updates\n"
	want := map[string]string{"bash": "5.2.26-4.fc40", "a-very-long-package-name-that-wraps": "1.2-3.fc40", "glibc": "2.39-5.fc40", "wine.aarch64": "2:9.2-1.fc40"}
	if got := parseDnfUpgradable(out, "x86_64"); !reflect.DeepEqual(got, want) {
		t.Errorf("parseDnfUpgradable = %v, want %v", got, want)
	}
	rpmQuery := "rpm -qa --queryformat " + rpmFormat
	f := &fake{answers: map[string]service.Result{
		"rpm --eval %{_arch}":                 {Stdout: "x86_64"},
		rpmQuery:                              {Stdout: "bash_|-(none)_|-5.2.26_|-3.fc40_|-x86_64\n"},
		"dnf --quiet list upgrades":           {Stdout: out},
		"dnf --quiet -y upgrade vim":          {},
		"dnf --quiet -y upgrade":              {},
		"dnf -y makecache":                    {},
		"dnf --quiet -y --nogpgcheck upgrade": {},
	}}
	c := caller(t, registry(t, &Manager{Run: f.run, Backend: "dnf"}))
	got, err := c("pkg.list_upgrades", map[string]any{"refresh": false})
	if err != nil || len(got.(map[string]any)) != 4 {
		t.Errorf("list_upgrades = %v, %v", got, err)
	}
	f.take()
	if _, err := c("pkg.upgrade", map[string]any{"name": "vim"}); err != nil {
		t.Fatal(err)
	}
	list := []string{"rpm --eval %{_arch}", rpmQuery}
	if calls, want := f.take(), append(append([]string{"dnf -y makecache"}, list...), append([]string{"dnf --quiet -y upgrade vim"}, list...)...); !reflect.DeepEqual(calls, want) {
		t.Errorf("upgrade(name=vim) ran\n  %s\nwant\n  %s", strings.Join(calls, "\n  "), strings.Join(want, "\n  "))
	}
}

// A real list_upgrades on this machine (no refresh: no network) agrees
// with latest_version for a package it lists.
func TestListUpgradesHere(t *testing.T) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Fatalf("TestListUpgradesHere needs Debian's apt-get: %v", err)
	}
	c := caller(t, registry(t, &Manager{}))
	got, err := c("pkg.list_upgrades", map[string]any{"refresh": false})
	if err != nil {
		t.Fatal(err)
	}
	ups, ok := got.(map[string]any)
	if !ok {
		t.Fatalf("list_upgrades = %T, want a mapping", got)
	}
	installed, err := c("pkg.list_pkgs")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, v := range ups {
		if _, ok := installed.(map[string]any)[name]; !ok || checked == 2 {
			continue
		}
		latest, err := c("pkg.latest_version", name, map[string]any{"refresh": false})
		if err != nil || latest != v {
			t.Errorf("list_upgrades says %s %v; latest_version %v, %v", name, v, latest, err)
		}
		avail, err := c("pkg.upgrade_available", name, map[string]any{"refresh": false})
		if err != nil || avail != true {
			t.Errorf("upgrade_available(%s) = %v, %v; want True", name, avail, err)
		}
		checked++
	}
	t.Logf("%d upgrades listed, %d checked against latest_version", len(ups), checked)
}
