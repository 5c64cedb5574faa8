package pkgrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/state"
)

// harness is the states on temporary apt and yum directories; refreshes
// counts the package list refreshes.
type harness struct {
	s         *states
	reg       *function.Registry
	root      string
	refreshes int
}

func newHarness(t *testing.T, family string) *harness {
	t.Helper()
	root := t.TempDir()
	h := &harness{root: root}
	h.s = &states{
		apt:    aptPaths{list: filepath.Join(root, "sources.list"), dir: filepath.Join(root, "sources.list.d")},
		yum:    []string{filepath.Join(root, "yum.repos.d")},
		family: func() string { return family },
		aptKey: "apt-key",
		refresh: func(context.Context) error {
			h.refreshes++
			return nil
		},
	}
	for _, d := range []string{h.s.apt.dir, h.s.yum[0]} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.reg = function.New()
	if err := h.reg.RegisterAll(h.s.funcs()); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) call(t *testing.T, fun string, test bool, kwargs map[string]any, order ...string) state.Result {
	t.Helper()
	out, err := h.reg.Call(state.With(context.Background(), &state.Running{Test: test, ArgOrder: order}), fun, nil, kwargs, nil)
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	return out.(state.Result)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestApt configures and removes apt repositories, each step compared
// with what Salt 3006.6 answered and wrote for the same state
// (pkgrepo.managed and pkgrepo.absent run by salt-call on Debian 12).
func TestApt(t *testing.T) {
	h := newHarness(t, "Debian")
	d := h.s.apt.dir
	flat := "deb [trusted=yes] file:///tmp/prx/repo ./"
	signed := "deb [arch=amd64 signed-by=/etc/apt/keyrings/brine-x.gpg] http://example.invalid/debian bookworm main contrib"
	d2 := "deb http://example.invalid/d2 bookworm main"
	configure := func(n string) string {
		return "Package repo '" + n + "' would be configured. This may cause pkg states to behave differently than stated if this " +
			"action is repeated without test=True, due to the differences in the configured repositories."
	}
	for _, step := range []struct {
		what    string
		fun     string
		test    bool
		kwargs  map[string]any
		result  string
		comment string
		changes map[string]any
		file    string // the file checked afterwards
		content string
		refresh int // refreshes expected so far
	}{
		{"new, test mode", "pkgrepo.managed", true, map[string]any{"name": flat, "file": d + "/brine-prx.list"},
			"None", configure(flat), map[string]any{"repo": flat}, d + "/brine-prx.list", "<absent>", 0},
		{"new", "pkgrepo.managed", false, map[string]any{"name": flat, "file": d + "/brine-prx.list"},
			"True", "Configured package repo '" + flat + "'", map[string]any{"repo": flat}, d + "/brine-prx.list", flat + "\n", 1},
		{"configured, test mode", "pkgrepo.managed", true, map[string]any{"name": flat, "file": d + "/brine-prx.list"},
			"True", "Package repo '" + flat + "' already configured", nil, d + "/brine-prx.list", flat + "\n", 1},
		{"configured", "pkgrepo.managed", false, map[string]any{"name": flat, "file": d + "/brine-prx.list"},
			"True", "Package repo '" + flat + "' already configured", nil, d + "/brine-prx.list", flat + "\n", 1},
		{"signed-by, no refresh", "pkgrepo.managed", false, map[string]any{"name": signed, "file": d + "/brine-prx2.list", "refresh": false},
			"True", "Configured package repo '" + signed + "'", map[string]any{"repo": signed}, d + "/brine-prx2.list", signed + "\n", 1},
		{"comps, architectures, comments", "pkgrepo.managed", false, map[string]any{"name": d2, "comps": "main,non-free",
			"architectures": "amd64", "comments": []any{"hello", "world"}, "file": d + "/brine-prx3.list", "refresh_db": false},
			"True", "Configured package repo '" + d2 + "'", map[string]any{"repo": d2}, d + "/brine-prx3.list",
			"deb [arch=amd64] http://example.invalid/d2 bookworm main non-free #hello world\n", 1},
		// Salt 3006.6 finds this one changed on every run (python-apt
		// reads its comment into the line it compares).
		{"comments configured", "pkgrepo.managed", true, map[string]any{"name": d2, "comps": "main,non-free",
			"architectures": "amd64", "comments": []any{"hello", "world"}, "file": d + "/brine-prx3.list"},
			"True", "Package repo '" + d2 + "' already configured", nil, d + "/brine-prx3.list",
			"deb [arch=amd64] http://example.invalid/d2 bookworm main non-free #hello world\n", 1},
		{"other comps", "pkgrepo.managed", false, map[string]any{"name": d2, "comps": "main,contrib",
			"architectures": "amd64", "comments": []any{"hello", "world"}, "file": d + "/brine-prx3.list", "refresh": false},
			"True", "Configured package repo '" + d2 + "'", map[string]any{
				"comps": map[string]any{"new": []any{"main", "contrib"}, "old": []any{"main", "non-free"}},
				"line": map[string]any{"new": "deb [arch=amd64] http://example.invalid/d2 bookworm main contrib #hello world",
					"old": "deb [arch=amd64] http://example.invalid/d2 bookworm main non-free #hello world"}},
			d + "/brine-prx3.list", "deb [arch=amd64] http://example.invalid/d2 bookworm main contrib #hello world\n", 1},
		{"disabled", "pkgrepo.managed", false, map[string]any{"name": "deb http://example.invalid/d4 bookworm main", "disabled": true,
			"file": d + "/brine-prx4.list", "refresh": false},
			"True", "Configured package repo 'deb http://example.invalid/d4 bookworm main'", map[string]any{"repo": "deb http://example.invalid/d4 bookworm main"},
			d + "/brine-prx4.list", "# deb http://example.invalid/d4 bookworm main\n", 1},
		{"disabled, configured", "pkgrepo.managed", false, map[string]any{"name": "deb http://example.invalid/d4 bookworm main", "enabled": false,
			"file": d + "/brine-prx4.list", "refresh": false},
			"True", "Package repo 'deb http://example.invalid/d4 bookworm main' already configured", nil,
			d + "/brine-prx4.list", "# deb http://example.invalid/d4 bookworm main\n", 1},
		{"clean_file", "pkgrepo.managed", false, map[string]any{"name": "deb http://example.invalid/d5/ bookworm main",
			"file": d + "/brine-prx4.list", "clean_file": true, "refresh": false},
			"True", "Configured package repo 'deb http://example.invalid/d5/ bookworm main'", map[string]any{"repo": "deb http://example.invalid/d5/ bookworm main"},
			d + "/brine-prx4.list", "deb http://example.invalid/d5/ bookworm main\n", 1},
		{"enabled and disabled", "pkgrepo.managed", false, map[string]any{"name": flat, "enabled": true, "disabled": false},
			"False", "Only one of enabled/disabled is allowed", nil, d + "/brine-prx.list", flat + "\n", 1},
		{"repo", "pkgrepo.managed", false, map[string]any{"name": flat, "repo": flat},
			"False", "'repo' is not a supported argument for this state. The 'name' argument is probably what was intended.", nil, d + "/brine-prx.list", flat + "\n", 1},
		{"key_url and keyid", "pkgrepo.managed", false, map[string]any{"name": flat, "key_url": "/k", "keyid": "ABCD"},
			"False", `You may not use both "keyid"/"keyserver" and "key_url" argument.`, nil, d + "/brine-prx.list", flat + "\n", 1},
		{"no apt-key, no signed-by", "pkgrepo.managed", false, map[string]any{"name": "deb http://example.invalid/d6 bookworm main", "aptkey": false},
			"False", "Failed to configure repo 'deb http://example.invalid/d6 bookworm main': missing 'signedby' option when apt-key is missing",
			nil, d + "/brine-prx.list", flat + "\n", 1},
		{"not a line", "pkgrepo.managed", false, map[string]any{"name": "http://example.invalid/x bookworm"},
			"False", "Failed to configure repo 'http://example.invalid/x bookworm': Name http://example.invalid/x bookworm is not valid. " +
				"This must be the complete repo entry as seen in the sources file", nil, d + "/brine-prx.list", flat + "\n", 1},
		{"absent, test mode", "pkgrepo.absent", true, map[string]any{"name": flat}, "None",
			"Package repo '" + flat + "' will be removed. This may cause pkg states to behave differently than stated if this action is " +
				"repeated without test=True, due to the differences in the configured repositories.", nil, d + "/brine-prx.list", flat + "\n", 1},
		{"absent", "pkgrepo.absent", false, map[string]any{"name": flat}, "True", "Removed repo " + flat, map[string]any{"repo": flat},
			d + "/brine-prx.list", "<absent>", 2},
		{"absent again", "pkgrepo.absent", false, map[string]any{"name": flat}, "True", "Package repo " + flat + " is absent", nil,
			d + "/brine-prx.list", "<absent>", 2},
		// Its architectures are not the entry's.
		{"other architectures", "pkgrepo.absent", false, map[string]any{"name": "deb http://example.invalid/d2 bookworm contrib"}, "True",
			"Package repo deb http://example.invalid/d2 bookworm contrib is absent", nil, d + "/brine-prx3.list",
			"deb [arch=amd64] http://example.invalid/d2 bookworm main contrib #hello world\n", 2},
		{"one component", "pkgrepo.absent", false, map[string]any{"name": "deb [arch=amd64] http://example.invalid/d2 bookworm contrib"}, "True",
			"Removed repo deb [arch=amd64] http://example.invalid/d2 bookworm contrib", map[string]any{"repo": "deb [arch=amd64] http://example.invalid/d2 bookworm contrib"},
			d + "/brine-prx3.list", "deb [arch=amd64] http://example.invalid/d2 bookworm main #hello world\n", 3},
	} {
		got := h.call(t, step.fun, step.test, step.kwargs)
		if py.Str(state.Value(got.Result)) != step.result || got.Comment != step.comment {
			t.Errorf("%s: result %s, comment %q; want %s, %q", step.what, py.Str(state.Value(got.Result)), got.Comment, step.result, step.comment)
		}
		if (len(got.Changes) != 0 || len(step.changes) != 0) && !reflect.DeepEqual(got.Changes, step.changes) {
			t.Errorf("%s: changes %#v, want %#v", step.what, got.Changes, step.changes)
		}
		if c := read(t, step.file); c != step.content {
			t.Errorf("%s: %s holds %q, want %q", step.what, step.file, c, step.content)
		}
		if h.refreshes != step.refresh {
			t.Errorf("%s: %d refreshes, want %d", step.what, h.refreshes, step.refresh)
		}
	}
}

// TestAptLines reads sources lines as Salt's aptpkg does and writes them
// back.
func TestAptLines(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		invalid    bool
		arches     []string
		signedBy   string
	}{
		{line: "deb http://deb.debian.org/debian bookworm main", want: "deb http://deb.debian.org/debian bookworm main", arches: []string{}},
		{line: "# deb-src http://x/ y z #note", want: "# deb-src http://x/ y z #note", arches: []string{}},
		{line: "deb [ arch=amd64,arm64 signed-by=/k.gpg ] http://x y", want: "deb [arch=amd64,arm64 signed-by=/k.gpg] http://x y",
			arches: []string{"amd64", "arm64"}, signedBy: "/k.gpg"},
		{line: "# a comment", want: "# a comment", invalid: true},
		{line: "deb http://x", want: "deb http://x", invalid: true},
		{line: "", want: "", invalid: true},
	} {
		s := parseSource(tc.line, "")
		if s.String() != tc.want || s.invalid != tc.invalid {
			t.Errorf("%q: %q (invalid %v), want %q (invalid %v)", tc.line, s.String(), s.invalid, tc.want, tc.invalid)
		}
		if !tc.invalid && (!reflect.DeepEqual(s.architectures(), tc.arches) || s.opt("signed-by") != tc.signedBy) {
			t.Errorf("%q: architectures %v, signed-by %q", tc.line, s.architectures(), s.opt("signed-by"))
		}
	}
}

// TestAptUpdate configures a file:// repository of a package built here
// and has apt-get update read it: the package becomes installable.
func TestAptUpdate(t *testing.T) {
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg-deb", "dpkg-scanpackages"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("TestAptUpdate needs %s (Debian's apt and dpkg-dev packages): %v", tool, err)
		}
	}
	h := newHarness(t, "Debian")
	repo := filepath.Join(h.root, "repo")
	pkg := filepath.Join(h.root, "pkg")
	if err := os.MkdirAll(filepath.Join(pkg, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	control := "Package: brine-pkgrepo-test\nVersion: 1.0\nArchitecture: all\nMaintainer: brine <brine@example.com>\nDescription: pkgrepo test\n"
	if err := os.WriteFile(filepath.Join(pkg, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(dir, name string, args ...string) string {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir = dir
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return string(out)
	}
	run(h.root, "dpkg-deb", "-b", pkg, filepath.Join(repo, "brine-pkgrepo-test_1.0_all.deb"))
	if err := os.WriteFile(filepath.Join(repo, "Packages"), []byte(run(repo, "dpkg-scanpackages", ".", "/dev/null")), 0o644); err != nil {
		t.Fatal(err)
	}
	lists := filepath.Join(h.root, "lists")
	if err := os.MkdirAll(filepath.Join(lists, "partial"), 0o755); err != nil {
		t.Fatal(err)
	}
	aptOpts := []string{"-o", "Dir::Etc::SourceList=" + h.s.apt.list, "-o", "Dir::Etc::SourceParts=" + h.s.apt.dir,
		"-o", "Dir::State::Lists=" + lists, "-o", "Dir::Cache=" + filepath.Join(h.root, "cache")}
	h.s.refresh = func(ctx context.Context) error {
		h.refreshes++
		out, err := exec.CommandContext(ctx, "apt-get", append(aptOpts, "-q", "update")...).CombinedOutput()
		if err != nil {
			t.Errorf("apt-get update: %v: %s", err, out)
		}
		return err
	}
	line := "deb [trusted=yes] file://" + repo + " ./"
	got := h.call(t, "pkgrepo.managed", false, map[string]any{"name": line, "file": filepath.Join(h.s.apt.dir, "brine.list")})
	if py.Str(state.Value(got.Result)) != "True" || h.refreshes != 1 {
		t.Fatalf("managed: %s %q, %d refreshes", py.Str(state.Value(got.Result)), got.Comment, h.refreshes)
	}
	if policy := run(h.root, "apt-cache", append(aptOpts, "policy", "brine-pkgrepo-test")...); !strings.Contains(policy, "Candidate: 1.0") {
		t.Errorf("apt-cache policy after the refresh:\n%s", policy)
	}
}

// TestYum writes dnf .repo files as Salt's yumpkg.mod_repo writes them.
func TestYum(t *testing.T) {
	h := newHarness(t, "RedHat")
	file := filepath.Join(h.s.yum[0], "brine-test.repo")
	order := []string{"name", "humanname", "baseurl", "gpgcheck", "gpgkey", "comments", "enabled"}
	base := map[string]any{"name": "brine-test", "humanname": "Brine Test", "baseurl": "http://example.invalid/el9/$basearch",
		"gpgcheck": int64(1), "gpgkey": "http://example.invalid/key", "comments": []any{"hello", "world"}}
	// What Salt's mod_repo wrote for these options.
	written := "[brine-test]\nbaseurl=http://example.invalid/el9/$basearch\ngpgcheck=1\ngpgkey=http://example.invalid/key\n" +
		"name=Brine Test\nenabled=1\n# hello\n# world\n\n"
	got := h.call(t, "pkgrepo.managed", true, base, order...)
	if py.Str(state.Value(got.Result)) != "None" || !reflect.DeepEqual(got.Changes, map[string]any{"repo": "brine-test"}) || read(t, file) != "<absent>" {
		t.Errorf("test mode: %s %q %v", py.Str(state.Value(got.Result)), got.Comment, got.Changes)
	}
	got = h.call(t, "pkgrepo.managed", false, base, order...)
	if py.Str(state.Value(got.Result)) != "True" || got.Comment != "Configured package repo 'brine-test'" || !reflect.DeepEqual(got.Changes, map[string]any{"repo": "brine-test"}) {
		t.Errorf("managed: %s %q %v", py.Str(state.Value(got.Result)), got.Comment, got.Changes)
	}
	if h.refreshes != 0 {
		t.Errorf("%d refreshes: Salt's yumpkg refreshes nothing", h.refreshes)
	}
	if c := read(t, file); c != written {
		t.Errorf("%s:\n%s\nwant\n%s", file, c, written)
	}
	got = h.call(t, "pkgrepo.managed", false, base, order...)
	if py.Str(state.Value(got.Result)) != "True" || got.Comment != "Package repo 'brine-test' already configured" || len(got.Changes) != 0 {
		t.Errorf("again: %s %q %v", py.Str(state.Value(got.Result)), got.Comment, got.Changes)
	}
	changed := map[string]any{"name": "brine-test", "humanname": "Brine Test", "baseurl": "http://example.invalid/el9b", "gpgcheck": false, "disabled": true}
	got = h.call(t, "pkgrepo.managed", false, changed, "name", "humanname", "baseurl", "gpgcheck", "disabled")
	want := map[string]any{"baseurl": map[string]any{"new": "http://example.invalid/el9b", "old": "http://example.invalid/el9/$basearch"},
		"gpgcheck": map[string]any{"new": "0", "old": "1"}, "enabled": map[string]any{"new": "0", "old": "1"}}
	if py.Str(state.Value(got.Result)) != "True" || !reflect.DeepEqual(got.Changes, want) {
		t.Errorf("change: %s %q %#v", py.Str(state.Value(got.Result)), got.Comment, got.Changes)
	}
	if c, w := read(t, file), "[brine-test]\nbaseurl=http://example.invalid/el9b\ngpgcheck=0\ngpgkey=http://example.invalid/key\n"+
		"name=Brine Test\nenabled=0\n# hello\n# world\n\n"; c != w {
		t.Errorf("%s:\n%s\nwant\n%s", file, c, w)
	}
	got = h.call(t, "pkgrepo.managed", false, map[string]any{"name": "brine-other", "humanname": "x"})
	if py.Str(state.Value(got.Result)) != "False" || !strings.HasSuffix(got.Comment, "but either a baseurl or a mirrorlist needs to be given") {
		t.Errorf("no baseurl: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
	got = h.call(t, "pkgrepo.absent", false, map[string]any{"name": "brine-test"})
	if py.Str(state.Value(got.Result)) != "True" || got.Comment != "Removed repo brine-test" || read(t, file) != "<absent>" {
		t.Errorf("absent: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
	got = h.call(t, "pkgrepo.absent", false, map[string]any{"name": "brine-test"})
	if py.Str(state.Value(got.Result)) != "True" || got.Comment != "Package repo brine-test is absent" {
		t.Errorf("absent again: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
}

// TestAptKeyURL adds a repository whose key_url is an armored key, with
// aptkey False: the key is dearmored into the line's signed-by keyring,
// as Salt's add_repo_key writes it.
func TestAptKeyURL(t *testing.T) {
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Fatalf("TestAptKeyURL needs gpg (Debian's gnupg package): %v", err)
	}
	h := newHarness(t, "Debian")
	home := filepath.Join(h.root, "gnupg")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	gpg := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command("gpg", append([]string{"--batch", "--homedir", home}, args...)...).Output()
		if err != nil {
			t.Fatalf("gpg %v: %v", args, err)
		}
		return out
	}
	gpg("--passphrase", "", "--quick-gen-key", "brine pkgrepo test <brine@example.com>", "default", "default", "never")
	armored := filepath.Join(h.root, "key.asc")
	if err := os.WriteFile(armored, gpg("--armor", "--export"), 0o644); err != nil {
		t.Fatal(err)
	}
	keyrings := filepath.Join(h.root, "keyrings")
	if err := os.Mkdir(keyrings, 0o755); err != nil {
		t.Fatal(err)
	}
	keyring := filepath.Join(keyrings, "brine.gpg")
	line := "deb [signed-by=" + keyring + "] http://example.invalid/k bookworm main"
	got := h.call(t, "pkgrepo.managed", false, map[string]any{"name": line, "key_url": "file://" + armored, "aptkey": false, "refresh": false})
	if py.Str(state.Value(got.Result)) != "True" || got.Comment != "Configured package repo '"+line+"'" {
		t.Fatalf("managed: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
	b, err := os.ReadFile(keyring)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(string(b), "-----BEGIN") {
		t.Error("the keyring is still armored")
	}
	if out := string(gpg("--show-keys", keyring)); !strings.Contains(out, "brine pkgrepo test") {
		t.Errorf("gpg --show-keys %s:\n%s", keyring, out)
	}
	if c := read(t, h.s.apt.list); c != line+"\n" {
		t.Errorf("sources.list holds %q", c)
	}
}
