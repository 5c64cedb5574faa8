package file

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/state"
)

func (s *states) absentState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	switch {
	case name == "":
		return state.Failed(name, "Must provide name to file.absent")
	case !filepath.IsAbs(name):
		return state.Failed(name, "Specified file %s is not an absolute path", name)
	case name == "/":
		return state.Failed(name, `Refusing to make "/" absent`)
	}
	fi, err := os.Lstat(name)
	if err != nil {
		return state.Succeeded(name, fmt.Sprintf("File %s is not present", name), nil)
	}
	kind := "File"
	if fi.IsDir() {
		kind = "Directory"
	}
	removed := map[string]any{"removed": name}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("%s %s is set for removal", kind, name), removed)
	}
	if _, err := s.call(ctx, "file.remove", []any{name}, nil); err != nil {
		if fi.IsDir() {
			return state.Failed(name, "Failed to remove directory %s", name)
		}
		return state.Failed(name, "%v", err)
	}
	if fi.IsDir() {
		return state.Succeeded(name, fmt.Sprintf("Removed directory %s", name), removed)
	}
	return state.Succeeded(name, fmt.Sprintf("Removed file %s", name), removed)
}

func (s *states) existsState(_ context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	if name == "" {
		return state.Failed(name, "Must provide name to file.exists")
	}
	if _, err := os.Stat(name); err != nil {
		return state.Failed(name, "Specified path %s does not exist", name)
	}
	return state.Succeeded(name, fmt.Sprintf("Path %s exists", name), nil)
}

func (s *states) missingState(_ context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	if name == "" {
		return state.Failed(name, "Must provide name to file.missing")
	}
	if _, err := os.Stat(name); err == nil {
		return state.Failed(name, "Specified path %s exists", name)
	}
	return state.Succeeded(name, fmt.Sprintf("Path %s is missing", name), nil)
}

func (s *states) touchState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	return s.touch(ctx, name, in.Value("atime"), in.Value("mtime"), in.Bool("makedirs"))
}

// touch is Salt's file.touch state, which file.append uses too.
func (s *states) touch(ctx context.Context, name string, atime, mtime any, makedirs bool) state.Result {
	if name == "" {
		return state.Failed(name, "Must provide name to file.touch")
	}
	if !filepath.IsAbs(name) {
		return state.Failed(name, "Specified file %s is not an absolute path", name)
	}
	if state.From(ctx).Test {
		return checkTouch(name, atime, mtime)
	}
	dir := filepath.Dir(name)
	if makedirs {
		if _, err := os.Stat(dir); err != nil {
			if _, err := s.call(ctx, "file.mkdir", []any{dir}, nil); err != nil {
				return state.Failed(name, "%v", err)
			}
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return state.Failed(name, "Directory not present to touch file %s", name)
	}
	fi, statErr := os.Stat(name)
	kw := map[string]any{}
	if atime != nil {
		kw["atime"] = atime
	}
	if mtime != nil {
		kw["mtime"] = mtime
	}
	if _, err := s.call(ctx, "file.touch", []any{name}, kw); err != nil {
		return state.Failed(name, "%v", err)
	}
	if statErr != nil {
		return state.Succeeded(name, fmt.Sprintf("Created empty file %s", name), map[string]any{"new": name})
	}
	kind := "file"
	if fi.IsDir() {
		kind = "directory"
	}
	return state.Succeeded(name, fmt.Sprintf("Updated times on %s %s", kind, name), map[string]any{"touched": name})
}

// checkTouch is Salt's _check_touch, touch's test mode.
func checkTouch(name string, atime, mtime any) state.Result {
	if _, err := os.Stat(name); err != nil {
		return state.Pending(name, fmt.Sprintf("File %s is set to be created", name), map[string]any{"new": name})
	}
	st, err := statsOf(name, false)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	for k, v := range map[string]any{"atime": atime, "mtime": mtime} {
		if v != nil && py.Str(v) != py.Str(st[k]) {
			return state.Pending(name, fmt.Sprintf("Times set to be updated on file %s", name), map[string]any{"touched": name})
		}
	}
	return state.Succeeded(name, fmt.Sprintf("File %s exists and has the correct times", name), nil)
}

// defaultOwner is Salt's symlink default: the agent's user and that
// user's primary group.
func defaultOwner() (string, string) {
	u, err := user.LookupId(strconv.Itoa(os.Geteuid()))
	if err != nil {
		return strconv.Itoa(os.Geteuid()), strconv.Itoa(os.Getegid())
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		return u.Username, u.Gid
	}
	return u.Username, g.Name
}

func (s *states) symlinkState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	target := in.String("target")
	usr, group := py.Str(owner(in)), py.Str(in.Value("group"))
	if name == "" {
		return state.Failed(name, "Must provide name to file.symlink")
	}
	if !given(owner(in)) || !given(in.Value("group")) {
		du, dg := defaultOwner()
		if !given(owner(in)) {
			usr = du
		}
		if !given(in.Value("group")) {
			group = dg
			if given(owner(in)) {
				if u, err := user.Lookup(usr); err == nil {
					if g, err := user.LookupGroupId(u.Gid); err == nil {
						group = g.Name
					}
				}
			}
		}
	}
	var problems []string
	if uid, err := s.call(ctx, "file.user_to_uid", []any{usr}, nil); err != nil || uid == "" {
		problems = append(problems, fmt.Sprintf("User %s does not exist", usr))
	}
	if gid, err := s.call(ctx, "file.group_to_gid", []any{group}, nil); err != nil || gid == "" {
		problems = append(problems, fmt.Sprintf("Group %s does not exist", group))
	}
	if !filepath.IsAbs(name) {
		problems = append(problems, fmt.Sprintf("Specified file %s is not an absolute path", name))
	}
	if len(problems) > 0 {
		msg := problems[0]
		for _, p := range problems[1:] {
			msg += ". " + p
		}
		if len(problems) > 1 {
			msg += "."
		}
		return state.Failed(name, "%s", msg)
	}
	force, backupname := in.Bool("force"), in.String("backupname")
	if state.From(ctx).Test {
		return symlinkCheck(name, target, force, usr, group)
	}
	if fi, err := os.Stat(filepath.Dir(name)); err != nil || !fi.IsDir() {
		if !in.Bool("makedirs") {
			return state.Failed(name, "Directory %s for symlink is not present", filepath.Dir(name))
		}
		kw := map[string]any{"user": usr, "group": group}
		if m := normalizeMode(in.Value("mode")); m != "" {
			kw["mode"] = m
		}
		if _, err := s.call(ctx, "file.mkdir", []any{filepath.Dir(name)}, kw); err != nil {
			return state.Failed(name, "%v", err)
		}
	}
	changes := map[string]any{}
	fi, err := os.Lstat(name)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		cur, _ := os.Readlink(name)
		if filepath.Clean(cur) == filepath.Clean(target) {
			if s.linkOwnedBy(name, usr, group) {
				return state.Succeeded(name, fmt.Sprintf("Symlink %s is present and owned by %s:%s", name, usr, group), nil)
			}
			if s.lchown(ctx, name, usr, group) == nil && s.linkOwnedBy(name, usr, group) {
				return state.Succeeded(name, fmt.Sprintf("Set ownership of symlink %s to %s:%s", name, usr, group),
					map[string]any{"ownership": usr + ":" + group})
			}
			return state.Failed(name, "Failed to set ownership of symlink %s to %s:%s", name, usr, group)
		}
		if err := os.Remove(name); err != nil {
			return state.Failed(name, "Unable to remove symlink %s: %v", name, err)
		}
	case err == nil:
		switch {
		case backupname != "":
			if _, err := os.Lstat(backupname); err == nil {
				if !force {
					return state.Failed(name, "File exists where the backup target %s should go", backupname)
				}
				if _, err := s.call(ctx, "file.remove", []any{backupname}, nil); err != nil {
					return state.Failed(name, "%v", err)
				}
			}
			if err := os.Rename(name, backupname); err != nil {
				return state.Failed(name, "Unable to rename %s to backup %s: %v", name, backupname, err)
			}
		case force:
			if _, err := s.call(ctx, "file.remove", []any{name}, nil); err != nil {
				return state.Failed(name, "%v", err)
			}
		case fi.IsDir():
			return state.Failed(name, "Directory exists where the symlink %s should be", name)
		default:
			return state.Failed(name, "File exists where the symlink %s should be", name)
		}
	}
	if err := os.Symlink(target, name); err != nil {
		return state.Failed(name, "Unable to create new symlink %s -> %s: %v", name, target, err)
	}
	changes["new"] = name
	r := state.Succeeded(name, fmt.Sprintf("Created new symlink %s -> %s", name, target), changes)
	if !s.linkOwnedBy(name, usr, group) {
		if s.lchown(ctx, name, usr, group) != nil || !s.linkOwnedBy(name, usr, group) {
			r.Result = state.Bool(false)
			r.Comment += fmt.Sprintf(", but was unable to set ownership to %s:%s", usr, group)
		}
	}
	return r
}

// linkOwnedBy reports whether the symlink itself belongs to usr:group.
func (s *states) linkOwnedBy(name, usr, group string) bool {
	st, err := statsOf(name, false)
	return err == nil && sameOwner(usr, st["user"], st["uid"]) && sameOwner(group, st["group"], st["gid"])
}

// symlinkCheck is Salt's _symlink_check, symlink's test mode.
func symlinkCheck(name, target string, force bool, usr, group string) state.Result {
	fi, err := os.Lstat(name)
	if err != nil {
		return state.Pending(name, fmt.Sprintf("Symlink %s to %s is set for creation", name, target), map[string]any{"new": name})
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if cur, _ := os.Readlink(name); cur != target {
			return state.Pending(name, fmt.Sprintf("Link %s target is set to be changed to %s", name, target),
				map[string]any{"change": name})
		}
		st, err := statsOf(name, false)
		if err == nil && (!sameOwner(usr, st["user"], st["uid"]) || !sameOwner(group, st["group"], st["gid"])) {
			cur := py.Str(st["user"]) + ":" + py.Str(st["group"])
			return state.Pending(name, fmt.Sprintf("The symlink %s is present, but the ownership of the symlink would be changed from %s to %s:%s",
				name, cur, usr, group), map[string]any{"ownership": cur})
		}
		return state.Succeeded(name, fmt.Sprintf("The symlink %s is present", name), nil)
	}
	if force {
		// no changes: Salt's _symlink_check reports them only for a
		// link it would make or change
		return state.Pending(name, fmt.Sprintf("The file or directory %s is set for removal to make way for a new symlink targeting %s",
			name, target), nil)
	}
	return state.Failed(name, "File or directory exists where the symlink %s should be. Did you mean to use force?", name)
}
