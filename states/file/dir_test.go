package file

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/brinehq/brine/state"
)

func isDir(p, mode string) func(h *harness) string {
	return func(h *harness) string {
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			return p + " is not a directory"
		}
		if mode != "" && h.mode(p) != mode {
			return fmt.Sprintf("%s has mode %s, want %s", p, h.mode(p), mode)
		}
		return ""
	}
}

func owned(p, usr, group, mode string) func(h *harness) string {
	return func(h *harness) string {
		st, err := statsOf(p, false)
		if err != nil || st["user"] != usr || st["group"] != group || st["mode"] != mode {
			return fmt.Sprintf("%s: %v:%v %v (%v), want %s:%s %s", p, st["user"], st["group"], st["mode"], err, usr, group, mode)
		}
		return ""
	}
}

func TestDirectory(t *testing.T) {
	h := newHarness(t)
	d := h.path("d")
	h.steps([]step{
		{"test mode", "file.directory", true, map[string]any{"name": d, "dir_mode": "750"}, nil,
			"The following files will be changed:\n" + d + ": directory - new\n",
			map[string]any{d: map[string]any{"directory": "new"}}, absent(d)},
		{"create", "file.directory", false, map[string]any{"name": d, "dir_mode": "750"}, true, "",
			map[string]any{d: map[string]any{"directory": "new"}}, isDir(d, "0750")},
		{"second run", "file.directory", false, map[string]any{"name": d, "dir_mode": "750"}, true,
			"The directory " + d + " is in the correct state", nil, nil},
		{"mode, test mode", "file.directory", true, map[string]any{"name": d, "mode": "0700"}, nil,
			"The following files will be changed:\n" + d + ": mode - 0700\n", map[string]any{d: map[string]any{"mode": "0700"}},
			isDir(d, "0750")},
		{"mode", "file.directory", false, map[string]any{"name": d + "/", "mode": "0700"}, true, "Directory " + d + " updated",
			map[string]any{d: map[string]any{"mode": "0700"}, "mode": "0700"}, isDir(d, "0700")},
		{"no parent", "file.directory", false, map[string]any{"name": h.path("a", "b")}, false,
			"No directory to create " + h.path("a", "b") + " in", nil, absent(h.path("a"))},
		{"makedirs", "file.directory", false, map[string]any{"name": h.path("a", "b"), "makedirs": true, "user": "nobody"}, true, "",
			map[string]any{h.path("a", "b"): map[string]any{"directory": "new"}}, owned(h.path("a"), "nobody", "root", "0755")},
		{"relative", "file.directory", false, map[string]any{"name": "rel"}, false, "Specified file rel is not an absolute path", nil, nil},
		{"bad recurse", "file.directory", false, map[string]any{"name": d, "recurse": []any{"owner"}}, false,
			`Types for "recurse" limited to "user", "group", "mode", "ignore_files", "ignore_dirs", "silent".`, nil, nil},
	})
	f := h.path("file")
	h.write(f, "x", 0o644)
	h.steps([]step{
		{"file in the way", "file.directory", false, map[string]any{"name": f}, false,
			"Specified location " + f + " exists and is a file", nil, fileIs(f, "x", "")},
		{"force, test mode", "file.directory", true, map[string]any{"name": f, "force": true}, nil,
			"The following files will be changed:\n" + f + ": directory - new\n",
			map[string]any{"forced": "File would be forcibly replaced", f: map[string]any{"directory": "new"}}, nil},
		{"force", "file.directory", false, map[string]any{"name": f, "force": true}, true, "",
			map[string]any{"forced": "File was forcibly replaced", f: map[string]any{"directory": "new"}}, isDir(f, "")},
	})
}

func TestDirectoryRecurseAndClean(t *testing.T) {
	h := newHarness(t)
	d := h.path("d")
	h.write(h.path("d", "f"), "f", 0o644)
	h.write(h.path("d", "sub", "g"), "g", 0o600)
	if err := os.Chmod(d, 0o700); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"name": d, "user": "nobody", "group": "nogroup", "dir_mode": "750", "file_mode": "640",
		"recurse": []any{"user", "group", "mode"}}
	meta := func(mode string) map[string]any {
		return map[string]any{"user": "nobody", "group": "nogroup", "mode": mode}
	}
	h.steps([]step{
		{"recurse", "file.directory", false, args, true, "Directory " + d + " updated",
			map[string]any{d: meta("0750"), h.path("d", "f"): meta("0640"), h.path("d", "sub"): meta("0750"),
				h.path("d", "sub", "g"): meta("0640"), "user": "nobody", "group": "nogroup", "mode": anything},
			func(h *harness) string {
				for p, m := range map[string]string{d: "0750", h.path("d", "f"): "0640", h.path("d", "sub"): "0750",
					h.path("d", "sub", "g"): "0640"} {
					if msg := owned(p, "nobody", "nogroup", m)(h); msg != "" {
						return msg
					}
				}
				return ""
			}},
		{"recurse second run", "file.directory", false, args, true, "The directory " + d + " is in the correct state", nil, nil},
		{"silent", "file.directory", false, map[string]any{"name": d, "user": "root", "recurse": []any{"user", "silent"}}, true,
			"Directory " + d + " updated", map[string]any{"recursion": "Changes silenced", "user": "root"},
			owned(h.path("d", "sub", "g"), "root", "nogroup", "0640")},
	})
	h.write(h.path("d", "extra"), "e", 0o644)
	h.write(h.path("d", "keep.log"), "l", 0o644)
	h.low = map[string]any{"require": []any{map[string]any{"file": h.path("d", "f")}}}
	clean := map[string]any{"name": d, "clean": true, "exclude_pat": "*.log"}
	r := h.run(true, "file.directory", clean)
	wantPending := []string{h.path("d", "extra"), h.path("d", "sub"), h.path("d", "sub", "g")}
	var gotPending []string
	for p, ch := range r.Changes {
		if reflect.DeepEqual(ch, map[string]any{"removed": "Removed due to clean"}) {
			gotPending = append(gotPending, p)
		}
	}
	slices.Sort(gotPending)
	if r.Result != nil || !reflect.DeepEqual(gotPending, wantPending) {
		t.Errorf("clean, test mode: %v %v", state.Value(r.Result), r.Changes)
	}
	if _, err := os.Stat(h.path("d", "extra")); err != nil {
		t.Errorf("test mode removed a file")
	}
	r = h.run(false, "file.directory", clean)
	if !reflect.DeepEqual(r.Changes["removed"], []any{h.path("d", "extra"), h.path("d", "sub")}) ||
		r.Comment != "Files cleaned from directory "+d || state.Value(r.Result) != true {
		t.Errorf("clean: %v %q %v", state.Value(r.Result), r.Comment, r.Changes)
	}
	for p, want := range map[string]bool{"extra": false, "sub": false, "f": true, "keep.log": true} {
		if _, err := os.Stat(h.path("d", p)); (err == nil) != want {
			t.Errorf("after clean, %s present: %v", p, err == nil)
		}
	}
	h.steps([]step{{"clean second run", "file.directory", false, clean, true, "The directory " + d + " is in the correct state",
		nil, nil}})
}

func TestRecurse(t *testing.T) {
	h := newHarness(t)
	r := h.path("r")
	args := map[string]any{"name": r, "source": "salt://tree", "exclude_pat": "*.tmp", "file_mode": "0600", "dir_mode": "0700"}
	res := h.run(true, "file.recurse", args)
	if res.Result != nil || len(res.Changes) != 6 {
		t.Errorf("test mode: %v %q %v", state.Value(res.Result), res.Comment, res.Changes)
	}
	if _, err := os.Stat(r); err == nil {
		t.Errorf("test mode created %s", r)
	}
	mode := func(m string) map[string]any { return map[string]any{"diff": "New file", "mode": m} }
	// The files are written 0600 first, so their mode is not a change.
	newFile := map[string]any{"diff": "New file"}
	newDir := func(p string) map[string]any { return map[string]any{p: map[string]any{"directory": "new"}} }
	h.steps([]step{
		{"recurse", "file.recurse", false, args, true, "Recursively updated " + r,
			map[string]any{h.path("r", "sub"): newDir(h.path("r", "sub")), h.path("r", "sub", "deep"): newDir(h.path("r", "sub", "deep")),
				h.path("r", "a.txt"): newFile, h.path("r", "sub", "b.txt"): newFile, h.path("r", "sub", "deep", "c"): newFile},
			func(h *harness) string {
				for p, body := range map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "sub/deep/c": "c\n"} {
					if msg := fileIs(h.path("r", p), body, "0600")(h); msg != "" {
						return msg
					}
				}
				if msg := isDir(h.path("r", "sub", "deep"), "0700")(h); msg != "" {
					return msg
				}
				return absent(h.path("r", "skip.tmp"))(h)
			}},
		{"second run", "file.recurse", false, args, true, "The directory " + r + " is in the correct state", nil, nil},
		{"second run, test mode", "file.recurse", true, args, true, "The directory " + r + " is in the correct state", nil, nil},
	})
	h.write(h.path("r", "stale"), "s", 0o644)
	h.write(h.path("r", "local.tmp"), "s", 0o644)
	clean := map[string]any{"name": r, "source": "salt://tree", "exclude_pat": "*.tmp", "file_mode": "0600", "dir_mode": "0700",
		"clean": true}
	h.steps([]step{
		{"clean, test mode", "file.recurse", true, clean, nil, "#### removed ####\n" + h.path("r", "stale"), nil,
			exists(h.path("r", "stale"))},
		{"clean", "file.recurse", false, clean, true, "Recursively updated " + r,
			map[string]any{"removed": []any{h.path("r", "stale")}}, func(h *harness) string {
				if msg := absent(h.path("r", "stale"))(h); msg != "" {
					return msg
				}
				return exists(h.path("r", "local.tmp"))(h)
			}},
		{"template", "file.recurse", false, map[string]any{"name": h.path("t"), "source": "salt://tmpltree", "template": "jinja",
			"context": map[string]any{"who": "me"}}, true, "Recursively updated " + h.path("t"),
			map[string]any{h.path("t", "t.conf"): mode("0644")}, fileIs(h.path("t", "t.conf"), "who = me\n", "0644")},
		{"missing directory", "file.recurse", false, map[string]any{"name": h.path("m"), "source": "salt://nothere"}, false,
			"The directory 'nothere' does not exist on the salt fileserver in saltenv 'base'", nil, absent(h.path("m"))},
		{"not salt://", "file.recurse", false, map[string]any{"name": h.path("m"), "source": "/srv/tree"}, false,
			"Invalid source '/srv/tree' (must be a salt:// URI)", nil, nil},
		{"mode", "file.recurse", false, map[string]any{"name": h.path("m"), "source": "salt://tree", "mode": "0644"}, false,
			"'mode' is not allowed in 'file.recurse'. Please use 'file_mode' and 'dir_mode'.", nil, nil},
		{"path is a file", "file.recurse", false, map[string]any{"name": h.path("r", "a.txt"), "source": "salt://tree"}, false,
			"The path " + h.path("r", "a.txt") + " exists and is not a directory", nil, nil},
	})
}
