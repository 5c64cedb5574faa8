//go:build linux

package pkg

import (
	"context"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/internal/testlock"
	"github.com/brinehq/brine/modules/service"
)

// registry returns m's functions, ready to call.
func registry(t *testing.T, m *Manager) *function.Registry {
	t.Helper()
	reg := function.New()
	if err := reg.RegisterAll(m.Funcs()); err != nil {
		t.Fatal(err)
	}
	return reg
}

// caller calls one function: positional arguments, then a map of keyword
// arguments if the last one is a map[string]any.
func caller(t *testing.T, reg *function.Registry) func(name string, args ...any) (any, error) {
	return func(name string, args ...any) (any, error) {
		t.Helper()
		var kwargs map[string]any
		if n := len(args); n > 0 {
			if kw, ok := args[n-1].(map[string]any); ok {
				kwargs, args = kw, args[:n-1]
			}
		}
		return reg.Call(context.Background(), name, args, kwargs, nil)
	}
}

// testPkg is a small real package with no dependency beyond libc.
const testPkg = "hello"

// TestApt installs and removes a real package through apt, checking
// list_pkgs, version, latest_version and upgrade_available around it.
func TestApt(t *testing.T) {
	// Other packages' tests install packages too: one at a time, or each
	// sees the other's installs in its package lists.
	testlock.Hold(t, "apt")
	testenv.NeedRoot(t, "TestApt installs and removes a Debian package: run the tests as root (CI does)")
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg-query"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("TestApt needs Debian's %s: %v", tool, err)
		}
	}
	m := &Manager{Backend: "apt"}
	c := caller(t, registry(t, m))
	call := func(name string, args ...any) any {
		t.Helper()
		out, err := c(name, args...)
		if err != nil {
			t.Fatalf("%s%v: %v", name, args, err)
		}
		return out
	}
	noRefresh := map[string]any{"refresh": false}

	// Start from a machine without the package, and leave it as found.
	if v := call("pkg.version", testPkg); v != "" {
		t.Logf("%s %v is installed: removing it for the test, reinstalling after", testPkg, v)
		call("pkg.remove", testPkg)
		t.Cleanup(func() { _, _ = c("pkg.install", testPkg) })
	} else {
		t.Cleanup(func() { _, _ = c("pkg.purge", testPkg) })
	}

	db, ok := call("pkg.refresh_db").(map[string]any)
	if !ok || len(db) == 0 {
		t.Fatalf("refresh_db = %#v, want {source: True/None/False}", db)
	}
	for src, v := range db {
		if v != nil && v != true && v != false {
			t.Errorf("refresh_db[%q] = %#v", src, v)
		}
	}
	if got := call("pkg.refresh_db", map[string]any{"cache_valid_time": 3600}); !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("refresh_db(cache_valid_time=3600) right after one = %#v, want {}", got)
	}

	candidate, _ := call("pkg.latest_version", testPkg, noRefresh).(string)
	if candidate == "" {
		t.Fatalf("latest_version(%s) = \"\": apt has no candidate; is the package in the sources?", testPkg)
	}
	if got := call("pkg.upgrade_available", testPkg, noRefresh); got != true {
		t.Errorf("upgrade_available of a package not installed = %v, want True", got)
	}
	if got := call("pkg.version", testPkg); got != "" {
		t.Fatalf("version before install = %#v", got)
	}
	if _, ok := call("pkg.list_pkgs").(map[string]any)[testPkg]; ok {
		t.Fatalf("list_pkgs has %s before install", testPkg)
	}

	got := call("pkg.install", testPkg)
	want := map[string]any{testPkg: map[string]any{"old": "", "new": candidate}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("install = %#v, want %#v", got, want)
	}
	if got := call("pkg.version", testPkg); got != candidate {
		t.Errorf("version after install = %#v, want %q", got, candidate)
	}
	if got := call("pkg.version", testPkg, "brine-no-such-package"); !reflect.DeepEqual(got, map[string]any{testPkg: candidate, "brine-no-such-package": ""}) {
		t.Errorf("version of two = %#v", got)
	}
	if got := call("pkg.version", testPkg[:3]+"l*"); !reflect.DeepEqual(got, map[string]any{testPkg: candidate}) {
		t.Errorf("version of a glob = %#v", got)
	}
	if got := call("pkg.version", testPkg, map[string]any{"versions_as_list": true}); !reflect.DeepEqual(got, []any{candidate}) {
		t.Errorf("version(versions_as_list=True) = %#v", got)
	}
	if got := call("pkg.list_pkgs").(map[string]any)[testPkg]; got != candidate {
		t.Errorf("list_pkgs[%s] = %#v, want %q", testPkg, got, candidate)
	}
	if got := call("pkg.list_pkgs", map[string]any{"versions_as_list": true}).(map[string]any)["dpkg"]; reflect.TypeOf(got) != reflect.TypeOf([]any{}) {
		t.Errorf("list_pkgs(versions_as_list=True)[dpkg] = %#v, want a list", got)
	}
	if got := call("pkg.latest_version", testPkg, noRefresh); got != "" {
		t.Errorf("latest_version of the latest installed = %#v, want \"\"", got)
	}
	if got := call("pkg.latest_version", testPkg, "dpkg", noRefresh); !reflect.DeepEqual(got, map[string]any{testPkg: "", "dpkg": ""}) {
		t.Logf("latest_version of two = %#v (dpkg may have an upgrade)", got)
	}
	if got := call("pkg.upgrade_available", testPkg, noRefresh); got != false {
		t.Errorf("upgrade_available of the latest installed = %v", got)
	}
	if got := call("pkg.install", testPkg); !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("install of an installed package = %#v, want {}", got)
	}

	_, err := c("pkg.install", "brine-no-such-package")
	if err == nil || !strings.Contains(err.Error(), "Problem encountered installing package(s)") ||
		!strings.Contains(err.Error(), "Unable to locate package brine-no-such-package") {
		t.Errorf("install of a missing package: error %v, want Salt's with apt's reason", err)
	}
	var se saltError
	if !errors.As(err, &se) {
		t.Errorf("install error %T is not Salt's", err)
	}

	got = call("pkg.remove", testPkg)
	want = map[string]any{testPkg: map[string]any{"old": candidate, "new": ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("remove = %#v, want %#v", got, want)
	}
	if got := call("pkg.version", testPkg); got != "" {
		t.Errorf("version after remove = %#v", got)
	}
	if got := call("pkg.remove", testPkg); !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("remove of a removed package = %#v, want {}", got)
	}

	// pkgs= form, then purge.
	got = call("pkg.install", map[string]any{"pkgs": []any{map[string]any{testPkg: candidate}}})
	if !reflect.DeepEqual(got, map[string]any{testPkg: map[string]any{"old": "", "new": candidate}}) {
		t.Errorf("install(pkgs=[{%s: %s}]) = %#v", testPkg, candidate, got)
	}
	got = call("pkg.purge", map[string]any{"pkgs": []any{testPkg}})
	if !reflect.DeepEqual(got, map[string]any{testPkg: map[string]any{"old": candidate, "new": ""}}) {
		t.Errorf("purge = %#v", got)
	}
}

// fake answers commands from a table keyed by the command line, and
// records them with their environment.
type fake struct {
	mu      sync.Mutex
	answers map[string]service.Result
	calls   []string
	env     [][]string
}

func (f *fake) run(_ context.Context, env []string, argv ...string) (service.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	line := strings.Join(argv, " ")
	f.calls = append(f.calls, line)
	f.env = append(f.env, env)
	return f.answers[line], nil
}

func (f *fake) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls, f.env = nil, nil
	return c
}

const (
	dpkgQuery = "dpkg-query --showformat ${Status} ${Package} ${Version} ${Architecture}\n -W"
	aptPrefix = "apt-get -q -y -o DPkg::Lock::Timeout=300 "
	aptOpts   = "-o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef "
)

// TestAptCommands checks apt's command lines and how their output is read.
func TestAptCommands(t *testing.T) {
	f := &fake{answers: map[string]service.Result{
		"dpkg --print-architecture": {Stdout: "amd64"},
		dpkgQuery: {Stdout: strings.Join([]string{
			"install ok installed zsh 5.9-4+b1 amd64",
			"install ok installed libc6 2.36-9 amd64",
			"install ok installed libc6 2.36-9 i386",
			"hold ok installed tzdata 2024a-0 all",
			"deinstall ok config-files mc 3:4.8.29-2 amd64",
			"install ok half-configured broken 1.0 amd64",
			"purge ok installed needed 2.0 amd64",
			"garbage",
		}, "\n")},
		"apt-cache -q policy zsh": {Stdout: "zsh:\n  Installed: 5.9-4+b1\n  Candidate: 5.9-4+b2\n  Version table:"},
		"apt-cache -q policy tzdata -o APT::Default-Release=bookworm-backports": {Stdout: "tzdata:\n  Installed: 2024a-0\n  Candidate: 2024a-0"},
		"apt-cache -q policy virtual":                                           {Stdout: "virtual:\n  Installed: (none)\n  Candidate: (none)"},
		"apt-get -q -o DPkg::Lock::Timeout=300 update": {Stdout: strings.Join([]string{
			"Hit:1 http://deb.debian.org/debian bookworm InRelease",
			"Get:2 http://deb.debian.org/debian bookworm-updates InRelease [55.4 kB]",
			"Ign:3 http://example.org/repo stable InRelease",
			"Err:4 http://example.org/other stable InRelease",
			"Fetched 55.4 kB in 1s (60.2 kB/s)",
			"Reading package lists...",
		}, "\n")},
	}}
	m := &Manager{Run: f.run, Backend: "apt"}
	c := caller(t, registry(t, m))

	got, err := c("pkg.list_pkgs")
	want := map[string]any{"zsh": "5.9-4+b1", "libc6": "2.36-9", "libc6:i386": "2.36-9", "tzdata": "2024a-0", "needed": "2.0"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("list_pkgs = %#v, %v; want %#v", got, err, want)
	}
	got, _ = c("pkg.list_pkgs", map[string]any{"removed": true})
	if !reflect.DeepEqual(got, map[string]any{"mc": "3:4.8.29-2"}) {
		t.Errorf("list_pkgs(removed=True) = %#v", got)
	}
	f.take()

	for _, tc := range []struct {
		fun   string
		args  []any
		want  any
		calls []string
	}{
		{"pkg.latest_version", []any{"zsh", map[string]any{"refresh": false}}, "5.9-4+b2", nil},
		{"pkg.latest_version", []any{"zsh", "tzdata", "virtual", map[string]any{"refresh": "False", "fromrepo": "bookworm-backports"}},
			map[string]any{"zsh": "", "tzdata": "", "virtual": ""}, nil},
		{"pkg.latest_version", []any{"zsh", map[string]any{"refresh": false, "show_installed": true}}, "5.9-4+b2", nil},
		{"pkg.latest_version", nil, "", nil},
		{"pkg.upgrade_available", []any{"zsh", map[string]any{"refresh": false}}, true, nil},
		{"pkg.latest_version", []any{"zsh"}, "5.9-4+b2", []string{"apt-get -q -o DPkg::Lock::Timeout=300 update", "dpkg --print-architecture", dpkgQuery, "apt-cache -q policy zsh"}},
		{"pkg.refresh_db", nil, map[string]any{
			"http://deb.debian.org/debian bookworm InRelease":         nil,
			"http://deb.debian.org/debian bookworm-updates InRelease": true,
			"http://example.org/repo stable InRelease":                false,
			"http://example.org/other stable InRelease":               false,
		}, nil},
		{"pkg.version", []any{"zsh"}, "5.9-4+b1", nil},
		{"pkg.version", []any{"nope"}, "", nil},
		{"pkg.version", nil, map[string]any{}, nil},
		{"pkg.version", []any{"libc6*"}, map[string]any{"libc6": "2.36-9", "libc6:i386": "2.36-9"}, nil},
		{"pkg.install", []any{map[string]any{"pkgs": []any{}}}, map[string]any{}, []string{}},
		{"pkg.install", []any{"zsh,curl"}, map[string]any{}, []string{"dpkg --print-architecture", dpkgQuery,
			aptPrefix + aptOpts + "install zsh curl", "dpkg --print-architecture", dpkgQuery}},
		{"pkg.install", []any{"zsh", map[string]any{"version": "=5.8-1", "fromrepo": "stable", "install_recommends": false, "skip_verify": true, "refresh": true}}, map[string]any{},
			[]string{"apt-get -q -o DPkg::Lock::Timeout=300 update", "dpkg --print-architecture", dpkgQuery,
				aptPrefix + aptOpts + "--allow-downgrades --no-install-recommends --allow-unauthenticated -t stable install zsh=5.8-1", "dpkg --print-architecture", dpkgQuery}},
		{"pkg.install", []any{map[string]any{"pkgs": []any{"zsh", map[string]any{"tzdata": 2025.0}}, "reinstall": true, "only_upgrade": true}}, map[string]any{},
			[]string{"dpkg --print-architecture", dpkgQuery, aptPrefix + aptOpts + "--only-upgrade --reinstall install zsh tzdata=2025", "dpkg --print-architecture", dpkgQuery}},
		{"pkg.remove", []any{"zsh,nope"}, map[string]any{}, []string{"dpkg --print-architecture", dpkgQuery, aptPrefix + "remove zsh", "dpkg --print-architecture", dpkgQuery}},
		{"pkg.remove", []any{"mc"}, map[string]any{}, []string{"dpkg --print-architecture", dpkgQuery}},
		{"pkg.purge", []any{"mc"}, map[string]any{}, []string{"dpkg --print-architecture", dpkgQuery, aptPrefix + "purge mc", "dpkg --print-architecture", dpkgQuery}},
	} {
		got, err := c(tc.fun, tc.args...)
		calls := f.take()
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s%v = %#v, %v; want %#v", tc.fun, tc.args, got, err, tc.want)
		}
		if tc.calls != nil && !reflect.DeepEqual(calls, tc.calls) && !(len(calls) == 0 && len(tc.calls) == 0) {
			t.Errorf("%s%v ran\n  %s\nwant\n  %s", tc.fun, tc.args, strings.Join(calls, "\n  "), strings.Join(tc.calls, "\n  "))
		}
	}

	// apt-get runs without a terminal to ask on.
	if _, err := c("pkg.remove", "zsh"); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	env := f.env[2]
	f.mu.Unlock()
	if !reflect.DeepEqual(env, aptEnv) || !strings.Contains(strings.Join(env, " "), "DEBIAN_FRONTEND=noninteractive") {
		t.Errorf("apt-get environment %v", env)
	}
	f.take()

	f.answers["apt-get -q -o DPkg::Lock::Timeout=300 update"] = service.Result{Stderr: "E: Could not get lock /var/lib/apt/lists/lock", Code: 100}
	if _, err := c("pkg.refresh_db"); err == nil || err.Error() != "E: Could not get lock /var/lib/apt/lists/lock" {
		t.Errorf("refresh_db failing: %v", err)
	}
	f.answers[aptPrefix+"remove zsh"] = service.Result{Stderr: "E: Sub-process /usr/bin/dpkg returned an error code (1)\nE: second line", Code: 100}
	_, err = c("pkg.remove", "zsh")
	if want := "Problem encountered removing package(s). Additional info follows:\n\nerrors:\n    - E: Sub-process /usr/bin/dpkg returned an error code (1)\n      E: second line"; err == nil || err.Error() != want {
		t.Errorf("remove failing: error\n%v\nwant\n%s", err, want)
	}
	for _, bad := range []any{"-o", "a b"} {
		if _, err := c("pkg.install", bad); err == nil || !strings.Contains(err.Error(), "invalid package name") {
			t.Errorf("install(%q): %v", bad, err)
		}
	}
	if _, err := c("pkg.install", "zsh", map[string]any{"sources": []any{map[string]any{"zsh": "salt://zsh.deb"}}}); err == nil {
		t.Error("install(sources=…): no error")
	}
}

// TestDnfCommands checks dnf's and rpm's command lines and how their
// output is read.
func TestDnfCommands(t *testing.T) {
	rpmQuery := "rpm -qa --queryformat " + rpmFormat
	f := &fake{answers: map[string]service.Result{
		"rpm --eval %{_arch}": {Stdout: "x86_64"},
		rpmQuery: {Stdout: strings.Join([]string{
			"bash_|-(none)_|-5.2.26_|-3.fc40_|-x86_64",
			"glibc_|-(none)_|-2.39_|-4.fc40_|-i686",
			"tzdata_|-(none)_|-2024a_|-5.fc40_|-noarch",
			"wine_|-2_|-9.1_|-1.fc40_|-aarch64",
			"gpg-pubkey_|-(none)_|-a15b79cc_|-63d04c2c_|-(none)",
		}, "\n")},
		"dnf -q repoquery --available --latest-limit 1 --queryformat %{epoch}:%{version}-%{release}\n bash":                                        {Stdout: "0:5.2.26-4.fc40\n0:5.2.26-3.fc40"},
		"dnf -q --disablerepo=* --enablerepo=updates repoquery --available --latest-limit 1 --queryformat %{epoch}:%{version}-%{release}\n tzdata": {Stdout: ""},
		"dnf -y makecache": {Stdout: "Metadata cache created."},
	}}
	m := &Manager{Run: f.run, Backend: "dnf"}
	c := caller(t, registry(t, m))
	list := []string{"rpm --eval %{_arch}", rpmQuery}
	for _, tc := range []struct {
		fun   string
		args  []any
		want  any
		calls []string
	}{
		{"pkg.list_pkgs", nil, map[string]any{"bash": "5.2.26-3.fc40", "glibc": "2.39-4.fc40", "tzdata": "2024a-5.fc40", "wine.aarch64": "2:9.1-1.fc40"}, list},
		{"pkg.latest_version", []any{"bash", map[string]any{"refresh": false}}, "5.2.26-4.fc40", nil},
		{"pkg.latest_version", []any{"tzdata", map[string]any{"refresh": false, "fromrepo": "updates"}}, "", nil},
		{"pkg.refresh_db", nil, true, []string{"dnf -y makecache"}},
		{"pkg.install", []any{map[string]any{"pkgs": []any{"vim", map[string]any{"bash": "5.1-1.fc40"}, "tzdata"}, "reinstall": true, "fromrepo": "fedora"}}, map[string]any{},
			append(append(clone(list), "dnf -y --disablerepo=* --enablerepo=fedora install vim", "dnf -y --disablerepo=* --enablerepo=fedora downgrade bash-5.1-1.fc40",
				"dnf -y --disablerepo=* --enablerepo=fedora reinstall tzdata"), list...)},
		{"pkg.install", []any{"vim", map[string]any{"install_recommends": false, "skip_verify": true}}, map[string]any{},
			append(append(clone(list), "dnf -y --nogpgcheck --setopt=install_weak_deps=False install vim"), list...)},
		{"pkg.purge", []any{"bash"}, map[string]any{}, append(append(clone(list), "dnf -y remove bash"), list...)},
	} {
		got, err := c(tc.fun, tc.args...)
		calls := f.take()
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s%v = %#v, %v; want %#v", tc.fun, tc.args, got, err, tc.want)
		}
		if tc.calls != nil && !reflect.DeepEqual(calls, tc.calls) {
			t.Errorf("%s%v ran\n  %s\nwant\n  %s", tc.fun, tc.args, strings.Join(calls, "\n  "), strings.Join(tc.calls, "\n  "))
		}
	}
}

func clone(s []string) []string { return append([]string(nil), s...) }

// TestLock: package operations of one agent never overlap.
func TestLock(t *testing.T) {
	var running, most atomic.Int32
	run := func(_ context.Context, _ []string, argv ...string) (service.Result, error) {
		if argv[0] == "apt-get" {
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
			running.Add(-1)
		}
		return service.Result{}, nil
	}
	c := caller(t, registry(t, &Manager{Run: run, Backend: "apt"}))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := c("pkg.install", "zsh"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d package operations ran at once", most.Load())
	}

	// Waiting for the lock ends with the job.
	lock <- struct{}{}
	defer func() { <-lock }()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	reg := registry(t, &Manager{Run: run, Backend: "apt"})
	if _, err := reg.Call(ctx, "pkg.install", []any{"zsh"}, nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("install while another holds the lock: %v, want the deadline", err)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		deb  int
		rpm  int
	}{
		{"1.0", "1.0", 0, 0},
		{"1.0", "1.1", -1, -1},
		{"1.10", "1.9", 1, 1},
		{"1.0~rc1", "1.0", -1, -1},
		{"1.0", "1.0a", -1, -1},
		{"1:1.0", "2.0", 1, 1},
		{"2.36-9", "2.36-10", -1, -1},
		{"1.0-1", "1.0-1+b1", -1, -1},
		{"1.01", "1.1", 0, 0},
		{"5.9-4+b1", "5.9-4+b2", -1, -1},
		{"1.0.0", "1.0", 1, 1},
		{"a", "1", 1, -1}, // dpkg: letters after digits' absence; rpm: numbers are newer
		{"1.0^", "1.0", 1, 1},
		{"1.0^git1", "1.0.1", 1, -1},
		{"2.0", "2.0-1", -1, 0}, // rpm: no release matches any
	} {
		if got := compareDeb(tc.a, tc.b); got != tc.deb {
			t.Errorf("compareDeb(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.deb)
		}
		if got := compareDeb(tc.b, tc.a); got != -tc.deb {
			t.Errorf("compareDeb(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.deb)
		}
		if got := compareRPM(tc.a, tc.b); got != tc.rpm {
			t.Errorf("compareRPM(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.rpm)
		}
	}
	// dpkg itself agrees, where it is installed.
	if _, err := exec.LookPath("dpkg"); err == nil {
		for _, p := range [][2]string{{"1.0~rc1", "1.0"}, {"1:1.0", "2.0"}, {"5.9-4+b1", "5.9-4+b2"}, {"1.0^git1", "1.0.1"}, {"a", "1"}} {
			lt := exec.Command("dpkg", "--compare-versions", p[0], "lt", p[1]).Run() == nil
			if lt != (compareDeb(p[0], p[1]) < 0) {
				t.Errorf("dpkg says %s lt %s is %v; compareDeb says %d", p[0], p[1], lt, compareDeb(p[0], p[1]))
			}
		}
	}
}

// TestVersionCmp calls pkg.version_cmp, the states' comparison, on both
// backends.
func TestVersionCmp(t *testing.T) {
	for _, tc := range []struct {
		backend, a, b string
		kwargs        map[string]any
		want          int64
	}{
		{"apt", "1.0~rc1", "1.0", nil, -1},
		{"apt", "2.10-3", "2.10-3", nil, 0},
		{"apt", "1:1.0", "2.0", nil, 1},
		{"apt", "1:1.0", "2.0", map[string]any{"ignore_epoch": true}, -1},
		{"dnf", "2.0", "2.0-1", nil, 0},
		{"dnf", "1.10", "1.9", nil, 1},
	} {
		c := caller(t, registry(t, &Manager{Backend: tc.backend}))
		args := []any{tc.a, tc.b}
		if tc.kwargs != nil {
			args = append(args, tc.kwargs)
		}
		got, err := c("pkg.version_cmp", args...)
		if err != nil || got != tc.want {
			t.Errorf("%s: version_cmp(%q, %q, %v) = %v, %v; want %d", tc.backend, tc.a, tc.b, tc.kwargs, got, err, tc.want)
		}
	}
}
