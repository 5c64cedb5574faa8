// Package file is Salt's file state module (salt/states/file.py): files,
// directories and symlinks kept as an SLS describes them. file.managed
// writes a file from the master's file server (salt://), a local file or
// given contents, rendered with Jinja when asked; file.directory,
// file.recurse, file.symlink, file.absent, file.touch, file.exists and
// file.missing keep paths; file.append, file.replace, file.line,
// file.blockreplace and file.keyvalue edit text in place; file.serialize
// writes a data set as YAML or JSON, byte for byte as Salt's serializers
// do; file.accumulated gathers text that file.managed templates and
// file.blockreplace use.
//
// Returns are Salt's: changes {"diff": <unified diff>} ("New file" for a
// created one), {"mode": "0644"}, {"user": …}, {"group": …}, and Salt's
// comments, so that the highstate output and anything reading returns
// (reactors, returners) see what they would see from Salt. Ownership and
// mode changes go through the file execution module (file.chown,
// file.set_mode, file.mkdir…), files are replaced atomically, and a file
// that is already right is left alone: its content is compared by hash
// with the master's, without fetching it, and nothing is written.
//
// Paths must be absolute (after ~ expansion), as in Salt. What is left
// out: Windows ACLs, SELinux contexts and attrs, and http(s)/ftp sources.
package file

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	filemod "github.com/brinehq/brine/modules/file"
	"github.com/brinehq/brine/state"
)

// Module declares the file state functions.
func Module(env *modules.Env) []function.Func {
	s := &states{env: env}
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	str := func(n string) function.Param { return function.Param{Name: n, Kind: function.String} }
	anyp := func(n string) function.Param { return function.Param{Name: n, Kind: function.Any} }
	boolp := func(n string, def bool) function.Param {
		return function.Param{Name: n, Kind: function.Bool, Default: def}
	}
	handler := func(fn func(context.Context, *function.Input) state.Result) function.Handler {
		return func(ctx context.Context, in *function.Input) (any, error) { return fn(ctx, in), nil }
	}
	return []function.Func{
		{
			Name: "file.managed", Doc: "Keep a file's contents (source, contents), owner and mode.",
			Params: []function.Param{name, anyp("source"), {Name: "source_hash", Kind: function.String, Default: ""},
				str("source_hash_name"), anyp("user"), anyp("group"), anyp("mode"), anyp("attrs"), str("template"),
				boolp("makedirs", false), anyp("dir_mode"), anyp("context"), boolp("replace", true), anyp("defaults"),
				anyp("backup"), boolp("show_changes", true), boolp("create", true), anyp("contents"), str("tmp_ext"),
				anyp("contents_pillar"), anyp("contents_grains"), boolp("contents_newline", true),
				{Name: "contents_delimiter", Kind: function.String, Default: ":"}, str("encoding"),
				boolp("allow_empty", true), boolp("follow_symlinks", true), boolp("skip_verify", false),
				boolp("keep_source", true)},
			VarKwargs: true, Run: handler(s.managedState),
		},
		{
			Name: "file.directory", Doc: "Keep a directory, its owner and mode (recursively with recurse), and clean it.",
			Params: []function.Param{name, anyp("user"), anyp("group"), anyp("recurse"), {Name: "max_depth", Kind: function.Int},
				anyp("dir_mode"), anyp("file_mode"), boolp("makedirs", false), boolp("clean", false), anyp("require"),
				anyp("exclude_pat"), boolp("follow_symlinks", false), boolp("force", false), str("backupname"),
				boolp("allow_symlink", true), boolp("children_only", false)},
			VarKwargs: true, Run: handler(s.directoryState),
		},
		{
			Name: "file.recurse", Doc: "Copy a directory of the master's file server (salt://) to name.",
			Params: []function.Param{name, anyp("source"), boolp("keep_source", true), boolp("clean", false), anyp("require"),
				anyp("user"), anyp("group"), anyp("dir_mode"), anyp("file_mode"), anyp("sym_mode"), str("template"),
				anyp("context"), boolp("replace", true), anyp("defaults"), boolp("include_empty", false), anyp("backup"),
				anyp("include_pat"), anyp("exclude_pat"), {Name: "maxdepth", Kind: function.Int}, boolp("keep_symlinks", false),
				boolp("force_symlinks", false)},
			VarKwargs: true, Run: handler(s.recurseState),
		},
		{
			Name: "file.absent", Doc: "Remove a file, symlink or directory (recursively).",
			Params: []function.Param{name}, VarKwargs: true, Run: handler(s.absentState),
		},
		{
			Name: "file.exists", Doc: "Fail unless the path exists.",
			Params: []function.Param{name}, VarKwargs: true, Run: handler(s.existsState),
		},
		{
			Name: "file.missing", Doc: "Fail if the path exists.",
			Params: []function.Param{name}, VarKwargs: true, Run: handler(s.missingState),
		},
		{
			Name: "file.touch", Doc: "Create an empty file, or update an existing one's times.",
			Params: []function.Param{name, {Name: "atime", Kind: function.Int}, {Name: "mtime", Kind: function.Int},
				boolp("makedirs", false)},
			Run: handler(s.touchState),
		},
		{
			Name: "file.symlink", Doc: "Keep a symlink to target, owned by user and group.",
			Params: []function.Param{name, {Name: "target", Kind: function.String, Required: true}, boolp("force", false),
				str("backupname"), boolp("makedirs", false), anyp("user"), anyp("group"), anyp("mode")},
			VarKwargs: true, Run: handler(s.symlinkState),
		},
		{
			Name: "file.append", Doc: "Append the lines of text (a string or a list) that the file does not hold yet.",
			Params: []function.Param{name, anyp("text"), boolp("makedirs", false), anyp("source"), anyp("source_hash"),
				str("template"), anyp("sources"), anyp("source_hashes"), anyp("defaults"), anyp("context"),
				boolp("ignore_whitespace", true)},
			Run: handler(s.appendState),
		},
		{
			Name: "file.replace", Doc: "Replace what a regular expression matches (Python's re.sub), or add it when not found.",
			Params: []function.Param{name, {Name: "pattern", Kind: function.String, Required: true},
				{Name: "repl", Kind: function.Any, Required: true}, {Name: "count", Kind: function.Int, Default: int64(0)},
				{Name: "flags", Kind: function.Any, Default: int64(8)}, {Name: "bufsize", Kind: function.Any, Default: int64(1)},
				boolp("append_if_not_found", false), boolp("prepend_if_not_found", false), anyp("not_found_content"),
				{Name: "backup", Kind: function.Any, Default: ".bak"}, boolp("show_changes", true),
				boolp("ignore_if_missing", false), boolp("backslash_literal", false)},
			Run: handler(s.replaceState),
		},
		{
			Name: "file.line", Doc: "Ensure, replace, delete or insert one line (mode), before/after others or at a location.",
			Params: []function.Param{name, anyp("content"), str("match"), str("mode"), str("location"), str("before"),
				str("after"), boolp("show_changes", true), boolp("backup", false), boolp("quiet", false), boolp("indent", true),
				boolp("create", false), anyp("user"), anyp("group"), anyp("file_mode")},
			Run: handler(s.lineState),
		},
		s.blockreplaceFunc(),
		s.serializeFunc(),
		s.keyvalueFunc(),
		s.accumulatedFunc(),
	}
}

// states runs the file states of one agent.
type states struct {
	env *modules.Env
	acc accumulators // what file.accumulated states gave
}

// call runs an execution function of the agent.
func (s *states) call(ctx context.Context, fun string, args []any, kwargs map[string]any) (any, error) {
	if s.env.Functions == nil {
		return nil, fmt.Errorf("%s: the agent has no execution functions", fun)
	}
	return s.env.Functions.Call(ctx, fun, args, kwargs, nil)
}

// expand is Python's os.path.expanduser.
func expand(p string) string {
	rest, ok := strings.CutPrefix(p, "~")
	if !ok {
		return p
	}
	who, tail, _ := strings.Cut(rest, "/")
	var home string
	if who == "" {
		home, _ = os.UserHomeDir()
	} else if u, err := user.Lookup(who); err == nil {
		home = u.HomeDir
	}
	if home == "" {
		return p
	}
	return filepath.Join(home, tail)
}

// normalizeMode is Salt's salt.utils.files.normalize_mode: quotes and
// leading zeros stripped, padded to four digits ("644" and 644 are
// "0644"); "" for none.
func normalizeMode(v any) string {
	if v == nil {
		return ""
	}
	s := strings.ReplaceAll(py.Str(v), "0o", "0")
	s = strings.TrimLeft(strings.Trim(s, `"'`), "0")
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

// given is Python's truth of an optional user or group argument.
func given(v any) bool { return v != nil && v != "" }

// owner returns the user argument, or Salt's undocumented owner alias.
func owner(in *function.Input) any {
	if u := in.Value("user"); given(u) {
		return u
	}
	return in.ExtraKwargs["owner"]
}

// checkUser is Salt's _check_user: the message naming a user or group
// that does not exist on this machine, "" when both do. In test mode it
// is only a warning, as Salt's: a state run that creates the user first
// (users-formula's user.present before its files) must not fail its test.
func (s *states) checkUser(ctx context.Context, usr, group any) string {
	msg := s.missingOwner(ctx, usr, group)
	if msg != "" && state.From(ctx).Test {
		if s.env != nil && s.env.Log != nil {
			s.env.Log.Warn(strings.TrimSpace(msg))
		}
		return ""
	}
	return msg
}

func (s *states) missingOwner(ctx context.Context, usr, group any) string {
	var msg string
	if given(usr) {
		if uid, err := s.call(ctx, "file.user_to_uid", []any{usr}, nil); err != nil || uid == "" {
			msg += fmt.Sprintf("User %s is not available ", py.Str(usr))
		}
	}
	// Windows ignores group (Salt logs that it does).
	if given(group) && !noModes {
		if gid, err := s.call(ctx, "file.group_to_gid", []any{group}, nil); err != nil || gid == "" {
			msg += fmt.Sprintf("Group %s is not available", py.Str(group))
		}
	}
	return msg
}

// sameOwner reports whether want (a name, or an id) names the owner
// Stats reported as name and id.
func sameOwner(want, name, id any) bool {
	switch w := want.(type) {
	case int64:
		return int64(toInt(id)) == w
	case string:
		if w == py.Str(name) {
			return true
		}
		if n, err := strconv.Atoi(w); err == nil {
			return n == toInt(id)
		}
	}
	return false
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case uint32:
		return int(n)
	}
	return -1
}

// perms is what checkPerms found and did.
type perms struct {
	lmode    string
	comments []string
	failed   bool
}

// checkPerms is Salt's file.check_perms: it sets path's mode, user and
// group where they differ (or, in test mode, only reports it), adding
// "mode", "user" and "group" to changes.
func (s *states) checkPerms(ctx context.Context, path string, usr, group any, mode string, follow bool, changes map[string]any) (perms, error) {
	var p perms
	st, err := filemod.Stats(path, "", follow)
	if err != nil {
		return p, fmt.Errorf("%s does not exist", path)
	}
	if noModes {
		return s.checkOwner(ctx, path, usr, st, changes)
	}
	test := state.From(ctx).Test
	p.lmode = py.Str(st["mode"])
	fi, _ := os.Lstat(path)
	isLink := fi != nil && fi.Mode()&fs.ModeSymlink != 0
	if mode != "" && !(isLink && !follow) && mode != p.lmode {
		if test {
			changes["mode"] = mode
		} else if _, err := s.call(ctx, "file.set_mode", []any{path, mode}, nil); err != nil {
			p.failed = true
			p.comments = append(p.comments, fmt.Sprintf("Failed to change mode to %s", mode))
		} else {
			changes["mode"] = mode
		}
	}
	chUser := given(usr) && !sameOwner(usr, st["user"], st["uid"])
	chGroup := given(group) && !sameOwner(group, st["group"], st["gid"])
	if !chUser && !chGroup {
		return p, nil
	}
	if test {
		if chUser {
			changes["user"] = usr
		}
		if chGroup {
			changes["group"] = group
		}
		return p, nil
	}
	u, g := any(""), any("")
	if chUser {
		u = usr
	}
	if chGroup {
		g = group
	}
	if isLink && !follow {
		err = s.lchown(ctx, path, u, g)
	} else {
		_, err = s.call(ctx, "file.chown", []any{path, u, g}, nil)
	}
	if err != nil {
		p.failed = true
	}
	now, serr := filemod.Stats(path, "", follow)
	if serr != nil {
		return p, serr
	}
	for _, o := range []struct {
		changed  bool
		want     any
		name, id string
	}{{chUser, usr, "user", "uid"}, {chGroup, group, "group", "gid"}} {
		switch {
		case !o.changed:
		case sameOwner(o.want, now[o.name], now[o.id]):
			changes[o.name] = o.want
		default:
			p.failed = true
			p.comments = append(p.comments, fmt.Sprintf("Failed to change %s to %s", o.name, py.Str(o.want)))
		}
	}
	return p, nil
}

// ids resolves a user and a group ("" or nil: unchanged, -1) to ids.
func (s *states) ids(ctx context.Context, usr, group any) (int, int, error) {
	uid, gid := -1, -1
	if given(usr) {
		v, err := s.call(ctx, "file.user_to_uid", []any{usr}, nil)
		if err != nil || v == "" {
			return 0, 0, fmt.Errorf("user %s does not exist", py.Str(usr))
		}
		uid = toInt(v)
	}
	if given(group) {
		v, err := s.call(ctx, "file.group_to_gid", []any{group}, nil)
		if err != nil || v == "" {
			return 0, 0, fmt.Errorf("group %s does not exist", py.Str(group))
		}
		gid = toInt(v)
	}
	return uid, gid, nil
}

// lchown sets the owner of path itself, a symlink included.
func (s *states) lchown(ctx context.Context, path string, usr, group any) error {
	uid, gid, err := s.ids(ctx, usr, group)
	if err != nil {
		return err
	}
	return os.Lchown(path, uid, gid)
}

// checkFile is Salt's _check_file: an absolute path that exists.
func checkFile(name string) (bool, string) {
	if !filepath.IsAbs(name) {
		return false, fmt.Sprintf("Specified file %s is not an absolute path", name)
	}
	if _, err := os.Stat(name); err != nil {
		return false, fmt.Sprintf("%s: file not found", name)
	}
	return true, ""
}

// failed is a failed result carrying the changes made so far.
func failed(name string, changes map[string]any, format string, args ...any) state.Result {
	r := state.Failed(name, format, args...)
	if len(changes) > 0 {
		r.Changes = changes
	}
	return r
}

// isText is Salt's files.is_text.
var isText = filemod.IsText

// patternMatch is Salt's include/exclude pattern: a glob (fnmatch, * also
// matching /), or a regular expression after E@.
func patternMatch(path, pat string) bool {
	if re, ok := strings.CutPrefix(pat, "E@"); ok {
		r, err := regexp.Compile(re)
		return err == nil && r.MatchString(path)
	}
	return fnmatch.Compile(pat).Match(path)
}

// includeExclude is Salt's check_include_exclude: whether path passes the
// include and exclude patterns (each one pattern or a list).
func includeExclude(path string, include, exclude any) bool {
	any1 := func(v any) (bool, bool) {
		var pats []string
		switch t := v.(type) {
		case nil:
			return false, false
		case string:
			if t == "" {
				return false, false
			}
			pats = []string{t}
		case []any:
			for _, x := range t {
				pats = append(pats, py.Str(x))
			}
		default:
			pats = []string{py.Str(t)}
		}
		for _, p := range pats {
			if patternMatch(path, p) {
				return true, true
			}
		}
		return false, true
	}
	inc, hasInc := any1(include)
	exc, hasExc := any1(exclude)
	switch {
	case hasInc && hasExc:
		return inc && !exc
	case hasInc:
		return inc
	case hasExc:
		return !exc
	}
	return true
}

// comment is a failure worded as Salt words it: it becomes the state's
// comment as it is, capitals and full stop included.
type comment string

func (c comment) Error() string { return string(c) }

// commentf formats a comment.
func commentf(format string, args ...any) error { return comment(fmt.Sprintf(format, args...)) }
