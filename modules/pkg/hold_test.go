//go:build linux

package pkg

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/internal/testlock"
	"github.com/brinehq/brine/modules/service"
)

// holdPkg is a package every Debian has (Essential), held and released
// by TestHoldHere.
const holdPkg = "base-files"

// pkg.hold and pkg.unhold on this machine: the returns salt-call --local
// gave for zip on Debian 12 (names aside), and dpkg's selection changing.
func TestHoldHere(t *testing.T) {
	testlock.Hold(t, "apt")
	testenv.NeedRoot(t, "TestHoldHere holds a Debian package: run the tests as root (CI does)")
	if _, err := exec.LookPath("apt-mark"); err != nil {
		t.Fatalf("TestHoldHere needs Debian's apt-mark: %v", err)
	}
	t.Cleanup(func() { _ = exec.Command("apt-mark", "unhold", holdPkg).Run() })
	c := caller(t, registry(t, &Manager{}))
	selection := func() string {
		out, _ := exec.Command("dpkg", "--get-selections", holdPkg).Output()
		f := strings.Fields(string(out))
		if len(f) != 2 {
			t.Fatalf("dpkg --get-selections %s: %q", holdPkg, out)
		}
		return f[1]
	}
	entry := func(changes map[string]any, comment string) map[string]any {
		return map[string]any{holdPkg: map[string]any{"name": holdPkg, "changes": changes, "result": true, "comment": comment}}
	}
	for _, tc := range []struct {
		fun       string
		want      map[string]any
		selection string
	}{
		{"pkg.hold", entry(map[string]any{"old": "install", "new": "hold"}, "Package base-files is now being held."), "hold"},
		{"pkg.hold", entry(map[string]any{}, "Package base-files is already set to be held."), "hold"},
		{"pkg.unhold", entry(map[string]any{"old": "hold", "new": "install"}, "Package base-files is no longer being held."), "install"},
		{"pkg.unhold", entry(map[string]any{}, "Package base-files is already set not to be held."), "install"},
	} {
		got, err := c(tc.fun, holdPkg)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s = %#v, %v; want %#v", tc.fun, holdPkg, got, err, tc.want)
		}
		if s := selection(); s != tc.selection {
			t.Errorf("after %s, dpkg's selection of %s is %s, want %s", tc.fun, holdPkg, s, tc.selection)
		}
	}
	got, err := c("pkg.get_selections", map[string]any{"pattern": holdPkg})
	if err != nil || !reflect.DeepEqual(got, map[string]any{"install": []any{holdPkg}}) {
		t.Errorf("get_selections %s = %v, %v", holdPkg, got, err)
	}
	// Salt reports a package dpkg does not know as held; brine says so.
	if _, err := c("pkg.hold", "nosuchpkg-brine"); err == nil || !strings.Contains(err.Error(), "neither installed nor known to dpkg") {
		t.Errorf("hold of an unknown package: %v", err)
	}
}

// The command lines, test=True and the arguments' checks.
func TestHoldCommands(t *testing.T) {
	f := &fake{answers: map[string]service.Result{
		"dpkg --get-selections zsh":  {Stdout: "zsh\t\t\tinstall\n"},
		"dpkg --get-selections curl": {Stdout: "curl\t\t\thold\n"},
	}}
	c := caller(t, registry(t, &Manager{Run: f.run, Backend: "apt"}))
	got, err := c("pkg.hold", map[string]any{"pkgs": []any{"zsh", map[string]any{"curl": "8.0"}}, "test": true})
	want := map[string]any{
		"zsh":  map[string]any{"name": "zsh", "changes": map[string]any{}, "result": nil, "comment": "Package zsh is set to be held."},
		"curl": map[string]any{"name": "curl", "changes": map[string]any{}, "result": true, "comment": "Package curl is already set to be held."},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("hold test=True = %#v, %v", got, err)
	}
	if calls := f.take(); !reflect.DeepEqual(calls, []string{"dpkg --get-selections zsh", "dpkg --get-selections curl"}) {
		t.Errorf("hold test=True ran %v", calls)
	}
	if _, err := c("pkg.unhold", "curl"); err != nil {
		t.Fatal(err)
	}
	if calls := f.take(); !reflect.DeepEqual(calls, []string{"dpkg --get-selections curl", "apt-mark unhold curl"}) {
		t.Errorf("unhold ran %v", calls)
	}
	for _, tc := range []struct {
		kwargs map[string]any
		want   string
	}{
		{map[string]any{}, "One of name, pkgs, or sources must be specified."},
		{map[string]any{"pkgs": []any{"a"}, "sources": []any{map[string]any{"a": "salt://a.deb"}}}, "Only one of pkgs or sources can be specified."},
		{map[string]any{"name": "-o"}, "invalid package name"},
	} {
		if _, err := c("pkg.hold", tc.kwargs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("hold %v: %v, want %q", tc.kwargs, err, tc.want)
		}
	}
	d := caller(t, registry(t, &Manager{Run: f.run, Backend: "dnf"}))
	if _, err := d("pkg.hold", "zsh"); err == nil || !strings.Contains(err.Error(), "versionlock") {
		t.Errorf("hold with dnf: %v", err)
	}
}
