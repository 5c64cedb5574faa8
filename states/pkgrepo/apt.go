package pkgrepo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// source is one line of an apt sources file, read as Salt's aptpkg reads
// it (its _invalid and SourceEntry): "[#]type [options] uri dist
// [comps…] [#comment]".
type source struct {
	line     string // as read, without its newline
	file     string
	invalid  bool
	disabled bool
	typ      string
	opts     []string // the options between brackets, in their order
	uri      string
	dist     string
	comps    []string
	comment  string
}

var sourceTypes = []string{"deb", "deb-src", "rpm", "rpm-src"}

// parseSource reads a sources line.
func parseSource(line, file string) *source {
	s := &source{line: strings.TrimRight(line, "\n"), file: file}
	l := strings.TrimSpace(line)
	if l == "" {
		s.invalid = true
		return s
	}
	if strings.HasPrefix(l, "#") {
		s.disabled = true
		l = l[1:]
	}
	if i := strings.Index(l, "#"); i > 0 {
		s.comment = l[i+1:]
		l = l[:i]
	}
	f := strings.Fields(l)
	if len(f) < 3 || !slices.Contains(sourceTypes, f[0]) {
		s.invalid = true
		return s
	}
	s.typ = f[0]
	rest := f[1:]
	if strings.HasPrefix(rest[0], "[") {
		end := slices.IndexFunc(rest, func(x string) bool { return strings.HasSuffix(x, "]") })
		if end < 0 {
			s.invalid = true
			return s
		}
		for _, o := range rest[:end+1] {
			if o = strings.Trim(o, "[]"); o != "" {
				s.opts = append(s.opts, o)
			}
		}
		rest = rest[end+1:]
	}
	if len(rest) < 2 {
		s.invalid = true
		return s
	}
	s.uri, s.dist, s.comps = rest[0], rest[1], slices.Clone(rest[2:])
	return s
}

// opt is the value of option key ("arch", "signed-by"), "" when unset.
func (s *source) opt(key string) string {
	for _, o := range s.opts {
		if k, v, ok := strings.Cut(o, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// setOpt sets option key (arch first when it is new, as Salt's add
// writes it), or removes it for "".
func (s *source) setOpt(key, value string) {
	for i, o := range s.opts {
		if k, _, _ := strings.Cut(o, "="); k == key {
			if value == "" {
				s.opts = slices.Delete(s.opts, i, i+1)
			} else {
				s.opts[i] = key + "=" + value
			}
			return
		}
	}
	if value == "" {
		return
	}
	if key == "arch" {
		s.opts = append([]string{key + "=" + value}, s.opts...)
		return
	}
	s.opts = append(s.opts, key+"="+value)
}

func (s *source) architectures() []string {
	if a := s.opt("arch"); a != "" {
		return strings.Split(a, ",")
	}
	return []string{}
}

// String is the line as Salt writes it: "# " for a disabled entry, the
// options in brackets, " #comment" at the end.
func (s *source) String() string {
	if s.invalid {
		return s.line
	}
	var parts []string
	if s.disabled {
		parts = append(parts, "#")
	}
	parts = append(parts, s.typ)
	if len(s.opts) > 0 {
		parts = append(parts, "["+strings.Join(s.opts, " ")+"]")
	}
	parts = append(parts, s.uri, s.dist)
	parts = append(parts, s.comps...)
	if s.comment != "" {
		parts = append(parts, "#"+s.comment)
	}
	return strings.Join(parts, " ")
}

// info is the entry as Salt's pkg.get_repo and list_repos return it.
func (s *source) info() map[string]any {
	return map[string]any{
		"file": s.file, "comps": strs(s.comps), "disabled": s.disabled, "dist": s.dist, "type": s.typ,
		"uri": s.uri, "line": strings.TrimSpace(s.line), "architectures": strs(s.architectures()), "signedby": s.opt("signed-by"),
	}
}

func strs(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// sourcesList is every line of the sources files Salt reads:
// sources.list, then sources.list.d/*.list in name order.
type sourcesList struct {
	list []*source
}

func (a *aptPaths) read() (*sourcesList, error) {
	files := []string{a.list}
	names, err := filepath.Glob(filepath.Join(a.dir, "*.list"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	files = append(files, names...)
	sl := &sourcesList{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
			if len(b) == 0 {
				break
			}
			sl.list = append(sl.list, parseSource(line, f))
		}
	}
	return sl, nil
}

// save writes the files whose entries are in changed: each entry of the
// file, one a line, the file removed when it is in sources.list.d and
// has none left (as Salt's del_repo).
func (a *aptPaths) save(sl *sourcesList, changed map[string]bool) error {
	for f := range changed {
		var b strings.Builder
		n := 0
		for _, s := range sl.list {
			if s.file == f {
				b.WriteString(s.String() + "\n")
				if !s.invalid {
					n++
				}
			}
		}
		if n == 0 && filepath.Dir(f) == filepath.Clean(a.dir) {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return err
		}
		if err := writeFile(f, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// get is Salt's pkg.get_repo: the first entry of repo's type, uri (but a
// trailing slash) and dist holding one of its components (any, when it
// names none); nil when there is none.
func (sl *sourcesList) get(repo *source) *source {
	for _, s := range sl.list {
		if s.invalid || s.typ != repo.typ || strings.TrimRight(s.uri, "/") != strings.TrimRight(repo.uri, "/") || s.dist != repo.dist {
			continue
		}
		if len(repo.comps) == 0 {
			return s
		}
		for _, c := range repo.comps {
			if slices.Contains(s.comps, c) {
				return s
			}
		}
	}
	return nil
}

// repoArgs are pkgrepo.managed's apt arguments.
type repoArgs struct {
	repo          *source // the name, parsed
	file          string
	comps, arches []string
	hasComps      bool
	hasArches     bool
	disabled      *bool
	dist          string
	comments      string
	hasComments   bool
}

// expanded is Salt's _expand_repo_def: the entry the arguments describe.
func (ra repoArgs) expanded(defaultFile string) *source {
	e := *ra.repo
	e.opts = slices.Clone(ra.repo.opts)
	e.comps = slices.Clone(ra.repo.comps)
	if ra.hasComps {
		e.comps = ra.comps
	}
	if ra.hasArches {
		e.setOpt("arch", strings.Join(ra.arches, ","))
	}
	if ra.disabled != nil {
		e.disabled = *ra.disabled
	}
	if ra.dist != "" {
		e.dist = ra.dist
	}
	e.file = defaultFile
	if ra.file != "" {
		e.file = ra.file
	}
	e.comment = ""
	e.line = e.String()
	return &e
}

// upToDate is the comparison of Salt's pkgrepo.managed: whether pre is
// the entry want describes.
func upToDate(pre, want *source, ra repoArgs) bool {
	sortedEq := func(a, b []string) bool {
		x, y := slices.Clone(a), slices.Clone(b)
		slices.Sort(x)
		slices.Sort(y)
		return slices.Equal(x, y)
	}
	if !sortedEq(pre.comps, want.comps) || pre.disabled != want.disabled || pre.dist != want.dist || pre.typ != want.typ ||
		pre.uri != want.uri || pre.opt("signed-by") != want.opt("signed-by") {
		return false
	}
	if a := want.architectures(); len(a) > 0 && !sortedEq(slices.Compact(a), slices.Compact(pre.architectures())) {
		return false
	}
	if !want.disabled {
		split := func(l string) []string {
			f := strings.Fields(l)
			if len(f) > 3 {
				slices.Sort(f[3:])
			}
			return f
		}
		line, preComment, _ := strings.Cut(pre.line, "#")
		if pre.disabled {
			line, preComment, _ = strings.Cut(strings.TrimPrefix(strings.TrimSpace(pre.line), "#"), "#")
		}
		if !slices.Equal(split(want.String()), split(line)) {
			return false
		}
		if ra.hasComments && strings.TrimSpace(preComment) != ra.comments {
			return false
		}
	}
	return true
}

// diff is Salt's changes between two entries: {key: {new, old}} for
// each of _expand_repo_def's keys that differ.
func diff(old, new map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"comps", "disabled", "dist", "type", "uri", "line", "architectures", "signedby"} {
		if fmt.Sprint(old[k]) != fmt.Sprint(new[k]) {
			out[k] = map[string]any{"new": new[k], "old": old[k]}
		}
	}
	return out
}

// mod is Salt's pkg.mod_repo: the entry the arguments describe is
// changed in place, or added to file (sources.list by default); it
// returns the files to write.
func (sl *sourcesList) mod(ra repoArgs, defaultFile string) (*source, map[string]bool) {
	full := slices.Clone(ra.repo.comps)
	comps := ra.repo.comps
	if ra.hasComps {
		comps = ra.comps
		for _, c := range ra.comps {
			if !slices.Contains(full, c) {
				full = append(full, c)
			}
		}
	}
	arches := ra.repo.architectures()
	if ra.hasArches {
		arches = ra.arches
	}
	var mod *source
	for _, s := range sl.list {
		if s.invalid {
			continue
		}
		repoMatches := s.typ == ra.repo.typ && strings.TrimRight(s.uri, "/") == strings.TrimRight(ra.repo.uri, "/") && s.dist == ra.repo.dist
		if !repoMatches {
			continue
		}
		for _, c := range full {
			if slices.Contains(s.comps, c) {
				mod = s
			}
		}
		if len(s.comps) == 0 || !slices.Equal(arches, s.architectures()) {
			mod = s
		}
		if mod != nil {
			break
		}
	}
	changed := map[string]bool{}
	if mod == nil {
		e := *ra.repo
		e.opts = slices.Clone(ra.repo.opts)
		e.comment = ""
		e.file = defaultFile
		mod = &e
		sl.list = append(sl.list, mod)
	} else {
		changed[mod.file] = true
	}
	if ra.hasComments {
		mod.comment = ra.comments
	}
	mod.typ, mod.uri = ra.repo.typ, ra.repo.uri
	mod.comps = slices.Clone(comps)
	mod.setOpt("arch", strings.Join(arches, ","))
	mod.setOpt("signed-by", ra.repo.opt("signed-by"))
	for _, o := range ra.repo.opts {
		if k, v, _ := strings.Cut(o, "="); k != "arch" && k != "signed-by" {
			mod.setOpt(k, v)
		}
	}
	if ra.disabled != nil {
		mod.disabled = *ra.disabled
	} else {
		mod.disabled = ra.repo.disabled
	}
	if ra.dist != "" {
		mod.dist = ra.dist
	} else {
		mod.dist = ra.repo.dist
	}
	if ra.file != "" {
		mod.file = ra.file
	}
	mod.line = mod.String()
	changed[mod.file] = true
	return mod, changed
}

// del is Salt's pkg.del_repo: repo's components leave the entries of its
// type, architectures, uri and dist, and an entry with none left goes; it
// returns the files to write, none when nothing matched.
func (sl *sourcesList) del(repo *source) map[string]bool {
	changed := map[string]bool{}
	keep := sl.list[:0]
	for _, s := range sl.list {
		if s.invalid || s.typ != repo.typ || !slices.Equal(s.architectures(), repo.architectures()) ||
			strings.TrimRight(s.uri, "/") != strings.TrimRight(repo.uri, "/") || s.dist != repo.dist {
			keep = append(keep, s)
			continue
		}
		shared := slices.ContainsFunc(s.comps, func(c string) bool { return slices.Contains(repo.comps, c) })
		if !shared && !(len(s.comps) == 0 && len(repo.comps) == 0) {
			keep = append(keep, s)
			continue
		}
		changed[s.file] = true
		s.comps = slices.DeleteFunc(s.comps, func(c string) bool { return slices.Contains(repo.comps, c) })
		if len(s.comps) > 0 {
			s.line = s.String()
			keep = append(keep, s)
		}
	}
	sl.list = keep
	return changed
}
