package git

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/state"
)

// gitIn runs git in dir for the test's setup.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", append([]string{"-c", "user.name=brine", "-c", "user.email=brine@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// upstream makes a bare repository with two tagged commits, v1 and v2
// (main's tip), and returns its path and the two commits.
func upstream(t *testing.T) (string, string, string) {
	t.Helper()
	work, bare := filepath.Join(t.TempDir(), "work"), filepath.Join(t.TempDir(), "repo.git")
	gitIn(t, "", "init", "-q", "-b", "main", work)
	var shas []string
	for _, v := range []string{"v1", "v2"} {
		if err := os.WriteFile(filepath.Join(work, "VERSION"), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitIn(t, work, "add", "VERSION")
		gitIn(t, work, "commit", "-q", "-m", v)
		gitIn(t, work, "tag", "-a", "-m", v, v)
		shas = append(shas, gitIn(t, work, "rev-parse", "HEAD"))
	}
	gitIn(t, "", "clone", "-q", "--bare", work, bare)
	return bare, shas[0], shas[1]
}

// edit changes the clone's tracked file without committing.
func edit(t *testing.T, clone string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(clone, "VERSION"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commit commits a change of the clone's own.
func commit(t *testing.T, clone string) {
	t.Helper()
	edit(t, clone)
	gitIn(t, clone, "commit", "-q", "-a", "-m", "mine")
}

func registry(t *testing.T) *function.Registry {
	t.Helper()
	reg := function.New()
	if err := reg.RegisterAll(Module(nil)); err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestLatest clones a local repository and moves the clone between its
// tags and its branch, in test mode and for real.
func TestLatest(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("TestLatest needs git (Debian's git package): %v", err)
	}
	reg := registry(t)
	bare, v1, v2 := upstream(t)
	target := filepath.Join(t.TempDir(), "clone")
	version := func() string {
		b, err := os.ReadFile(filepath.Join(target, "VERSION"))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	head := func() string {
		if _, err := os.Stat(target); err != nil {
			return ""
		}
		return gitIn(t, target, "rev-parse", "HEAD")
	}
	revision := func(old any, new string) map[string]any {
		return map[string]any{"revision": map[string]any{"old": old, "new": new}}
	}
	cloned := map[string]any{"new": bare + " => " + target, "revision": map[string]any{"old": nil, "new": v1}}

	for _, step := range []struct {
		what    string
		test    bool
		kwargs  map[string]any
		setup   func()
		result  string
		comment string
		changes map[string]any
		head    string
		version string
	}{
		// Salt's test mode names the clone, not the revision.
		{"clone, test mode", true, map[string]any{"rev": "v1"}, nil, "None", "Repository " + bare + " would be cloned to " + target,
			map[string]any{"new": bare + " => " + target}, "", ""},
		{"clone", false, map[string]any{"rev": "v1"}, nil, "True", bare + " cloned to " + target, cloned, v1, "v1"},
		{"up to date", false, map[string]any{"rev": "v1"}, nil, "True", "Repository " + target + " is up-to-date", nil, v1, "v1"},
		{"up to date, test mode", true, map[string]any{"rev": "v1"}, nil, "True", "Repository " + target + " is up-to-date", nil, v1, "v1"},
		{"update, test mode", true, map[string]any{"rev": "v2"}, nil, "None", "Repository " + target + " would be updated", revision(v1, v2), v1, "v1"},
		{"update", false, map[string]any{"rev": "v2"}, nil, "True", "Repository " + target + " updated", revision(v1, v2), v2, "v2"},
		{"back to v1", false, map[string]any{"rev": "v1"}, nil, "True", "Repository " + target + " updated", revision(v2, v1), v1, "v1"},
		{"by commit id", false, map[string]any{"rev": v2[:10]}, nil, "True", "Repository " + target + " updated", revision(v1, v2), v2, "v2"},
		{"the default branch", false, nil, nil, "True", "Repository " + target + " is up-to-date", nil, v2, "v2"},
		{"local changes", false, map[string]any{"rev": "v1"}, func() { edit(t, target) }, "False",
			"Repository " + target + " would be updated from " + v2[:7] + " to " + v1[:7] + ", but there are uncommitted changes. " +
				"Set 'force_reset' to True (or 'remote-changes') to force this update and discard these changes.", nil, v2, "mine"},
		{"local changes discarded", false, map[string]any{"rev": "v1", "force_reset": true}, nil, "True",
			"Uncommitted changes were discarded. Repository " + target + " updated.", revision(v2, v1), v1, "v1"},
		{"up to date with local changes", false, map[string]any{"rev": "v1"}, func() { edit(t, target) }, "True",
			"Repository " + target + " is up-to-date, but with uncommitted changes. Set 'force_reset' to True to purge uncommitted changes.", nil, v1, "mine"},
		{"up to date, local changes discarded, test mode", true, map[string]any{"rev": "v1", "force_reset": true}, nil, "None",
			"Uncommitted changes would be discarded", map[string]any{"forced update": true}, v1, "mine"},
		{"up to date, local changes discarded", false, map[string]any{"rev": "v1", "force_reset": true}, nil, "True",
			"Uncommitted changes were discarded", map[string]any{"forced update": true}, v1, "v1"},
		{"a branch", false, map[string]any{"rev": "main"}, nil, "True", "Repository " + target + " updated", revision(v1, v2), v2, "v2"},
		{"a branch, fast-forwarded", false, map[string]any{"rev": "main"}, func() { gitIn(t, target, "reset", "-q", "--hard", v1) }, "True",
			"Repository was fast-forwarded", revision(v1, v2), v2, "v2"},
		{"a branch of its own", false, map[string]any{"rev": "main"}, func() { commit(t, target) }, "False",
			"Repository " + target + " cannot be updated from ", nil, "", "mine"},
		{"a branch of its own, reset", false, map[string]any{"rev": "main", "force_reset": true}, nil, "True",
			"Repository was hard-reset", nil, v2, "v2"},
		{"no such revision", false, map[string]any{"rev": "v3"}, nil, "False", "No revision matching 'v3' exists in the remote repository", nil, v2, "v2"},
		{"no target", false, map[string]any{"target": ""}, nil, "False", `"target" option is required`, nil, v2, "v2"},
		{"no remote", false, map[string]any{"name": filepath.Join(t.TempDir(), "nothing.git")}, nil, "False", "Failed to check remote refs: ", nil, v2, "v2"},
	} {
		if step.setup != nil {
			step.setup()
		}
		kwargs := map[string]any{"name": bare, "target": target}
		for k, v := range step.kwargs {
			kwargs[k] = v
		}
		ctx := state.With(context.Background(), &state.Running{Test: step.test})
		out, err := reg.Call(ctx, "git.latest", nil, kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		got := out.(state.Result)
		if py.Str(state.Value(got.Result)) != step.result || !strings.HasPrefix(got.Comment, step.comment) || (step.result != "False" && got.Comment != step.comment) {
			t.Errorf("%s: result %s, comment %q; want %s, %q", step.what, py.Str(state.Value(got.Result)), got.Comment, step.result, step.comment)
		}
		if step.what == "a branch of its own, reset" {
			if got.Changes["forced update"] != true || got.Changes["revision"].(map[string]any)["new"] != v2 {
				t.Errorf("%s: changes %#v", step.what, got.Changes)
			}
		} else if (len(got.Changes) != 0 || len(step.changes) != 0) && !reflect.DeepEqual(got.Changes, step.changes) {
			t.Errorf("%s: changes %#v, want %#v", step.what, got.Changes, step.changes)
		}
		if h := head(); step.head != "" && h != step.head {
			t.Errorf("%s: HEAD %s, want %s", step.what, h, step.head)
		}
		if v := version(); v != step.version {
			t.Errorf("%s: VERSION %q, want %q", step.what, v, step.version)
		}
	}
	if b := gitIn(t, target, "symbolic-ref", "--short", "HEAD"); b != "main" {
		t.Errorf("after rev: main, the branch is %q", b)
	}
}

// TestLatestTarget covers what is in the target before a clone, a shallow
// clone and a clone run as another user.
func TestLatestTarget(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("TestLatestTarget needs git (Debian's git package): %v", err)
	}
	reg := registry(t)
	bare, _, v2 := upstream(t)
	call := func(kwargs map[string]any) state.Result {
		t.Helper()
		out, err := reg.Call(context.Background(), "git.latest", nil, kwargs, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out.(state.Result)
	}

	occupied := t.TempDir()
	if err := os.WriteFile(filepath.Join(occupied, "stray"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := call(map[string]any{"name": bare, "target": occupied})
	if py.Str(state.Value(got.Result)) != "False" || !strings.HasPrefix(got.Comment, "Target '"+occupied+"' exists, is non-empty and is not a git repository.") {
		t.Errorf("non-empty target: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
	out, err := reg.Call(state.With(context.Background(), &state.Running{Test: true}), "git.latest", nil,
		map[string]any{"name": bare, "target": occupied, "force_clone": true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got = out.(state.Result)
	if want := "Target directory " + occupied + " exists. Since force_clone=True, the contents of " + occupied +
		" would be deleted, and " + bare + " would be cloned into this directory."; py.Str(state.Value(got.Result)) != "None" || got.Comment != want ||
		!reflect.DeepEqual(got.Changes, map[string]any{"forced clone": true, "new": bare + " => " + occupied}) {
		t.Errorf("force_clone, test mode: %s %q %v", py.Str(state.Value(got.Result)), got.Comment, got.Changes)
	}
	if _, err := os.Stat(filepath.Join(occupied, "stray")); err != nil {
		t.Errorf("force_clone in test mode removed the target's contents: %v", err)
	}
	got = call(map[string]any{"name": bare, "target": occupied, "force_clone": true})
	if py.Str(state.Value(got.Result)) != "True" || got.Comment != bare+" cloned to "+occupied || got.Changes["forced clone"] != true {
		t.Errorf("force_clone: %s %q %v", py.Str(state.Value(got.Result)), got.Comment, got.Changes)
	}
	if _, err := os.Stat(filepath.Join(occupied, "stray")); err == nil {
		t.Error("force_clone kept the target's contents")
	}

	// Salt clones from /tmp: git makes the target's missing parents.
	deep := filepath.Join(t.TempDir(), "a", "b", "c")
	got = call(map[string]any{"name": bare, "target": deep})
	if py.Str(state.Value(got.Result)) != "True" || got.Comment != bare+" cloned to "+deep || gitIn(t, deep, "rev-parse", "HEAD") != v2 {
		t.Errorf("missing parents: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}

	shallow := filepath.Join(t.TempDir(), "shallow")
	got = call(map[string]any{"name": "file://" + bare, "target": shallow, "depth": 1})
	if py.Str(state.Value(got.Result)) != "True" || gitIn(t, shallow, "rev-parse", "HEAD") != v2 || gitIn(t, shallow, "rev-list", "--count", "HEAD") != "1" {
		t.Errorf("depth 1: %s %q, %s commits", py.Str(state.Value(got.Result)), got.Comment, gitIn(t, shallow, "rev-list", "--count", "HEAD"))
	}

	testenv.NeedRoot(t, "TestLatestTarget clones as another user: run the tests as root (CI does)")
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("the user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	// nobody can read the repository and write the clone's parent; git
	// refuses repositories of other owners, so the copy is nobody's.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	theirs := filepath.Join(dir, "theirs.git")
	gitIn(t, "", "clone", "-q", "--bare", bare, theirs)
	parent := filepath.Join(dir, "nobody")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chown", "-R", nobody.Uid, theirs, parent).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v: %s", err, out)
	}
	target := filepath.Join(parent, "clone")
	got = call(map[string]any{"name": theirs, "target": target, "rev": "v1", "user": "nobody"})
	if py.Str(state.Value(got.Result)) != "True" {
		t.Fatalf("user nobody: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
	fi, err := os.Stat(filepath.Join(target, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if owner := fi.Sys().(*syscall.Stat_t).Uid; int(owner) != uid {
		t.Errorf("the clone's files belong to %d, want nobody (%d)", owner, uid)
	}
	got = call(map[string]any{"name": theirs, "target": target, "rev": "v2", "user": "nobody"})
	if py.Str(state.Value(got.Result)) != "True" || got.Comment != "Repository "+target+" updated" {
		t.Errorf("update as nobody: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
	got = call(map[string]any{"name": theirs, "target": target, "user": "brine-no-such-user"})
	if py.Str(state.Value(got.Result)) != "False" || !strings.HasPrefix(got.Comment, "user brine-no-such-user: ") {
		t.Errorf("unknown user: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
}
