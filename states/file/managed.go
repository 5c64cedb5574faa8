package file

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/internal/sysuser"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	filemod "github.com/brinehq/brine/modules/file"
	"github.com/brinehq/brine/state"
	"github.com/brinehq/brine/target"
)

// managedOpts are file.managed's arguments; file.recurse and file.line
// call it with their own.
type managedOpts struct {
	name                         string
	source                       any
	sourceHash                   string
	user, group, mode, dirMode   any
	template                     string
	makedirs, replace, create    bool
	context, defaults, backup    any
	showChanges, contentsNewline bool
	contents, pillar, grains     any
	delimiter                    string
	allowEmpty, follow, skip     bool
	extra                        map[string]any
	// verbatim writes contents as given (file.serialize, which Salt
	// hands to file.manage_file directly), not line by line.
	verbatim bool
}

func (s *states) managedState(ctx context.Context, in *function.Input) state.Result {
	return s.managed(ctx, managedOpts{
		name: in.String("name"), source: in.Value("source"), sourceHash: in.String("source_hash"),
		user: owner(in), group: in.Value("group"), mode: in.Value("mode"), dirMode: in.Value("dir_mode"),
		template: in.String("template"), makedirs: in.Bool("makedirs"), replace: in.Bool("replace"),
		create: in.Bool("create"), context: in.Value("context"), defaults: in.Value("defaults"),
		backup: in.Value("backup"), showChanges: in.Bool("show_changes"), contentsNewline: in.Bool("contents_newline"),
		contents: in.Value("contents"), pillar: in.Value("contents_pillar"), grains: in.Value("contents_grains"),
		delimiter: in.String("contents_delimiter"), allowEmpty: in.Bool("allow_empty"),
		follow: in.Bool("follow_symlinks"), skip: in.Bool("skip_verify"), extra: in.ExtraKwargs,
	})
}

// testNote ends Salt's test-mode comment for a file that would change.
const testNote = "\nNote: No changes made, actual changes may\nbe different due to other states."

func (s *states) managed(ctx context.Context, o managedOpts) state.Result {
	name := expand(o.name)
	test := state.From(ctx).Test
	if name == "" {
		return state.Failed(name, "Destination file name is required")
	}
	if o.mode != nil && noModes {
		return state.Failed(name, "The 'mode' option is not supported on Windows")
	}
	keepMode := false
	if m, ok := o.mode.(string); ok && strings.EqualFold(m, "keep") {
		keepMode, o.mode = true, nil
	}
	mode := normalizeMode(o.mode)
	count := 0
	for _, v := range []any{o.contents, o.pillar, o.grains} {
		if v != nil {
			count++
		}
	}
	switch {
	case py.Truth(o.source) && count > 0:
		return state.Failed(name, "'source' cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'")
	case keepMode && count > 0:
		return state.Failed(name, "Mode preservation cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'")
	case count > 1:
		return state.Failed(name, "Only one of 'contents', 'contents_pillar', and 'contents_grains' is permitted")
	}
	replace := o.replace
	if !py.Truth(o.source) && count == 0 {
		// Nothing to replace the file with: its contents are not managed.
		replace = false
	}
	var warnings []string
	if _, ok := o.extra["file_mode"]; ok {
		warnings = append(warnings, "The 'file_mode' argument will be ignored.  Please use 'mode' instead to set file permissions.")
	}
	var contents *string
	use := o.contents
	switch {
	case o.pillar != nil:
		data, err := modules.PillarOf(ctx, s.env)
		if err != nil {
			return state.Failed(name, "Unable to manage file: %v", err)
		}
		if use, err = lookupContents(data, o.pillar, o.delimiter, "Pillar"); err != nil {
			return state.Failed(name, "%s", err.Error())
		}
	case o.grains != nil:
		grains := map[string]any{}
		if s.env.Grains != nil {
			grains = s.env.Grains()
		}
		var err error
		if use, err = lookupContents(grains, o.grains, o.delimiter, "Grain"); err != nil {
			return state.Failed(name, "%s", err.Error())
		}
	}
	if use != nil {
		if !o.allowEmpty && !py.Truth(use) {
			id := "'contents'"
			if o.pillar != nil {
				id = "contents_pillar " + py.Str(o.pillar)
			}
			if o.grains != nil {
				id = "contents_grains " + py.Str(o.grains)
			}
			return state.Failed(name, "%s value would result in empty contents. Set allow_empty to True to allow the managed file to be empty.", id)
		}
		text, msg := contentsText(use, o)
		if msg != "" {
			return state.Failed(name, "%s", msg)
		}
		if o.template != "" {
			out, err := state.From(ctx).Template(ctx, o.template, name, []byte(text), s.templateContext(o, name, mode))
			if err != nil {
				return state.Failed(name, "%v", err)
			}
			text = string(out)
		}
		contents = &text
	}
	if !o.create {
		if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
			return state.Succeeded(name, fmt.Sprintf("File %s is not present and is not set for creation", name), nil)
		}
	}
	if msg := s.checkUser(ctx, o.user, o.group); msg != "" {
		return state.Failed(name, "%s", msg)
	}
	if !filepath.IsAbs(name) {
		return state.Failed(name, "Specified file %s is not an absolute path", name)
	}
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return state.Failed(name, "Specified target %s is a directory", name)
	}
	if _, ok := o.context.(map[string]any); o.context != nil && !ok {
		return state.Failed(name, "Context must be formed as a dict")
	}
	if _, ok := o.defaults.(map[string]any); py.Truth(o.defaults) && !ok {
		return state.Failed(name, "Defaults must be formed as a dict")
	}
	if _, err := os.Stat(name); !replace && err == nil {
		r := s.keepContents(ctx, name, o, mode)
		r.Warnings = warnings
		return r
	}
	var r state.Result
	if test {
		r = s.managedTest(ctx, name, o, mode, keepMode, contents)
	} else {
		r = s.manage(ctx, name, o, mode, keepMode, contents)
	}
	r.Warnings = warnings
	return r
}

// keepContents is replace: False on an existing file: only its owner and
// mode are kept.
func (s *states) keepContents(ctx context.Context, name string, o managedOpts, mode string) state.Result {
	changes := map[string]any{}
	p, err := s.checkPerms(ctx, name, o.user, o.group, mode, o.follow, changes)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	r := state.Result{Name: name, Changes: changes, Result: state.Bool(!p.failed), Comment: strings.Join(p.comments, "; ")}
	switch {
	case state.From(ctx).Test:
		if len(changes) > 0 {
			r.Result = nil
		}
		r.Comment = fmt.Sprintf("File %s not updated", name)
		if mode != "" && p.lmode != "" && mode != p.lmode {
			r.Comment = fmt.Sprintf("File %s will be updated with permissions %s from its current state of %s", name, mode, p.lmode)
		}
	case len(changes) == 0 && !p.failed:
		r.Comment = fmt.Sprintf("File %s exists with proper permissions. No changes made.", name)
	}
	return r
}

// source is a file.managed source resolved: where it comes from and,
// once known, its contents and their sha256.
type source struct {
	url      string
	salt     bool
	path     string // salt:// path, or the local path
	saltenv  string
	template bool
	data     []byte
	loaded   bool
	sum      string
	local    string // the local (cached) copy, for mode: keep
}

// resolveSource picks the source (the first of a list that exists) and
// learns the sha256 of what it will write, fetching the file only when a
// template must be rendered or the hash cannot be had otherwise.
func (s *states) resolveSource(ctx context.Context, o managedOpts, name, mode string) (*source, string) {
	saltenv := state.From(ctx).Saltenv
	if saltenv == "" {
		saltenv = "base"
	}
	var candidates []string
	hashes := map[string]string{}
	switch t := o.source.(type) {
	case string:
		candidates = []string{t}
	case []any:
		for _, x := range t {
			if m, ok := x.(map[string]any); ok && len(m) == 1 {
				for k, v := range m {
					candidates = append(candidates, k)
					hashes[k] = py.Str(v)
				}
				continue
			}
			candidates = append(candidates, py.Str(x))
		}
	default:
		return nil, fmt.Sprintf("Unable to manage file: invalid source %s", py.Str(o.source))
	}
	var picked *source
	for _, c := range candidates {
		src, err := parseSource(c, saltenv)
		if err != nil {
			return nil, "Unable to manage file: " + err.Error()
		}
		if len(candidates) == 1 {
			picked = src
			break
		}
		if src.salt {
			if s.env.Files == nil {
				continue
			}
			if h, err := s.env.Files.Hash(ctx, src.path, src.saltenv); err == nil && h != "" {
				src.sum = h
				picked = src
				break
			}
		} else if _, err := os.Stat(src.path); err == nil {
			picked = src
			break
		}
	}
	if picked == nil {
		return nil, "Unable to manage file: none of the specified sources were found"
	}
	picked.template = o.template != ""
	sourceHash := o.sourceHash
	if h, ok := hashes[picked.url]; ok && sourceHash == "" {
		sourceHash = h
	}
	if picked.salt {
		if s.env.Files == nil {
			return nil, fmt.Sprintf("Unable to manage file: %s: salt:// needs a master (this agent runs without one)", picked.url)
		}
		if picked.sum == "" && !picked.template {
			h, err := s.env.Files.Hash(ctx, picked.path, picked.saltenv)
			switch {
			case errors.Is(err, modules.ErrNoFile) || err == nil && h == "":
				return nil, fmt.Sprintf("Source file %s not found in saltenv '%s'", picked.url, picked.saltenv)
			case err != nil:
				return nil, "Unable to manage file: " + err.Error()
			}
			picked.sum = h
		}
	} else if _, err := os.Stat(picked.path); err != nil {
		return nil, fmt.Sprintf("Source file %s not found", picked.url)
	}
	if picked.template || !picked.salt {
		if msg := s.load(ctx, picked, o, name, mode); msg != "" {
			return nil, msg
		}
	}
	if !picked.salt && sourceHash != "" && !o.skip {
		raw, err := os.ReadFile(picked.path)
		if err != nil {
			return nil, "Unable to manage file: " + err.Error()
		}
		if msg := verify(raw, sourceHash, name); msg != "" {
			return nil, msg
		}
	}
	return picked, ""
}

// parseSource reads a source URL: salt://path[?saltenv=x], file://path or
// an absolute local path.
func parseSource(raw, saltenv string) (*source, error) {
	if rest, ok := strings.CutPrefix(raw, "salt://"); ok {
		p, query, _ := strings.Cut(rest, "?")
		if q, err := url.ParseQuery(query); err == nil && q.Get("saltenv") != "" {
			saltenv = q.Get("saltenv")
		}
		return &source{url: raw, salt: true, path: p, saltenv: saltenv}, nil
	}
	p := strings.TrimPrefix(raw, "file://")
	if scheme, _, ok := strings.Cut(raw, "://"); ok && scheme != "file" {
		return nil, fmt.Errorf("source %s: the %s scheme is not supported (salt://, file:// or a local path)", raw, scheme)
	}
	if !filepath.IsAbs(p) {
		return nil, fmt.Errorf("source %s: a local source must be an absolute path", raw)
	}
	return &source{url: raw, path: p}, nil
}

// load fetches a source's contents (from the master's cache for
// salt://) and renders them when a template is asked for.
func (s *states) load(ctx context.Context, src *source, o managedOpts, name, mode string) string {
	if src.loaded {
		return ""
	}
	local := src.path
	if src.salt {
		var err error
		local, err = s.env.Files.Cache(ctx, src.path, src.saltenv)
		if errors.Is(err, modules.ErrNoFile) {
			return fmt.Sprintf("Source file %s not found in saltenv '%s'", src.url, src.saltenv)
		}
		if err != nil {
			return "Unable to manage file: " + err.Error()
		}
	}
	data, err := os.ReadFile(local)
	if err != nil {
		return "Unable to manage file: " + err.Error()
	}
	src.local = local
	if src.template {
		if o.template != "jinja" {
			return fmt.Sprintf("Specified template format %s is not supported", o.template)
		}
		out, err := state.From(ctx).Template(ctx, o.template, src.url, data, s.templateContext(o, name, mode))
		if err != nil {
			return fmt.Sprintf("Unable to manage file: %v", err)
		}
		data = out
	}
	src.data, src.loaded = data, true
	sum := sha256.Sum256(data)
	src.sum = hex.EncodeToString(sum[:])
	return ""
}

// templateContext is what a template sees besides the state system's
// context: defaults, then context over them, and Salt's name, source,
// user, group and mode.
func (s *states) templateContext(o managedOpts, name, mode string) map[string]any {
	out := map[string]any{"name": name, "source": o.source, "user": o.user, "group": o.group, "mode": mode}
	if m, ok := o.defaults.(map[string]any); ok {
		maps.Copy(out, m)
	}
	if m, ok := o.context.(map[string]any); ok {
		maps.Copy(out, m)
	}
	// file.accumulated states' text for this file, as Salt adds it to
	// the template's context.
	if acc := s.acc.forFile(name); acc != nil {
		out["accumulator"] = acc
	}
	return out
}

// hashTypes are source_hash's digests by their hex length, most secure
// first, as Salt guesses a bare hash's type.
var hashTypes = []struct {
	name string
	size int
	mk   func() hash.Hash
}{
	{"sha512", 128, sha512.New}, {"sha384", 96, sha512.New384}, {"sha256", 64, sha256.New},
	{"sha224", 56, sha256.New224}, {"sha1", 40, sha1.New}, {"md5", 32, md5.New},
}

// verify checks raw against source_hash ("<type>=<hex>" or a bare hex
// digest).
func verify(raw []byte, sourceHash, name string) string {
	typ, want, ok := strings.Cut(sourceHash, "=")
	if !ok {
		typ, want = "", sourceHash
	}
	want = strings.ToLower(strings.TrimSpace(want))
	for _, h := range hashTypes {
		if typ == h.name || typ == "" && len(want) == h.size {
			d := h.mk()
			d.Write(raw)
			if got := hex.EncodeToString(d.Sum(nil)); got != want {
				return fmt.Sprintf("Specified %s checksum for %s (%s) does not match actual checksum (%s)", h.name, name, want, got)
			}
			return ""
		}
	}
	return fmt.Sprintf("Unable to manage file: invalid source_hash %s", sourceHash)
}

// sha256File is the hex sha256 of a file's contents.
func sha256File(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// contentDiff is the diff Salt shows between a file's old and new
// contents: a unified diff, or what replacing a binary file is called.
func contentDiff(old, new []byte, show bool) string {
	if !show {
		return "<show_changes=False>"
	}
	oldText, newText := isText(old), isText(new)
	switch {
	case !oldText && !newText:
		return "Replace binary file"
	case !oldText:
		return "Replace binary file with text file"
	case !newText:
		return "Replace text file with binary file"
	}
	return getDiff(splitLines(string(old), true), splitLines(string(new), true))
}

// managedTest is check_managed_changes: the changes a run would make.
func (s *states) managedTest(ctx context.Context, name string, o managedOpts, mode string, keepMode bool, contents *string) state.Result {
	src, mode, msg := s.sourceFor(ctx, o, name, mode, keepMode, contents)
	if msg != "" {
		return state.Failed(name, "%s", msg)
	}
	changes := map[string]any{}
	if _, err := os.Lstat(name); err != nil {
		changes["newfile"] = name
	} else {
		switch {
		case src != nil:
			cur, _ := sha256File(name)
			if cur != src.sum {
				if msg := s.load(ctx, src, o, name, mode); msg != "" {
					return state.Failed(name, "%s", msg)
				}
				old, _ := os.ReadFile(name)
				changes["diff"] = contentDiff(old, src.data, o.showChanges)
			}
		case contents != nil:
			old, _ := os.ReadFile(name)
			if !bytes.Equal(old, []byte(*contents)) {
				changes["diff"] = contentDiff(old, []byte(*contents), o.showChanges)
			}
		}
		if err := s.metaChanges(name, o.user, o.group, mode, o.follow, changes); err != nil {
			return state.Failed(name, "%v", err)
		}
	}
	if len(changes) > 0 {
		return state.Pending(name, fmt.Sprintf("The file %s is set to be changed", name)+testNote, changes)
	}
	return state.Succeeded(name, fmt.Sprintf("The file %s is in the correct state", name), nil)
}

// metaChanges adds the user, group and mode changes that path needs.
func (s *states) metaChanges(path string, usr, group any, mode string, follow bool, changes map[string]any) error {
	st, err := statsOf(path, follow)
	if err != nil {
		return err
	}
	if given(usr) && !sameOwner(usr, st["user"], st["uid"]) {
		changes["user"] = usr
	}
	if given(group) && !sameOwner(group, st["group"], st["gid"]) {
		changes["group"] = group
	}
	if mode != "" && mode != py.Str(st["mode"]) {
		changes["mode"] = mode
	}
	return nil
}

// localMode is the mode of a local file, for mode: keep.
func localMode(p string) string {
	st, err := filemod.Stats(p, "", true)
	if err != nil {
		return ""
	}
	mode, _ := st["mode"].(string)
	return mode
}

// sourceFor resolves o's source (when contents are not given), and with
// mode: keep reads the source's own mode; msg is a failure to report.
func (s *states) sourceFor(ctx context.Context, o managedOpts, name, mode string, keepMode bool, contents *string) (src *source, outMode, msg string) {
	if contents != nil || !py.Truth(o.source) {
		return nil, mode, ""
	}
	if src, msg = s.resolveSource(ctx, o, name, mode); msg != "" {
		return nil, mode, msg
	}
	if keepMode {
		if msg := s.load(ctx, src, o, name, mode); msg != "" {
			return nil, mode, msg
		}
		mode = localMode(src.local)
	}
	return src, mode, ""
}

// manage is manage_file: it writes what differs, then keeps the owner and
// mode.
func (s *states) manage(ctx context.Context, name string, o managedOpts, mode string, keepMode bool, contents *string) state.Result {
	src, mode, msg := s.sourceFor(ctx, o, name, mode, keepMode, contents)
	if msg != "" {
		return state.Failed(name, "%s", msg)
	}
	changes := map[string]any{}
	fi, err := os.Lstat(name)
	if err == nil && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0) {
		return s.updateFile(ctx, name, o, mode, src, contents, fi, changes)
	}
	// A new file.
	dir := filepath.Dir(name)
	if dfi, err := os.Stat(dir); err != nil || !dfi.IsDir() {
		if !o.makedirs {
			return state.Failed(name, "Parent directory not present")
		}
		dirMode := normalizeMode(o.dirMode)
		if dirMode == "" && mode != "" {
			dirMode = executable(mode)
		}
		kw := map[string]any{"user": o.user, "group": o.group}
		if dirMode != "" {
			kw["mode"] = dirMode
		}
		if _, err := s.call(ctx, "file.mkdir", []any{dir}, kw); err != nil {
			return state.Failed(name, "Unable to manage file: %v", err)
		}
	}
	var data []byte
	// The file is created as Salt creates it (its temporary copy is
	// 0600; an empty or contents file is created under the umask, 0600
	// when a mode is to be set), and check_perms then gives it its
	// mode, which is what changes["mode"] reports.
	initial := 0o666 &^ umask()
	switch {
	case src != nil:
		if msg := s.load(ctx, src, o, name, mode); msg != "" {
			return state.Failed(name, "%s", msg)
		}
		data, initial = src.data, 0o600
		changes["diff"] = "New file"
	case contents != nil:
		data = []byte(*contents)
		changes["diff"] = "New file"
		if mode != "" {
			initial = 0o600
		}
	default:
		if mode != "" {
			initial = 0o600
		}
		changes["new"] = fmt.Sprintf("file %s created", name)
	}
	if err := atomicfile.WriteBytes(name, data, initial); err != nil {
		delete(changes, "diff")
		delete(changes, "new")
		return failed(name, changes, "Unable to manage file: %v", err)
	}
	if mode == "" {
		mode = fmt.Sprintf("%04o", 0o666&^umask())
	}
	p, err := s.checkPerms(ctx, name, o.user, o.group, mode, false, changes)
	if err != nil {
		return failed(name, changes, "%v", err)
	}
	comment := strings.Join(p.comments, "; ")
	if comment == "" {
		comment = fmt.Sprintf("File %s updated", name)
		if src == nil && contents == nil {
			comment = "Empty file"
		}
	}
	return state.Result{Name: name, Changes: changes, Result: state.Bool(!p.failed), Comment: comment}
}

// updateFile manages an existing file (or symlink).
func (s *states) updateFile(ctx context.Context, name string, o managedOpts, mode string, src *source, contents *string,
	fi fs.FileInfo, changes map[string]any) state.Result {
	isLink := fi.Mode()&fs.ModeSymlink != 0
	real := name
	if isLink && o.follow {
		if r, err := filepath.EvalSymlinks(name); err == nil {
			real = r
		}
	}
	var want []byte
	switch {
	case src != nil:
		if isLink && !o.follow {
			break
		}
		if cur, err := sha256File(real); err != nil || cur != src.sum {
			if msg := s.load(ctx, src, o, name, mode); msg != "" {
				return state.Failed(name, "%s", msg)
			}
			want = src.data
		}
	case contents != nil:
		if isLink && !o.follow {
			break
		}
		old, err := os.ReadFile(real)
		if err != nil || !bytes.Equal(old, []byte(*contents)) {
			want = []byte(*contents)
		}
	}
	if want != nil {
		old, err := os.ReadFile(real)
		if err != nil {
			return state.Failed(name, "Unable to manage file: %v", err)
		}
		changes["diff"] = contentDiff(old, want, o.showChanges)
		if err := s.replaceFile(real, want, o.backup); err != nil {
			delete(changes, "diff")
			return failed(name, changes, "Failed to commit change: %v", err)
		}
	}
	if isLink && !o.follow && (src != nil || contents != nil) {
		var data []byte
		if src != nil {
			if msg := s.load(ctx, src, o, name, mode); msg != "" {
				return state.Failed(name, "%s", msg)
			}
			data = src.data
		} else {
			data = []byte(*contents)
		}
		perm := fs.FileMode(0o666 &^ umask())
		if err := atomicfile.WriteBytes(name, data, perm); err != nil {
			return failed(name, changes, "Failed to commit change: %v", err)
		}
		changes["diff"] = "Replace symbolic link with regular file"
	}
	p, err := s.checkPerms(ctx, name, o.user, o.group, mode, o.follow, changes)
	if err != nil {
		return failed(name, changes, "%v", err)
	}
	r := state.Result{Name: name, Changes: changes, Result: state.Bool(!p.failed), Comment: strings.Join(p.comments, "; ")}
	switch {
	case len(changes) > 0 && !p.failed:
		r.Comment = fmt.Sprintf("File %s updated", name)
	case len(changes) == 0 && !p.failed:
		r.Comment = fmt.Sprintf("File %s is in the correct state", name)
	}
	return r
}

// replaceFile writes data over the existing file p, keeping its mode and
// owner, after backing it up when backup asks for it.
func (s *states) replaceFile(p string, data []byte, backup any) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if b := py.Str(backup); backup != nil && (b == "minion" || b == "both") {
		if err := s.backupFile(p); err != nil {
			return err
		}
	}
	if err := atomicfile.WriteBytes(p, data, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return err
	}
	if uid, gid, ok := sysuser.Owner(fi); ok {
		return os.Chown(p, uid, gid)
	}
	return nil
}

// backupFile keeps a copy of p as Salt's backup_mode: minion does, under
// <cachedir>/file_backup/<p>_<Day_Mon_DD_HH:MM:SS_micro_YYYY>, which is
// where file.list_backups looks.
func (s *states) backupFile(p string) error {
	if s.env.CacheDir == "" {
		return errors.New("backup: the agent has no cache directory")
	}
	now := time.Now()
	stamp := fmt.Sprintf("%s_%06d_%s", now.Format("Mon_Jan_02_15:04:05"), now.Nanosecond()/1000, now.Format("2006"))
	dest := filepath.Join(s.env.CacheDir, "file_backup", strings.TrimPrefix(p, "/")+"_"+stamp)
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	old, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return atomicfile.WriteBytes(dest, old, fi.Mode().Perm())
}

// executable is Salt's dir_mode default from a file mode: each non-zero
// digit of the last three gets its execute bit.
func executable(mode string) string {
	digits := []byte(mode)
	if len(digits) > 3 {
		digits = digits[len(digits)-3:]
	}
	for i, d := range digits {
		if d != '0' {
			digits[i] = '0' + (d - '0') | 1
		}
	}
	return string(digits)
}

// umask is the process's umask, read without changing it (umask(2) sets
// it for every thread at once); 022 when the kernel does not say.
func umask() fs.FileMode {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0o022
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return fs.FileMode(n)
			}
		}
	}
	return 0o022
}

// strList is Salt's _validate_str_list: a string is one item, a list its
// items as strings, anything else its str().
func strList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			out = append(out, py.Str(x))
		}
		return out
	case map[string]any:
		return []string{py.ReprValue(t)}
	}
	return []string{py.Str(v)}
}

// lookupContents is contents_pillar and contents_grains: the value at a
// delimited key of data, or the values of a list of keys joined by
// newlines; what names a missing key.
func lookupContents(data map[string]any, key any, delimiter, what string) (any, error) {
	keys, isList := key.([]any)
	if !isList {
		keys = []any{key}
	}
	parts := make([]string, 0, len(keys))
	var one any
	for _, k := range keys {
		v, ok := target.Traverse(data, py.Str(k), delimiter)
		if !ok {
			return nil, fmt.Errorf("%s %s does not exist", what, py.Str(k))
		}
		one = v
		parts = append(parts, py.Str(v))
	}
	if isList {
		return strings.Join(parts, "\n"), nil
	}
	return one, nil
}

// statsOf is file.stats of path.
func statsOf(path string, follow bool) (map[string]any, error) {
	return filemod.Stats(path, "", follow)
}

// contentsText is the file's text from contents (a string or a list of
// lines): line by line, each ended with a newline, as Salt's file.managed
// joins them; as given when verbatim.
func contentsText(use any, o managedOpts) (string, string) {
	if o.verbatim {
		return py.Str(use), ""
	}
	parts := strList(use)
	if len(parts) == 0 {
		return "", "Contents specified by contents/contents_pillar/contents_grains is not a string or list of strings, and is not binary data. SLS is likely malformed."
	}
	var b strings.Builder
	for _, part := range parts {
		for _, line := range splitLines(part, false) {
			b.WriteString(strings.TrimRight(strings.TrimRight(line, "\n"), "\r"))
			b.WriteString("\n")
		}
	}
	text := b.String()
	if !o.contentsNewline {
		text = strings.TrimRight(strings.TrimRight(text, "\n"), "\r")
	}
	return text, ""
}
