// Package archive is Salt's archive state module: archive.extracted, an
// archive (tar, tar.gz, tar.bz2, tar.xz, zip) unpacked into a directory
// once, and again only when some of its files or directories are
// missing, with Salt's arguments, changes ({extracted_files,
// directories_created, removed, "updated ownership"}) and comments, so
// that formulas installing software from tarballs run unchanged.
//
// Archives are read with Go's archive/tar, archive/zip, compress/gzip and
// compress/bzip2 (xz through the xz command, as Salt falls back to it);
// tar's own command runs only when options are given, as in Salt. Unlike
// Salt (Python's tarfile extracts whatever path an entry names), an entry
// whose path or link would leave the target directory fails the state
// before anything is written: an archive from the network must not be
// able to write /etc/cron.d.
package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	filemod "github.com/brinehq/brine/modules/file"
	"github.com/brinehq/brine/state"
)

// Module declares archive.extracted.
func Module(env *modules.Env) []function.Func {
	s := &states{env: env}
	anyp := func(n string, def any) function.Param {
		return function.Param{Name: n, Kind: function.Any, Default: def}
	}
	boolp := func(n string, def bool) function.Param {
		return function.Param{Name: n, Kind: function.Bool, Default: def}
	}
	return []function.Func{{
		Name: "archive.extracted", Doc: "Extract an archive (tar, tar.gz/bz2/xz, zip; salt://, local or http(s)) into the " +
			"directory name, unless its contents are there already.",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true}, anyp("source", nil),
			anyp("source_hash", nil), anyp("source_hash_name", nil), boolp("source_hash_update", false),
			boolp("skip_files_list_verify", false), boolp("skip_verify", false), anyp("password", nil), anyp("options", nil),
			anyp("list_options", nil), boolp("force", false), boolp("overwrite", false), boolp("clean", false),
			boolp("clean_parent", false), anyp("user", nil), anyp("group", nil), anyp("if_missing", nil),
			anyp("trim_output", false), anyp("use_cmd_unzip", nil), boolp("extract_perms", true),
			boolp("enforce_toplevel", true), anyp("enforce_ownership_on", nil), anyp("archive_format", nil),
			boolp("use_etag", false)},
		VarKwargs: true,
		Run:       func(ctx context.Context, in *function.Input) (any, error) { return s.extracted(ctx, in), nil },
	}}
}

type states struct{ env *modules.Env }

// isAbs is Salt's _path_is_abs: None counts as absolute.
func isAbs(v any) bool { return v == nil || filepath.IsAbs(py.Str(v)) }

// guessFormat is Salt's files.guess_archive_type.
func guessFormat(name string) string {
	name = strings.ToLower(name)
	for _, e := range []string{"tar", "tar.gz", "tgz", "tar.bz2", "tbz2", "tbz", "tar.xz", "txz", "tar.lzma", "tlz"} {
		if strings.HasSuffix(name, "."+e) {
			return "tar"
		}
	}
	for _, e := range []string{"zip", "rar"} {
		if strings.HasSuffix(name, "."+e) {
			return e
		}
	}
	return ""
}

var stripRe = regexp.MustCompile(`--strip(?:-components)?(?:\s+|=)["']?(\d+)["']?`)

// extracted is archive.extracted; its return names the state as the SLS
// did (extract works with name ending in a slash, as Salt does).
func (s *states) extracted(ctx context.Context, in *function.Input) state.Result {
	r := s.extractedState(ctx, in)
	r.Name = in.String("name")
	return r
}

func (s *states) extractedState(ctx context.Context, in *function.Input) state.Result {
	name := in.String("name")
	test := state.From(ctx).Test
	fail := func(format string, args ...any) state.Result { return state.Failed(name, format, args...) }
	if in.Bool("skip_files_list_verify") && in.Bool("skip_verify") {
		return fail(`Only one of "skip_files_list_verify" and "skip_verify" can be set to True`)
	}
	if !filepath.IsAbs(name) {
		return fail("%s is not an absolute path", name)
	}
	name = strings.TrimRight(name, "/")
	if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() {
		return fail("%s exists and is not a directory", name)
	}
	name += "/"
	ifMissing, ownOn := in.Value("if_missing"), in.Value("enforce_ownership_on")
	if !isAbs(ifMissing) {
		return fail("Value for 'if_missing' is not an absolute path")
	}
	if !isAbs(ownOn) {
		return fail("Value for 'enforce_ownership_on' is not an absolute path")
	}
	if ownOn != nil {
		if rel, err := filepath.Rel(name, py.Str(ownOn)); err != nil || strings.HasPrefix(rel, "../") {
			return fail("Value for 'enforce_ownership_on' must be within %s", name)
		}
	}
	if ifMissing != nil {
		if _, err := os.Stat(py.Str(ifMissing)); err == nil {
			return state.Succeeded(name, fmt.Sprintf("Path %s exists", py.Str(ifMissing)), nil)
		}
	}
	usr, grp := in.Value("user"), in.Value("group")
	uid, gid := -1, -1
	if py.Truth(usr) {
		id, ok := lookupID(usr, user.Lookup, func(u *user.User) string { return u.Uid })
		if !ok {
			return fail("User %s does not exist", py.Str(usr))
		}
		uid = id
	}
	if py.Truth(grp) {
		id, ok := lookupID(grp, func(n string) (*user.Group, error) { return user.LookupGroup(n) },
			func(g *user.Group) string { return g.Gid })
		if !ok {
			return fail("Group %s does not exist", py.Str(grp))
		}
		gid = id
	}
	var warnings []string
	if in.Bool("source_hash_update") && !py.Truth(in.Value("source_hash")) {
		warnings = append(warnings, "The 'source_hash_update' argument is ignored when 'source_hash' is not also specified.")
	}
	src, fromMaster, err := s.sourceMatch(ctx, in.Value("source"))
	if err != nil {
		return fail("%v", err)
	}
	u, _ := url.Parse(src)
	scheme := ""
	if u != nil {
		scheme = strings.ToLower(u.Scheme)
	}
	local := scheme == "" || scheme == "file"
	cached := ""
	if local {
		cached = src
		if scheme == "file" {
			cached = u.Path
		}
		if r, err := filepath.EvalSymlinks(cached); err == nil {
			cached = r
		}
		if fi, err := os.Stat(cached); err != nil || !fi.Mode().IsRegular() {
			return fail("Source file '%s' does not exist", cached)
		}
		src = cached
	}
	format := strings.ToLower(py.Str(in.Value("archive_format")))
	if !py.Truth(in.Value("archive_format")) {
		base := src
		if u != nil && !local {
			base = u.Path
		}
		if format = guessFormat(base); format == "" {
			return fail("Could not guess archive_format from the value of the 'source' argument. Please set this " +
				"archive_format to one of the following: tar, rar, zip")
		}
	}
	switch format {
	case "tar", "zip":
	case "rar":
		return fail("archive.unrar function not available, rar/unrar might not be installed on minion")
	default:
		return fail("Invalid archive_format '%s'. Either set it to a supported value (tar, rar, zip) or remove this "+
			"argument and the archive format will be guessed based on file extension.", format)
	}
	options := ""
	if v := in.Value("options"); v != nil {
		options = py.Str(v)
	}
	strip := 0
	if options != "" && format == "tar" {
		if m := stripRe.FindStringSubmatch(options); m != nil {
			strip, _ = strconv.Atoi(m[1])
		}
	}
	if format == "zip" && options != "" {
		return fail("'options' for zip archives (unzip's command line) are not supported by brine: " +
			"the archive is extracted with Go's zip reader")
	}
	if py.Truth(in.Value("password")) {
		if format != "zip" {
			return fail("The 'password' argument is only supported for zip archives")
		}
		return fail("Password-protected zip archives are not supported by brine")
	}
	trim := 0
	switch t := in.Value("trim_output").(type) {
	case bool:
		if t {
			trim = 100
		}
	case int64:
		trim = int(t)
	case nil:
	default:
		n, err := strconv.Atoi(py.Str(t))
		if err != nil {
			return fail("Invalid value for trim_output, must be True/False or an integer")
		}
		trim = n
	}
	hashName := ""
	if v := in.Value("source_hash_name"); py.Truth(v) {
		hashName = py.Str(v)
	}
	sum, err := s.sourceSum(ctx, in.Value("source_hash"), src, hashName)
	if err != nil {
		return fail("%v", err)
	}
	if !local {
		if test {
			return state.Pending(name, fmt.Sprintf("Archive %s would be cached (if necessary) and checked to discover if "+
				"extraction is needed", redact(src)), nil)
		}
		cached = fromMaster
		if cached == "" {
			if cached, err = s.cache(ctx, src, sum, in.Bool("skip_verify")); err != nil {
				return fail("%v", err)
			}
		} else if sum.Hsum != "" && !in.Bool("skip_verify") {
			if got, err := filemod.Hash(cached, sum.HashType); err != nil || got != sum.Hsum {
				return fail("File is cached to %s, but the hash (%s) does not match the specified hash (%s)", cached, got, sum.Hsum)
			}
		}
	}
	contents, err := list(ctx, cached, format, strip)
	if err != nil {
		return fail("%v", err)
	}
	if in.Bool("enforce_toplevel") && (len(contents.topDirs) > 1 || len(contents.topFiles) > 0) {
		return fail("Archive does not have a single top-level directory. To allow this archive to be extracted, set "+
			"'enforce_toplevel' to False. To avoid a '%s-bomb' it may also be advisable to set a top-level directory by "+
			"adding it to the 'name' value (for example, setting 'name' to %s instead of %s).",
			format, path.Join(name, "some_dir"), name)
	}
	clean, cleanParent := in.Bool("clean"), in.Bool("clean_parent")
	if clean && cleanParent {
		return fail("Only one of 'clean' and 'clean_parent' can be set to True")
	}
	changes := map[string]any{}
	needed, missing := in.Bool("overwrite"), false
	var incorrect []string
	for _, group := range []struct {
		paths []string
		ok    func(os.FileMode) bool
	}{
		{contents.dirs, func(m os.FileMode) bool { return m.IsDir() }},
		{contents.files, func(m os.FileMode) bool { return m&os.ModeSymlink == 0 && !m.IsDir() }},
		{contents.links, func(m os.FileMode) bool { return m&os.ModeSymlink != 0 }},
	} {
		for _, p := range group.paths {
			fi, err := os.Lstat(strings.TrimRight(name+p, "/"))
			switch {
			case err == nil:
				if !group.ok(fi.Mode()) {
					incorrect = append(incorrect, p)
				}
			case errors.Is(err, os.ErrNotExist):
				needed, missing = true, true
			case !errors.Is(err, syscallENOTDIR):
				return fail("%v", err)
			}
		}
	}
	if len(incorrect) > 0 {
		list := "\n\n- " + strings.Join(incorrect, "\n- ")
		msg := fmt.Sprintf("The below paths (relative to %s) exist, but are the incorrect type (file instead of "+
			"directory, symlink instead of file, etc.).", name)
		switch {
		case test && clean:
			return state.Pending(name, msg+" Since the 'clean' option is enabled, the destination paths would be "+
				"cleared and the archive would be extracted."+list, nil)
		case test && cleanParent:
			return state.Pending(name, msg+" Since the 'clean_parent' option is enabled, the destination parent "+
				"directory would be removed first and then re-created and the archive would be extracted", nil)
		case !clean && !in.Bool("force"):
			return fail("%s To proceed with extraction, set 'force' to True. Note that this will remove these paths "+
				"before extracting.%s", msg, list)
		case !clean:
			for _, p := range incorrect {
				full := path.Join(name, p)
				if test {
					// Salt removes them even in test mode; brine only
					// reports it.
					appendList(changes, "removed", full)
					needed = true
					continue
				}
				if err := os.RemoveAll(strings.TrimRight(full, "/")); err != nil {
					return fail("One or more paths existed by were the incorrect type (i.e. file instead of directory "+
						"or vice-versa), but could not be removed. The following errors were observed:\n\n- %v", err)
				}
				appendList(changes, "removed", full)
				needed = true
			}
		}
	}
	explain := ""
	if missing {
		explain = ", due to absence of one or more files/dirs"
	}
	var files []any
	created := false
	if needed {
		if local && sum.Hsum != "" && !in.Bool("skip_verify") {
			got, err := filemod.Hash(cached, sum.HashType)
			if err != nil || got != sum.Hsum {
				return fail("%s does not match the desired source_hash %s", redact(src), sum.Hsum)
			}
		}
		if test {
			comment := fmt.Sprintf("Archive %s would be extracted to %s", redact(src), name)
			if clean {
				comment += ", after cleaning destination path(s)"
			}
			r := state.Pending(name, comment+explain, nil)
			if len(changes) > 0 {
				r.Changes = changes
			}
			return r
		}
		if cleanParent {
			if err := os.RemoveAll(strings.TrimRight(name, "/")); err != nil {
				return fail("Unable to remove the directory %s. The following errors were observed:\n\n- %v", name, err)
			}
			changes["removed"] = fmt.Sprintf("Directory %s was removed prior to the extraction", name)
		}
		if clean {
			for _, p := range append(append([]string{}, contents.topDirs...), contents.topFiles...) {
				full := name + p
				if err := os.RemoveAll(strings.TrimRight(full, "/")); err != nil {
					return fail("One or more paths could not be cleaned. The following errors were observed:\n\n- %v", err)
				}
				appendList(changes, "removed", full)
			}
		}
		if fi, err := os.Stat(name); err != nil || !fi.IsDir() {
			// Salt's file.directory with makedirs: missing parents too.
			if err := os.MkdirAll(name, 0o755); err != nil {
				return fail("Unable to create %s: %v", name, err)
			}
			if uid != -1 {
				_ = os.Chown(name, uid, -1)
			}
			created = true
		}
		files, err = extract(ctx, cached, name, format, options, trim, in.Bool("extract_perms"))
		if err != nil {
			if created {
				_ = os.RemoveAll(strings.TrimRight(name, "/"))
			}
			return fail("%v", err)
		}
	}
	r := state.Result{Name: name, Changes: changes, Warnings: warnings}
	var failedOwn []string
	if uid != -1 || gid != -1 {
		var targets []string
		if ownOn != nil {
			targets = []string{py.Str(ownOn)}
		} else {
			for _, p := range append(append(append([]string{}, contents.topDirs...), contents.topFiles...), contents.topLinks...) {
				targets = append(targets, name+p)
			}
		}
		for _, t := range targets {
			changed, err := chownTree(strings.TrimRight(t, "/"), uid, gid, test)
			if err != nil && !(test && errors.Is(err, os.ErrNotExist)) {
				failedOwn = append(failedOwn, t)
			}
			if changed {
				changes["updated ownership"] = true
			}
		}
	}
	ok := true
	if needed {
		if len(files) == 0 {
			ok = false
			r.Comment = fmt.Sprintf("No files were extracted from %s", redact(src))
		} else {
			if created {
				changes["directories_created"] = []any{name}
			}
			changes["extracted_files"] = files
			// Salt 3006.6 ends the comment this way whatever trim_output
			// is ("trimmed to False number of lines" included).
			r.Comment = fmt.Sprintf("%s extracted to %s%s. Output was trimmed to %s number of lines",
				redact(src), name, explain, py.Str(in.Value("trim_output")))
		}
	} else {
		r.Comment = "All files in archive are already present"
		if test && changes["updated ownership"] == true {
			r.Comment += ". Ownership would be updated on one or more files/directories."
			r.Changes = nil
			r.Result = nil
			return r
		}
	}
	if len(failedOwn) > 0 {
		ok = false
		r.Comment += "\n\nWhile trying to enforce user/group ownership, Salt was unable to change ownership on the " +
			"following paths:\n\n- " + strings.Join(failedOwn, "\n- ")
	}
	r.Result = &ok
	if len(r.Changes) == 0 {
		r.Changes = nil
	}
	return r
}

func appendList(m map[string]any, key string, v string) {
	l, _ := m[key].([]any)
	m[key] = append(l, v)
}

// lookupID resolves a user or group given by name or number.
func lookupID[T any](v any, lookup func(string) (*T, error), id func(*T) string) (int, bool) {
	s := py.Str(v)
	if t, err := lookup(s); err == nil {
		n, err := strconv.Atoi(id(t))
		return n, err == nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	return 0, false
}

// redact is Salt's redact_http_basic_auth: a URL's password hidden.
func redact(src string) string {
	u, err := url.Parse(src)
	if err != nil || u.User == nil {
		return src
	}
	u.User = url.User("redacted")
	return u.String()
}

// sourceMatch is file.source_list for one source or a list: the first
// that exists (salt://, a local path) or is remote; a salt:// source
// comes with the copy the file server cached.
func (s *states) sourceMatch(ctx context.Context, v any) (src, cached string, err error) {
	var srcs []string
	switch t := v.(type) {
	case nil:
		return "", "", commentf("Invalid source \"None\"")
	case []any:
		for _, x := range t {
			srcs = append(srcs, py.Str(x))
		}
	default:
		srcs = []string{py.Str(t)}
	}
	for _, src := range srcs {
		switch {
		case strings.HasPrefix(src, "salt://"):
			if s.env.Files == nil {
				return "", "", fmt.Errorf("source %s: the agent has no file server", src)
			}
			local, err := s.env.Files.Cache(ctx, src, state.From(ctx).Saltenv)
			if errors.Is(err, modules.ErrNoFile) {
				continue
			}
			if err != nil {
				return "", "", fmt.Errorf("source %s: %w", src, err)
			}
			return src, local, nil
		case len(srcs) > 1 && !strings.Contains(src, "://"):
			if _, err := os.Stat(src); err == nil {
				return src, "", nil
			}
		default:
			return src, "", nil
		}
	}
	return "", "", commentf("Invalid source \"%s\"", py.Str(v))
}

// sourceSum is Salt's file.get_source_sum of source_hash for src: the
// hash given inline, or read from a file of hashes (a local path,
// salt://, http(s)) by the line naming source_hash_name or src.
func (s *states) sourceSum(ctx context.Context, v any, src, sourceHashName string) (filemod.SourceSum, error) {
	if !py.Truth(v) {
		return filemod.SourceSum{}, nil
	}
	return filemod.SourceSumOf(strings.TrimSpace(py.Str(v)), "", src, sourceHashName, func(u string) (string, bool, error) {
		return s.fetchText(ctx, u)
	})
}

// fetchText reads a file of hashes: false when it does not exist.
func (s *states) fetchText(ctx context.Context, src string) (string, bool, error) {
	u, err := url.Parse(src)
	if err != nil {
		return "", false, err
	}
	var p string
	switch u.Scheme {
	case "", "file":
		p = u.Path
	case "salt":
		if s.env.Files == nil {
			return "", false, fmt.Errorf("source_hash %s: the agent has no file server", src)
		}
		local, err := s.env.Files.Cache(ctx, src, state.From(ctx).Saltenv)
		if errors.Is(err, modules.ErrNoFile) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		p = local
	case "http", "https":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return "", false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", false, commentf("Failed to cache %s: %v", redact(src), err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return "", false, nil
		}
		if resp.StatusCode != http.StatusOK {
			reason := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
			return "", false, commentf("Error: HTTP %d: %s reading %s", resp.StatusCode, reason, u.Path)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		return string(b), err == nil, err
	default:
		return "", false, commentf("source_hash %s: only local, salt:// and http(s) files of hashes are supported", redact(src))
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	return string(b), err == nil, err
}

// cache downloads an http(s) source into the agent's cache (Salt's
// cachedir/extrn_files/<saltenv>/<host>/<path>), checked against
// source_hash; a cached copy that matches it is used as it is.
func (s *states) cache(ctx context.Context, src string, sum filemod.SourceSum, skipVerify bool) (string, error) {
	u, err := url.Parse(src)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", commentf("Unable to cache %s: only salt://, local, http and https sources are supported", redact(src))
	}
	if sum.Hsum == "" && !skipVerify {
		return "", commentf("Unable to verify upstream hash of source file %s, please set source_hash or set "+
			"skip_verify or use_etag to True", redact(src))
	}
	// Salt's cache path: the host with its port, colon dropped.
	dest := filepath.Join(s.env.CacheDir, "extrn_files", state.From(ctx).Saltenv, strings.ReplaceAll(u.Host, ":", ""),
		filepath.FromSlash(path.Clean("/"+u.Path)))
	if sum.Hsum != "" {
		if got, err := filemod.Hash(dest, sum.HashType); err == nil && got == sum.Hsum {
			return dest, nil
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", commentf("Failed to cache %s: %v", redact(src), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		reason := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
		return "", commentf("Error: HTTP %d: %s reading %s", resp.StatusCode, reason, u.Path)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".download-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, resp.Body); err != nil {
		tmp.Close()
		return "", commentf("Failed to cache %s: %v", redact(src), err)
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return "", err
	}
	if sum.Hsum != "" {
		// Salt keeps the download in its cache and says so.
		if got, err := filemod.Hash(dest, sum.HashType); err != nil || got != sum.Hsum {
			return "", commentf("File is cached to %s, but the hash (%s) does not match the specified hash (%s)",
				dest, got, sum.Hsum)
		}
	}
	return dest, nil
}

// comment is a failure worded as Salt words it: it becomes the state's
// comment as it is, capitals and full stop included.
type comment string

func (c comment) Error() string { return string(c) }

// commentf formats a comment.
func commentf(format string, args ...any) error { return comment(fmt.Sprintf(format, args...)) }
