package file

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func fileIs(p, body, mode string) func(h *harness) string {
	return func(h *harness) string {
		got, err := os.ReadFile(p)
		if err != nil {
			return err.Error()
		}
		if string(got) != body {
			return fmt.Sprintf("%s holds %q, want %q", p, got, body)
		}
		if mode != "" && h.mode(p) != mode {
			return fmt.Sprintf("%s has mode %s, want %s", p, h.mode(p), mode)
		}
		return ""
	}
}

func absent(p string) func(h *harness) string {
	return func(*harness) string {
		if _, err := os.Lstat(p); err == nil {
			return p + " exists"
		}
		return ""
	}
}

func TestManagedContents(t *testing.T) {
	h := newHarness(t)
	p := h.path("motd")
	h.steps([]step{
		{"test mode, new file", "file.managed", true, map[string]any{"name": p, "contents": "hello"}, nil,
			"The file " + p + " is set to be changed" + testNote, map[string]any{"newfile": p}, absent(p)},
		{"new file", "file.managed", false, map[string]any{"name": p, "contents": "hello"}, true,
			"File " + p + " updated", map[string]any{"diff": "New file"}, fileIs(p, "hello\n", "0644")},
		{"second run", "file.managed", false, map[string]any{"name": p, "contents": "hello"}, true,
			"File " + p + " is in the correct state", nil, nil},
		{"test mode, no change", "file.managed", true, map[string]any{"name": p, "contents": "hello"}, true,
			"The file " + p + " is in the correct state", nil, nil},
		{"test mode, change", "file.managed", true, map[string]any{"name": p, "contents": []any{"hello", "world"}, "mode": "600"}, nil,
			"The file " + p + " is set to be changed" + testNote,
			map[string]any{"diff": "--- \n+++ \n@@ -1 +1,2 @@\n hello\n+world\n", "mode": "0600"}, fileIs(p, "hello\n", "0644")},
		{"change", "file.managed", false, map[string]any{"name": p, "contents": []any{"hello", "world"}, "mode": "600"}, true,
			"File " + p + " updated", map[string]any{"diff": "--- \n+++ \n@@ -1 +1,2 @@\n hello\n+world\n", "mode": "0600"},
			fileIs(p, "hello\nworld\n", "0600")},
		{"mode given as a number", "file.managed", false, map[string]any{"name": p, "contents": []any{"hello", "world"}, "mode": int64(644)},
			true, "File " + p + " updated", map[string]any{"mode": "0644"}, fileIs(p, "hello\nworld\n", "0644")},
		{"hidden diff", "file.managed", false, map[string]any{"name": p, "contents": "bye", "show_changes": false}, true,
			"File " + p + " updated", map[string]any{"diff": "<show_changes=False>"}, fileIs(p, "bye\n", "0644")},
		{"no final newline", "file.managed", false, map[string]any{"name": p, "contents": "bye\n\n", "contents_newline": false}, true,
			"File " + p + " updated", map[string]any{"diff": "--- \n+++ \n@@ -1 +1 @@\n-bye\n+bye"},
			nil},
	})
}

func TestManagedContentsMore(t *testing.T) {
	h := newHarness(t)
	p := h.path("etc", "owned")
	h.steps([]step{
		{"parent missing", "file.managed", false, map[string]any{"name": p, "contents": "x"}, false,
			"Parent directory not present", nil, absent(p)},
		{"makedirs, owner", "file.managed", false, map[string]any{"name": p, "contents": "x", "makedirs": true,
			"user": "nobody", "group": "nogroup", "mode": "0640"}, true, "File " + p + " updated",
			map[string]any{"diff": "New file", "user": "nobody", "group": "nogroup", "mode": "0640"},
			func(h *harness) string {
				st, err := statsOf(p, false)
				if err != nil || st["user"] != "nobody" || st["group"] != "nogroup" {
					return fmt.Sprintf("owner %v: %v", st, err)
				}
				if m := h.mode(filepath.Dir(p)); m != "0750" {
					return "directory mode " + m
				}
				return fileIs(p, "x\n", "0640")(h)
			}},
		{"owner second run", "file.managed", false, map[string]any{"name": p, "contents": "x", "user": "nobody", "group": "nogroup",
			"mode": "0640"}, true, "File " + p + " is in the correct state", nil, nil},
		{"owner back, test mode", "file.managed", true, map[string]any{"name": p, "contents": "x", "user": "root"}, nil,
			"The file " + p + " is set to be changed" + testNote, map[string]any{"user": "root"}, nil},
		{"unknown user", "file.managed", false, map[string]any{"name": p, "contents": "x", "user": "no-such-user"}, false,
			"User no-such-user is not available ", nil, nil},
		{"unknown group", "file.managed", false, map[string]any{"name": p, "contents": "x", "group": "no-such-group"}, false,
			"Group no-such-group is not available", nil, nil},
		// Salt's _check_user only warns in test mode: the user may be
		// created by an earlier state of the same run.
		{"unknown user, test mode", "file.managed", true, map[string]any{"name": h.path("later"), "contents": "x",
			"user": "no-such-user", "group": "no-such-group"}, nil, "The file " + h.path("later") + " is set to be changed" + testNote,
			map[string]any{"newfile": h.path("later")}, absent(h.path("later"))},
		{"relative", "file.managed", false, map[string]any{"name": "etc/x", "contents": "x"}, false,
			"Specified file etc/x is not an absolute path", nil, nil},
		{"directory", "file.managed", false, map[string]any{"name": h.dir, "contents": "x"}, false,
			"Specified target " + h.dir + " is a directory", nil, nil},
		{"source and contents", "file.managed", false, map[string]any{"name": p, "contents": "x", "source": "salt://conf/app.conf"},
			false, "'source' cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'", nil, nil},
		{"pillar", "file.managed", false, map[string]any{"name": h.path("key"), "contents_pillar": "users:key", "mode": "0600"}, true,
			"File " + h.path("key") + " updated", map[string]any{"diff": "New file"}, fileIs(h.path("key"), "secret\n", "0600")},
		{"missing pillar", "file.managed", false, map[string]any{"name": p, "contents_pillar": "users:nope"}, false,
			"Pillar users:nope does not exist", nil, nil},
		{"grains", "file.managed", false, map[string]any{"name": h.path("motd"), "contents_grains": "motd"}, true,
			"File " + h.path("motd") + " updated", map[string]any{"diff": "New file"}, fileIs(h.path("motd"), "Welcome\n", "")},
		{"nested grain", "file.managed", false, map[string]any{"name": h.path("family"), "contents_grains": "os:family"}, true,
			"File " + h.path("family") + " updated", map[string]any{"diff": "New file"}, fileIs(h.path("family"), "Debian\n", "")},
		{"missing grain", "file.managed", false, map[string]any{"name": p, "contents_grains": "nope"}, false,
			"Grain nope does not exist", nil, nil},
		{"empty not allowed", "file.managed", false, map[string]any{"name": p, "contents": "", "allow_empty": false}, false,
			"'contents' value would result in empty contents. Set allow_empty to True to allow the managed file to be empty.", nil, nil},
		{"not created", "file.managed", false, map[string]any{"name": h.path("never"), "contents": "x", "create": false}, true,
			"File " + h.path("never") + " is not present and is not set for creation", nil, absent(h.path("never"))},
		{"empty file", "file.managed", false, map[string]any{"name": h.path("empty")}, true, "Empty file",
			map[string]any{"new": "file " + h.path("empty") + " created"}, fileIs(h.path("empty"), "", "0644")},
		{"empty file second run", "file.managed", false, map[string]any{"name": h.path("empty")}, true,
			"File " + h.path("empty") + " exists with proper permissions. No changes made.", nil, nil},
		{"replace False", "file.managed", false, map[string]any{"name": p, "contents": "other", "replace": false, "mode": "0600"}, true,
			"", map[string]any{"mode": "0600"}, fileIs(p, "x\n", "0600")},
		{"replace False, test mode", "file.managed", true, map[string]any{"name": p, "contents": "other", "replace": false,
			"mode": "0644"}, nil, "File " + p + " will be updated with permissions 0644 from its current state of 0600",
			map[string]any{"mode": "0644"}, nil},
		{"template contents", "file.managed", false, map[string]any{"name": h.path("tmpl"), "contents": "hi {{ who }}",
			"template": "jinja", "context": map[string]any{"who": "there"}}, true, "File " + h.path("tmpl") + " updated",
			map[string]any{"diff": "New file"}, fileIs(h.path("tmpl"), "hi there\n", "")},
		{"file_mode warning", "file.managed", false, map[string]any{"name": h.path("tmpl"), "contents": "hi {{ who }}",
			"template": "jinja", "context": map[string]any{"who": "there"}, "file_mode": "0600"}, true,
			"File " + h.path("tmpl") + " is in the correct state", nil, nil},
	})
	r := h.run(false, "file.managed", map[string]any{"name": h.path("tmpl"), "contents": "x", "file_mode": "0600"})
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "'file_mode' argument will be ignored") {
		t.Errorf("warnings %v", r.Warnings)
	}
}

func TestManagedSource(t *testing.T) {
	h := newHarness(t)
	p := h.path("app.conf")
	h.steps([]step{
		{"test mode", "file.managed", true, map[string]any{"name": p, "source": "salt://conf/app.conf"}, nil,
			"The file " + p + " is set to be changed" + testNote, map[string]any{"newfile": p}, absent(p)},
		{"new", "file.managed", false, map[string]any{"name": p, "source": "salt://conf/app.conf"}, true,
			"File " + p + " updated", map[string]any{"diff": "New file", "mode": "0644"}, fileIs(p, "port = 80\n", "0644")},
	})
	fetched := h.files.Fetched.Load()
	h.steps([]step{
		{"second run", "file.managed", false, map[string]any{"name": p, "source": "salt://conf/app.conf"}, true,
			"File " + p + " is in the correct state", nil, nil},
		{"second run, test mode", "file.managed", true, map[string]any{"name": p, "source": "salt://conf/app.conf"}, true,
			"The file " + p + " is in the correct state", nil, nil},
	})
	if n := h.files.Fetched.Load(); n != fetched {
		t.Errorf("a file in the correct state was fetched again (%d fetches)", n-fetched)
	}
	h.steps([]step{
		{"other saltenv, test mode", "file.managed", true, map[string]any{"name": p, "source": "salt://conf/app.conf?saltenv=dev"}, nil,
			"The file " + p + " is set to be changed" + testNote,
			map[string]any{"diff": "--- \n+++ \n@@ -1 +1 @@\n-port = 80\n+port = 8080\n"}, fileIs(p, "port = 80\n", "")},
		{"other saltenv", "file.managed", false, map[string]any{"name": p, "source": "salt://conf/app.conf?saltenv=dev",
			"backup": "minion"}, true, "File " + p + " updated",
			map[string]any{"diff": "--- \n+++ \n@@ -1 +1 @@\n-port = 80\n+port = 8080\n"},
			func(h *harness) string {
				matches, _ := filepath.Glob(filepath.Join(h.env.CacheDir, "file_backup", strings.TrimPrefix(p, "/")+"_*"))
				if len(matches) != 1 || h.read(matches[0]) != "port = 80\n" {
					return fmt.Sprintf("backups %v", matches)
				}
				stamp := strings.TrimPrefix(matches[0], filepath.Join(h.env.CacheDir, "file_backup", strings.TrimPrefix(p, "/"))+"_")
				if !regexp.MustCompile(`^[A-Z][a-z]{2}_[A-Z][a-z]{2}_\d\d_\d\d:\d\d:\d\d_\d{6}_\d{4}$`).MatchString(stamp) {
					return "backup stamp " + stamp
				}
				return fileIs(p, "port = 8080\n", "0644")(h)
			}},
		{"missing source", "file.managed", false, map[string]any{"name": h.path("nope"), "source": "salt://conf/nope"}, false,
			"Source file salt://conf/nope not found in saltenv 'base'", nil, absent(h.path("nope"))},
		{"missing source, test mode", "file.managed", true, map[string]any{"name": h.path("nope"), "source": "salt://conf/nope"}, false,
			"Source file salt://conf/nope not found in saltenv 'base'", nil, nil},
		{"source list", "file.managed", false, map[string]any{"name": h.path("fb"), "source": []any{"salt://conf/nope",
			"salt://conf/fallback"}}, true, "File " + h.path("fb") + " updated", map[string]any{"diff": "New file", "mode": "0644"},
			fileIs(h.path("fb"), "fallback\n", "")},
		{"source list, none", "file.managed", false, map[string]any{"name": h.path("fb"), "source": []any{"salt://conf/nope",
			"salt://conf/nope2"}}, false, "Unable to manage file: none of the specified sources were found", nil, nil},
		{"template", "file.managed", false, map[string]any{"name": h.path("tmpl.conf"), "source": "salt://conf/tmpl.conf",
			"template": "jinja", "defaults": map[string]any{"greeting": "hello", "who": "all"}, "context": map[string]any{"who": "you"},
			"mode": "0600"}, true, "File " + h.path("tmpl.conf") + " updated", map[string]any{"diff": "New file"},
			fileIs(h.path("tmpl.conf"), "greeting = hello you\n", "0600")},
		{"template second run", "file.managed", false, map[string]any{"name": h.path("tmpl.conf"), "source": "salt://conf/tmpl.conf",
			"template": "jinja", "defaults": map[string]any{"greeting": "hello", "who": "all"}, "context": map[string]any{"who": "you"},
			"mode": "0600"}, true, "File " + h.path("tmpl.conf") + " is in the correct state", nil, nil},
		{"template error", "file.managed", false, map[string]any{"name": h.path("tmpl.conf"), "source": "salt://conf/tmpl.conf",
			"template": "jinja"}, false,
			`Unable to manage file: undefined variable in "greeting = {{ greeting }} {{ who }}\n"`, nil, nil},
		{"keep mode", "file.managed", false, map[string]any{"name": h.path("kept"), "source": "salt://conf/app.conf", "mode": "keep"},
			true, "File " + h.path("kept") + " updated", map[string]any{"diff": "New file", "mode": "0640"},
			fileIs(h.path("kept"), "port = 80\n", "0640")},
		{"binary to text", "file.managed", false, map[string]any{"name": h.path("blob"), "source": "salt://binary/blob"}, true,
			"File " + h.path("blob") + " updated", map[string]any{"diff": "New file", "mode": "0644"}, nil},
		{"text over binary", "file.managed", false, map[string]any{"name": h.path("blob"), "contents": "text"}, true,
			"File " + h.path("blob") + " updated", map[string]any{"diff": "Replace binary file with text file"},
			fileIs(h.path("blob"), "text\n", "")},
	})
}

func TestManagedLocalSourceAndSymlinks(t *testing.T) {
	h := newHarness(t)
	src := h.path("src.txt")
	h.write(src, "local\n", 0o600)
	sum := "b0b5b1a7b52d1aff1c5b6fc5ad31e3f6bfa7ca1e7ee73c2e1e5fcd6fa1b2f3a4"
	p := h.path("dest.txt")
	h.steps([]step{
		{"local source", "file.managed", false, map[string]any{"name": p, "source": src}, true, "File " + p + " updated",
			map[string]any{"diff": "New file", "mode": "0644"}, fileIs(p, "local\n", "0644")},
		{"local source second run", "file.managed", false, map[string]any{"name": p, "source": "file://" + src}, true,
			"File " + p + " is in the correct state", nil, nil},
		{"bad source_hash", "file.managed", false, map[string]any{"name": h.path("other"), "source": src, "source_hash": "sha256=" + sum},
			false, "Specified sha256 checksum for " + h.path("other") + " (" + sum + ") does not match actual checksum " +
				"(efb83f2a277e9f49b38efd505f5cbb93885e721b6bd16b788937c9396174c006)", nil, absent(h.path("other"))},
		{"skip_verify", "file.managed", false, map[string]any{"name": h.path("other"), "source": src, "source_hash": sum,
			"skip_verify": true}, true, "File " + h.path("other") + " updated", map[string]any{"diff": "New file", "mode": "0644"}, nil},
		{"missing local source", "file.managed", false, map[string]any{"name": h.path("x"), "source": h.path("nope")}, false,
			"Source file " + h.path("nope") + " not found", nil, nil},
		{"http source", "file.managed", false, map[string]any{"name": h.path("x"), "source": "https://example.com/x"}, false,
			"Unable to manage file: source https://example.com/x: the https scheme is not supported (salt://, file:// or a local path)",
			nil, nil},
	})
	// A symlink is followed: its target gets the contents.
	target := h.path("target")
	link := h.path("link")
	h.write(target, "old\n", 0o644)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	h.steps([]step{
		{"through a symlink", "file.managed", false, map[string]any{"name": link, "contents": "new"}, true, "File " + link + " updated",
			map[string]any{"diff": "--- \n+++ \n@@ -1 +1 @@\n-old\n+new\n"}, fileIs(target, "new\n", "")},
		{"symlink replaced", "file.managed", false, map[string]any{"name": link, "contents": "own", "follow_symlinks": false}, true,
			"File " + link + " updated", map[string]any{"diff": "Replace symbolic link with regular file"},
			func(h *harness) string {
				if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
					return "the link is still a link"
				}
				return fileIs(target, "new\n", "")(h)
			}},
	})
	// The real checksum in the message above is the file's.
	if got, _ := sha256File(src); got != "efb83f2a277e9f49b38efd505f5cbb93885e721b6bd16b788937c9396174c006" {
		t.Errorf("sha256 of %q is %s: fix the expected message", "local\n", got)
	}
}

// TestManagedNoChangeIsFast: a thousand files in the correct state cost
// a stat, a hash and no write each.
func TestManagedNoChangeIsFast(t *testing.T) {
	h := newHarness(t)
	const n = 1000
	for i := range n {
		h.write(h.path("many", fmt.Sprint(i)), "port = 80\n", 0o644)
	}
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	for i := range n {
		r := h.run(false, "file.managed", map[string]any{"name": h.path("many", fmt.Sprint(i)), "source": "salt://conf/app.conf",
			"user": "root", "group": "root", "mode": "0644"})
		if r.Result == nil || !*r.Result || len(r.Changes) > 0 {
			t.Fatalf("file %d: %+v", i, r)
		}
	}
	took := time.Since(start)
	t.Logf("%d unchanged files managed in %v", n, took)
	if took > 300*time.Millisecond {
		t.Errorf("%d unchanged files took %v, over the 300ms budget", n, took)
	}
	if h.files.Fetched.Load() != 0 {
		t.Errorf("unchanged files were fetched %d times", h.files.Fetched.Load())
	}
}
