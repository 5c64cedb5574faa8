package file

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/state"
)

// recurseTypes are what file.directory's recurse may list.
var recurseTypes = []string{"user", "group", "mode", "ignore_files", "ignore_dirs", "silent"}

// recurseSet is Salt's _get_recurse_set.
func recurseSet(v any) (map[string]bool, error) {
	if !py.Truth(v) {
		return map[string]bool{}, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf(`"recurse" must be formed as a list of strings`)
	}
	set := map[string]bool{}
	for _, x := range l {
		s, ok := x.(string)
		if !ok || !slices.Contains(recurseTypes, s) {
			quoted := make([]string, len(recurseTypes))
			for i, t := range recurseTypes {
				quoted[i] = `"` + t + `"`
			}
			return nil, commentf(`Types for "recurse" limited to %s.`, strings.Join(quoted, ", "))
		}
		set[s] = true
	}
	if set["ignore_files"] && set["ignore_dirs"] {
		return nil, commentf(`Must not specify "recurse" options "ignore_files" and "ignore_dirs" at the same time.`)
	}
	return set, nil
}

// walkEntry is one directory of a walk: its subdirectories and files.
type walkEntry struct {
	root        string
	dirs, files []string
}

// walk is Python's os.walk (top down, symlinks to directories listed as
// directories but not entered), limited to maxDepth levels below top
// when maxDepth >= 0.
func walk(top string, maxDepth int) []walkEntry {
	var out []walkEntry
	var visit func(dir string, depth int)
	visit = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		e := walkEntry{root: dir}
		for _, ent := range ents {
			p := filepath.Join(dir, ent.Name())
			isDir := ent.IsDir()
			if ent.Type()&fs.ModeSymlink != 0 {
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					isDir = true
				}
			}
			if isDir {
				e.dirs = append(e.dirs, ent.Name())
			} else {
				e.files = append(e.files, ent.Name())
			}
		}
		if maxDepth >= 0 && depth >= maxDepth {
			e.dirs = nil
		}
		out = append(out, e)
		for _, d := range e.dirs {
			p := filepath.Join(dir, d)
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
				visit(p, depth+1)
			}
		}
	}
	visit(top, 0)
	return out
}

// dirOpts are file.directory's arguments.
type dirOpts struct {
	name                        string
	user, group                 any
	recurse                     any
	maxDepth                    int
	dirMode, fileMode           string
	makedirs, clean, follow     bool
	force, allowSymlink, childs bool
	backupname                  string
	exclude                     any
	keep                        []string
}

func (s *states) directoryState(ctx context.Context, in *function.Input) state.Result {
	dirMode := in.Value("dir_mode")
	if m, ok := in.ExtraKwargs["mode"]; ok && !py.Truth(dirMode) {
		dirMode = m
	}
	fileMode := in.Value("file_mode")
	if !py.Truth(fileMode) {
		fileMode = dirMode
	}
	maxDepth := -1
	if in.Has("max_depth") {
		maxDepth = int(in.Int("max_depth"))
	}
	return s.directory(ctx, dirOpts{
		name: in.String("name"), user: owner(in), group: in.Value("group"), recurse: in.Value("recurse"),
		maxDepth: maxDepth, dirMode: normalizeMode(dirMode), fileMode: normalizeMode(fileMode),
		makedirs: in.Bool("makedirs"), clean: in.Bool("clean"), follow: in.Bool("follow_symlinks"),
		force: in.Bool("force"), allowSymlink: in.Bool("allow_symlink"), childs: in.Bool("children_only"),
		backupname: in.String("backupname"), exclude: in.Value("exclude_pat"),
		keep: requiredFiles(ctx, in.Value("require")),
	})
}

// requiredFiles are the paths of the file states this one requires
// (require: - file: <id or name>), which clean keeps. The state system
// passes requisites in the low chunk; an id that is a path is taken as the
// path it names.
func requiredFiles(ctx context.Context, require any) []string {
	if require == nil {
		require = state.From(ctx).Low["require"]
	}
	l, _ := require.([]any)
	var out []string
	for _, r := range l {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if f, ok := m["file"].(string); ok && filepath.IsAbs(f) {
			out = append(out, filepath.Clean(f))
		}
	}
	return out
}

func (s *states) directory(ctx context.Context, o dirOpts) state.Result {
	name := expand(o.name)
	test := state.From(ctx).Test
	if name == "" {
		return state.Failed(name, "Must provide name to file.directory")
	}
	if len(name) > 1 && strings.HasSuffix(name, "/") {
		name = strings.TrimRight(name, "/")
	}
	if o.maxDepth >= 0 && o.clean {
		return state.Failed(name, "Cannot specify both max_depth and clean")
	}
	if msg := s.checkUser(ctx, o.user, o.group); msg != "" && !test {
		return state.Failed(name, "%s", msg)
	}
	if !filepath.IsAbs(name) {
		return state.Failed(name, "Specified file %s is not an absolute path", name)
	}
	changes := map[string]any{}
	lfi, lerr := os.Lstat(name)
	isLink := lerr == nil && lfi.Mode()&fs.ModeSymlink != 0
	isFile := lerr == nil && lfi.Mode().IsRegular()
	if isLink {
		if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() {
			isFile = true
		}
	}
	if isFile || (!o.allowSymlink && isLink) || (o.force && isLink) {
		switch {
		case o.backupname != "":
			if _, err := os.Lstat(o.backupname); err == nil {
				if !o.force {
					return state.Failed(name, "File exists where the backup target %s should go", o.backupname)
				}
				if _, err := s.call(ctx, "file.remove", []any{o.backupname}, nil); err != nil {
					return state.Failed(name, "%v", err)
				}
			}
			if err := os.Rename(name, o.backupname); err != nil {
				return state.Failed(name, "%v", err)
			}
		case o.force:
			what := "File"
			switch {
			case isLink:
				what = "Symlink"
			case !isFile:
				what = "Directory"
			}
			if test {
				changes["forced"] = what + " would be forcibly replaced"
			} else {
				if _, err := s.call(ctx, "file.remove", []any{name}, nil); err != nil {
					return state.Failed(name, "%v", err)
				}
				changes["forced"] = what + " was forcibly replaced"
			}
		case isFile:
			return state.Failed(name, "Specified location %s exists and is a file", name)
		case isLink:
			return state.Failed(name, "Specified location %s exists and is a symlink", name)
		}
	}
	tresult, tcomment, tchanges := s.checkDirectory(ctx, name, o)
	for k, v := range tchanges {
		changes[k] = v
	}
	if test || len(changes) == 0 {
		r := state.Result{Name: name, Result: tresult, Comment: tcomment, Changes: changes}
		if len(changes) == 0 {
			r.Changes = nil
		}
		return r
	}
	if fi, err := os.Stat(name); err != nil || !fi.IsDir() {
		if pfi, err := os.Stat(filepath.Dir(name)); (err != nil || !pfi.IsDir()) && !o.makedirs {
			return state.Failed(name, "No directory to create %s in", name)
		}
		kw := map[string]any{"user": o.user, "group": o.group}
		if o.dirMode != "" {
			kw["mode"] = o.dirMode
		}
		if _, err := s.call(ctx, "file.mkdir", []any{name}, kw); err != nil {
			return state.Failed(name, "Failed to create directory %s", name)
		}
		changes[name] = map[string]any{"directory": "new"}
		return state.Result{Name: name, Result: state.Bool(true), Changes: changes}
	}
	ok := true
	var comment string
	var errs []string
	if !o.childs {
		p, err := s.checkPerms(ctx, name, o.user, o.group, o.dirMode, o.follow, changes)
		if err != nil {
			return failed(name, changes, "%v", err)
		}
		ok = !p.failed
		comment = strings.Join(p.comments, "; ")
	}
	var entries []walkEntry
	if py.Truth(o.recurse) || o.clean {
		entries = walk(name, o.maxDepth)
	}
	if py.Truth(o.recurse) {
		set, err := recurseSet(o.recurse)
		if err != nil {
			ok, comment = false, err.Error()
		}
		usr, group, fileMode, dirMode := o.user, o.group, o.fileMode, o.dirMode
		if set["user"] {
			if !given(usr) {
				ok, comment = false, "user not specified, but configured as a target for recursive ownership management"
			}
		} else {
			usr = nil
		}
		if set["group"] {
			if !given(group) {
				ok, comment = false, "group not specified, but configured as a target for recursive ownership management"
			}
		} else {
			group = nil
		}
		if !set["mode"] {
			fileMode, dirMode = "", ""
		}
		if set["silent"] {
			changes = map[string]any{"recursion": "Changes silenced"}
		}
		for _, e := range entries {
			if !set["ignore_files"] {
				for _, f := range e.files {
					if _, err := s.checkPerms(ctx, filepath.Join(e.root, f), usr, group, fileMode, o.follow, changes); err != nil {
						errs = append(errs, err.Error())
					}
				}
			}
			if !set["ignore_dirs"] {
				for _, d := range e.dirs {
					if _, err := s.checkPerms(ctx, filepath.Join(e.root, d), usr, group, dirMode, o.follow, changes); err != nil {
						errs = append(errs, err.Error())
					}
				}
			}
		}
	}
	if o.clean {
		if removed := s.cleanDir(ctx, name, o.keep, o.exclude); len(removed) > 0 {
			changes["removed"] = removed
			comment = fmt.Sprintf("Files cleaned from directory %s", name)
		}
	}
	if comment == "" {
		if o.childs {
			comment = fmt.Sprintf("Directory %s/* updated", name)
		} else if len(changes) > 0 {
			comment = fmt.Sprintf("Directory %s updated", name)
		}
	}
	if len(changes) == 0 && ok {
		if comment != "" {
			comment = fmt.Sprintf("Directory %s is in the correct state\n%s", name, comment)
		} else {
			comment = fmt.Sprintf("Directory %s is in the correct state", name)
		}
	}
	if len(errs) > 0 {
		ok = false
		comment += "\n\nThe following errors were encountered:\n"
		for _, e := range errs {
			comment += "\n- " + e
		}
	}
	r := state.Result{Name: name, Changes: changes, Result: state.Bool(ok), Comment: comment}
	if len(changes) == 0 {
		r.Changes = nil
	}
	return r
}

// checkDirectory is Salt's _check_directory: the changes the directory
// needs, by path, and the test-mode comment listing them.
func (s *states) checkDirectory(ctx context.Context, name string, o dirOpts) (*bool, string, map[string]any) {
	changes := map[string]any{}
	var entries []walkEntry
	if py.Truth(o.recurse) || o.clean {
		entries = walk(name, o.maxDepth)
	}
	var order []string
	add := func(p string, ch map[string]any) {
		if len(ch) == 0 {
			return
		}
		if _, seen := changes[p]; !seen {
			order = append(order, p)
		}
		changes[p] = ch
	}
	if py.Truth(o.recurse) {
		set, err := recurseSet(o.recurse)
		if err != nil {
			return state.Bool(false), err.Error(), changes
		}
		usr, group, fileMode, dirMode := o.user, o.group, o.fileMode, o.dirMode
		if !set["user"] {
			usr = nil
		}
		if !set["group"] {
			group = nil
		}
		if !set["mode"] {
			fileMode, dirMode = "", ""
		}
		for _, e := range entries {
			if !set["ignore_files"] {
				for _, f := range e.files {
					ch := map[string]any{}
					_ = s.metaChanges(filepath.Join(e.root, f), usr, group, fileMode, o.follow, ch)
					add(filepath.Join(e.root, f), ch)
				}
			}
			if !set["ignore_dirs"] {
				for _, d := range e.dirs {
					ch := map[string]any{}
					_ = s.metaChanges(filepath.Join(e.root, d), usr, group, dirMode, o.follow, ch)
					add(filepath.Join(e.root, d), ch)
				}
			}
		}
	}
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		ch := map[string]any{}
		_ = s.metaChanges(name, o.user, o.group, o.dirMode, o.follow, ch)
		add(name, ch)
	}
	if o.clean {
		for _, p := range s.cleanList(name, o.keep, o.exclude, false) {
			add(p, map[string]any{"removed": "Removed due to clean"})
		}
	}
	if fi, err := os.Stat(name); err != nil || !fi.IsDir() {
		add(name, map[string]any{"directory": "new"})
	}
	if len(changes) == 0 {
		return state.Bool(true), fmt.Sprintf("The directory %s is in the correct state", name), changes
	}
	var b strings.Builder
	b.WriteString("The following files will be changed:\n")
	for _, p := range order {
		ch := changes[p].(map[string]any)
		keys := make([]string, 0, len(ch))
		for k := range ch {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s: %s - %s\n", p, k, py.Str(ch[k]))
		}
	}
	return nil, b.String(), changes
}

// cleanList is what clean removes from root: every path under it that is
// not kept (a kept path keeps its parents) nor excluded by exclude_pat.
// A directory removed is not entered when remove is set.
func (s *states) cleanList(root string, keep []string, exclude any, remove bool) []string {
	kept := map[string]bool{root: true}
	for _, k := range keep {
		for p := k; ; p = filepath.Dir(p) {
			kept[p] = true
			if p == "/" || p == "." {
				break
			}
		}
	}
	var removed []string
	var visit func(dir string)
	visit = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		var subdirs []string
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() {
				subdirs = append(subdirs, p)
			}
			if kept[p] {
				continue
			}
			rel, _ := filepath.Rel(root, p)
			if !includeExclude(rel, nil, exclude) {
				continue
			}
			removed = append(removed, p)
			if remove {
				_ = os.RemoveAll(p)
			}
		}
		for _, d := range subdirs {
			visit(d)
		}
	}
	visit(root)
	return removed
}

// cleanDir removes what cleanList names (nothing in test mode) and
// returns it as Salt's list.
func (s *states) cleanDir(ctx context.Context, root string, keep []string, exclude any) []any {
	var out []any
	for _, p := range s.cleanList(root, keep, exclude, !state.From(ctx).Test) {
		out = append(out, p)
	}
	return out
}

// recurse is file.recurse: each file under the source directory managed
// (file.managed), each directory kept (file.directory), and, with clean,
// what the source does not have removed.
func (s *states) recurseState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	test := state.From(ctx).Test
	if _, ok := in.ExtraKwargs["mode"]; ok {
		return state.Failed(name, "'mode' is not allowed in 'file.recurse'. Please use 'file_mode' and 'dir_mode'.")
	}
	usr, group := owner(in), in.Value("group")
	dirMode := normalizeMode(in.Value("dir_mode"))
	fileMode := in.Value("file_mode")
	keepMode := false
	if m, ok := fileMode.(string); ok && strings.EqualFold(m, "keep") {
		keepMode, fileMode = true, nil
	}
	if msg := s.checkUser(ctx, usr, group); msg != "" {
		return state.Failed(name, "%s", msg)
	}
	if !filepath.IsAbs(name) {
		return state.Failed(name, "Specified file %s is not an absolute path", name)
	}
	sources := strList(in.Value("source"))
	for i, src := range sources {
		sources[i] = strings.TrimRight(src, "/")
		if !strings.HasPrefix(src, "salt://") {
			return state.Failed(name, "Invalid source '%s' (must be a salt:// URI)", src)
		}
	}
	if s.env.Files == nil {
		return state.Failed(name, "Recurse failed: salt:// needs a master (this agent runs without one)")
	}
	saltenv := state.From(ctx).Saltenv
	if saltenv == "" {
		saltenv = "base"
	}
	var srcPath, senv string
	var listed []string
	for _, src := range sources {
		p, err := parseSource(src, saltenv)
		if err != nil {
			return state.Failed(name, "Recurse failed: %v", err)
		}
		files, err := s.env.Files.List(ctx, p.saltenv, p.path+"/")
		if err != nil {
			return state.Failed(name, "Recurse failed: %v", err)
		}
		if len(files) > 0 || len(sources) == 1 {
			srcPath, senv, listed = p.path, p.saltenv, files
			break
		}
	}
	if srcPath == "" && len(sources) > 1 {
		return state.Failed(name, "Recurse failed: none of the specified sources were found")
	}
	if len(listed) == 0 {
		return state.Failed(name, "The directory '%s' does not exist on the salt fileserver in saltenv '%s'", srcPath, senv)
	}
	if fi, err := os.Stat(name); err != nil || !fi.IsDir() {
		if err == nil {
			return state.Failed(name, "The path %s exists and is not a directory", name)
		}
		if !test {
			kw := map[string]any{"user": usr, "group": group}
			if dirMode != "" {
				kw["mode"] = dirMode
			}
			if _, err := s.call(ctx, "file.mkdir", []any{name}, kw); err != nil {
				return state.Failed(name, "%v", err)
			}
		}
	}
	r := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{}}
	var commentKeys []string
	comments := map[string][]string{}
	addComment := func(p string, c ...string) {
		if _, ok := comments[p]; !ok {
			commentKeys = append(commentKeys, p)
		}
		comments[p] = append(comments[p], c...)
	}
	merge := func(p string, sub state.Result) {
		if sub.Result != nil && !*sub.Result || r.Result != nil && *r.Result {
			r.Result = sub.Result
		}
		if (sub.Result == nil || !*sub.Result) && sub.Comment != "" {
			addComment(p, sub.Comment)
		}
		if len(sub.Changes) > 0 {
			r.Changes[p] = sub.Changes
		}
	}
	include, exclude := in.Value("include_pat"), in.Value("exclude_pat")
	maxDepth := -1
	if in.Has("maxdepth") {
		maxDepth = int(in.Int("maxdepth"))
	}
	type fileSrc struct{ dest, src string }
	var files []fileSrc
	dirs := map[string]bool{}
	keep := []string{}
	for _, fn := range listed {
		rel := strings.TrimPrefix(fn, srcPath+"/")
		if strings.TrimSpace(fn) == "" || !validRel(rel, maxDepth) || !includeExclude(rel, include, exclude) {
			continue
		}
		dest := filepath.Join(name, filepath.FromSlash(rel))
		keep = append(keep, dest)
		dirs[filepath.Dir(dest)] = true
		src := "salt://" + fn
		if senv != saltenv {
			src += "?saltenv=" + senv
		}
		files = append(files, fileSrc{dest, src})
	}
	dirList := make([]string, 0, len(dirs))
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)
	clean := in.Bool("clean")
	for _, d := range dirList {
		if fi, err := os.Lstat(d); clean && err == nil && !fi.IsDir() {
			if test {
				merge(d, state.Result{Name: name, Comment: fmt.Sprintf("Replacing %s with a directory", d)})
				continue
			}
			if _, err := s.call(ctx, "file.remove", []any{d}, nil); err != nil {
				merge(d, state.Failed(name, "%v", err))
				continue
			}
			merge(d, state.Succeeded(name, "", map[string]any{"diff": "Replaced file with a directory"}))
		}
		merge(d, s.directory(ctx, dirOpts{name: d, user: usr, group: group, maxDepth: -1, dirMode: dirMode,
			makedirs: true, allowSymlink: true}))
	}
	var mode any = fileMode
	if keepMode {
		mode = "keep"
	}
	extra := map[string]any{}
	for k, v := range in.ExtraKwargs {
		if k != "mode" && k != "makedirs" {
			extra[k] = v
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].dest < files[j].dest })
	for _, f := range files {
		if fi, err := os.Lstat(f.dest); clean && err == nil && fi.IsDir() && in.Bool("replace") {
			if test {
				merge(f.dest, state.Result{Name: name, Comment: fmt.Sprintf("Replacing directory %s with a file", f.dest)})
				continue
			}
			if _, err := s.call(ctx, "file.remove", []any{f.dest}, nil); err != nil {
				merge(f.dest, state.Failed(name, "%v", err))
				continue
			}
			merge(f.dest, state.Succeeded(name, "", map[string]any{"diff": "Replaced directory with a new file"}))
		}
		merge(f.dest, s.managed(ctx, managedOpts{name: f.dest, source: f.src, user: usr, group: group, mode: mode,
			template: in.String("template"), makedirs: true, replace: in.Bool("replace"), create: true,
			context: in.Value("context"), defaults: in.Value("defaults"), backup: in.Value("backup"),
			showChanges: true, contentsNewline: true, delimiter: ":", allowEmpty: true, follow: true, extra: extra}))
	}
	if clean {
		keep = append(keep, requiredFiles(ctx, in.Value("require"))...)
		keep = append(keep, dirList...)
		if removed := s.cleanDir(ctx, name, keep, exclude); len(removed) > 0 {
			if test {
				if r.Result != nil && *r.Result {
					r.Result = nil
				}
				var paths []string
				for _, p := range removed {
					paths = append(paths, p.(string))
				}
				addComment("removed", paths...)
			} else {
				r.Changes["removed"] = removed
			}
		}
	}
	var parts []string
	for _, k := range commentKeys {
		parts = append(parts, fmt.Sprintf("\n#### %s ####\n%s", k, strings.Join(comments[k], "\n")))
	}
	r.Comment = strings.TrimSpace(strings.Join(parts, "\n"))
	if r.Comment == "" {
		r.Comment = fmt.Sprintf("Recursively updated %s", name)
	}
	if len(r.Changes) == 0 {
		r.Changes = nil
		if r.Result != nil && *r.Result {
			r.Comment = fmt.Sprintf("The directory %s is in the correct state", name)
		}
	}
	return r
}

// validRel is Salt's _is_valid_relpath: no .. component, and no deeper
// than maxDepth (when >= 0).
func validRel(rel string, maxDepth int) bool {
	if strings.Contains("/"+rel+"/", "/../") {
		return false
	}
	return maxDepth < 0 || strings.Count(strings.Trim(path.Clean(rel), "/"), "/") <= maxDepth
}
