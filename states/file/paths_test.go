package file

import (
	"fmt"
	"os"
	"testing"
	"time"
)

func exists(p string) func(h *harness) string {
	return func(*harness) string {
		if _, err := os.Lstat(p); err != nil {
			return p + " does not exist"
		}
		return ""
	}
}

func linksTo(p, target, owner string) func(h *harness) string {
	return func(*harness) string {
		got, err := os.Readlink(p)
		if err != nil || got != target {
			return fmt.Sprintf("%s links to %q (%v), want %q", p, got, err, target)
		}
		st, err := statsOf(p, false)
		if err != nil || fmt.Sprint(st["user"], ":", st["group"]) != owner {
			return fmt.Sprintf("%s owned by %v:%v, want %s", p, st["user"], st["group"], owner)
		}
		return ""
	}
}

func TestAbsentExistsMissing(t *testing.T) {
	h := newHarness(t)
	f, d := h.path("f"), h.path("d")
	h.write(f, "x", 0o644)
	h.write(h.path("d", "inner"), "x", 0o644)
	h.steps([]step{
		{"exists", "file.exists", false, map[string]any{"name": f}, true, "Path " + f + " exists", nil, nil},
		{"missing, present", "file.missing", false, map[string]any{"name": f}, false, "Specified path " + f + " exists", nil, nil},
		{"absent, test mode", "file.absent", true, map[string]any{"name": f}, nil, "File " + f + " is set for removal",
			map[string]any{"removed": f}, exists(f)},
		{"absent", "file.absent", false, map[string]any{"name": f}, true, "Removed file " + f, map[string]any{"removed": f}, absent(f)},
		{"absent again", "file.absent", false, map[string]any{"name": f}, true, "File " + f + " is not present", nil, nil},
		{"absent again, test mode", "file.absent", true, map[string]any{"name": f}, true, "File " + f + " is not present", nil, nil},
		{"exists, absent", "file.exists", false, map[string]any{"name": f}, false, "Specified path " + f + " does not exist", nil, nil},
		{"missing", "file.missing", false, map[string]any{"name": f}, true, "Path " + f + " is missing", nil, nil},
		{"directory, test mode", "file.absent", true, map[string]any{"name": d}, nil, "Directory " + d + " is set for removal",
			map[string]any{"removed": d}, exists(d)},
		{"directory", "file.absent", false, map[string]any{"name": d}, true, "Removed directory " + d, map[string]any{"removed": d},
			absent(d)},
		{"root", "file.absent", false, map[string]any{"name": "/"}, false, `Refusing to make "/" absent`, nil, nil},
		{"relative", "file.absent", false, map[string]any{"name": "tmp/x"}, false, "Specified file tmp/x is not an absolute path", nil, nil},
	})
}

func TestTouch(t *testing.T) {
	h := newHarness(t)
	f := h.path("stamp")
	h.steps([]step{
		{"test mode", "file.touch", true, map[string]any{"name": f}, nil, "File " + f + " is set to be created",
			map[string]any{"new": f}, absent(f)},
		{"create", "file.touch", false, map[string]any{"name": f}, true, "Created empty file " + f, map[string]any{"new": f},
			fileIs(f, "", "")},
		{"test mode, present", "file.touch", true, map[string]any{"name": f}, true, "File " + f + " exists and has the correct times",
			nil, nil},
		{"times", "file.touch", false, map[string]any{"name": f, "atime": int64(1000000000), "mtime": int64(1000000000)}, true,
			"Updated times on file " + f, map[string]any{"touched": f}, func(*harness) string {
				fi, err := os.Stat(f)
				if err != nil || !fi.ModTime().Equal(time.Unix(1000000000, 0)) {
					return fmt.Sprintf("mtime %v %v", fi.ModTime(), err)
				}
				return ""
			}},
		{"test mode, other times", "file.touch", true, map[string]any{"name": f, "mtime": int64(2000000000)}, nil,
			"Times set to be updated on file " + f, map[string]any{"touched": f}, nil},
		{"no directory", "file.touch", false, map[string]any{"name": h.path("no", "f")}, false,
			"Directory not present to touch file " + h.path("no", "f"), nil, nil},
		{"makedirs", "file.touch", false, map[string]any{"name": h.path("no", "f"), "makedirs": true}, true,
			"Created empty file " + h.path("no", "f"), map[string]any{"new": h.path("no", "f")}, exists(h.path("no", "f"))},
		{"relative", "file.touch", false, map[string]any{"name": "x"}, false, "Specified file x is not an absolute path", nil, nil},
	})
}

func TestSymlink(t *testing.T) {
	h := newHarness(t)
	l, target, other := h.path("link"), h.path("target"), h.path("other")
	h.write(target, "t", 0o644)
	h.steps([]step{
		{"test mode", "file.symlink", true, map[string]any{"name": l, "target": target}, nil,
			"Symlink " + l + " to " + target + " is set for creation", map[string]any{"new": l}, absent(l)},
		{"create", "file.symlink", false, map[string]any{"name": l, "target": target}, true,
			"Created new symlink " + l + " -> " + target, map[string]any{"new": l}, linksTo(l, target, "root:root")},
		{"second run", "file.symlink", false, map[string]any{"name": l, "target": target}, true,
			"Symlink " + l + " is present and owned by root:root", nil, nil},
		{"second run, test mode", "file.symlink", true, map[string]any{"name": l, "target": target}, true,
			"The symlink " + l + " is present", nil, nil},
		{"new target, test mode", "file.symlink", true, map[string]any{"name": l, "target": other}, nil,
			"Link " + l + " target is set to be changed to " + other, map[string]any{"change": l}, linksTo(l, target, "root:root")},
		{"new target", "file.symlink", false, map[string]any{"name": l, "target": other}, true,
			"Created new symlink " + l + " -> " + other, map[string]any{"new": l}, linksTo(l, other, "root:root")},
		{"ownership, test mode", "file.symlink", true, map[string]any{"name": l, "target": other, "user": "nobody", "group": "nogroup"},
			nil, "The symlink " + l + " is present, but the ownership of the symlink would be changed from root:root to nobody:nogroup",
			map[string]any{"ownership": "root:root"}, nil},
		{"ownership", "file.symlink", false, map[string]any{"name": l, "target": other, "user": "nobody", "group": "nogroup"}, true,
			"Set ownership of symlink " + l + " to nobody:nogroup", map[string]any{"ownership": "nobody:nogroup"},
			linksTo(l, other, "nobody:nogroup")},
		{"ownership second run", "file.symlink", false, map[string]any{"name": l, "target": other, "user": "nobody",
			"group": "nogroup"}, true, "Symlink " + l + " is present and owned by nobody:nogroup", nil, nil},
		{"file in the way", "file.symlink", false, map[string]any{"name": target, "target": other}, false,
			"File exists where the symlink " + target + " should be", nil, fileIs(target, "t", "")},
		{"file in the way, test mode", "file.symlink", true, map[string]any{"name": target, "target": other}, false,
			"File or directory exists where the symlink " + target + " should be. Did you mean to use force?", nil, nil},
		// Salt reports no changes here (resolver-formula's test run)
		{"file in the way, force, test mode", "file.symlink", true, map[string]any{"name": target, "target": other, "force": true}, nil,
			"The file or directory " + target + " is set for removal to make way for a new symlink targeting " + other, nil, fileIs(target, "t", "")},
		{"backupname", "file.symlink", false, map[string]any{"name": target, "target": other, "backupname": h.path("saved")}, true,
			"Created new symlink " + target + " -> " + other, map[string]any{"new": target},
			func(h *harness) string {
				if msg := fileIs(h.path("saved"), "t", "")(h); msg != "" {
					return msg
				}
				return linksTo(target, other, "root:root")(h)
			}},
		{"force", "file.symlink", false, map[string]any{"name": h.path("saved"), "target": other, "force": true}, true,
			"Created new symlink " + h.path("saved") + " -> " + other, map[string]any{"new": h.path("saved")},
			linksTo(h.path("saved"), other, "root:root")},
		{"no directory", "file.symlink", false, map[string]any{"name": h.path("sub", "l"), "target": other}, false,
			"Directory " + h.path("sub") + " for symlink is not present", nil, nil},
		{"makedirs", "file.symlink", false, map[string]any{"name": h.path("sub", "l"), "target": other, "makedirs": true}, true,
			"Created new symlink " + h.path("sub", "l") + " -> " + other, map[string]any{"new": h.path("sub", "l")},
			linksTo(h.path("sub", "l"), other, "root:root")},
		{"unknown user", "file.symlink", false, map[string]any{"name": l, "target": other, "user": "no-such-user", "group": "root"},
			false, "User no-such-user does not exist", nil, nil},
		{"relative and unknown group", "file.symlink", false, map[string]any{"name": "rel", "target": other,
			"group": "no-such-group"}, false, "Group no-such-group does not exist. Specified file rel is not an absolute path.", nil, nil},
	})
}
