package reactor

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brinehq/brine/fileserver"
	"github.com/brinehq/brine/internal/fnmatch"
)

// mapping is a compiled `reactor:` list: globs compiled once, file entries
// resolved (salt:// against file_roots, path globs expanded). It is
// immutable; a reload builds a new one.
type mapping struct {
	entries []mappedEntry
	set     *fnmatch.Set // one automaton for every entry's glob
}

type mappedEntry struct {
	MapEntry
	files []mappedFile
}

// mappedFile is one reaction file an entry names, after resolution.
type mappedFile struct {
	// Spec is the entry as written (a path, a path glob or salt://…).
	Spec string
	// Path is the file to render; empty when Err is set.
	Path string
	Err  error
}

func compileMapping(entries []MapEntry, roots map[string][]string) *mapping {
	m := &mapping{entries: make([]mappedEntry, len(entries))}
	globs := make([]string, len(entries))
	for i, e := range entries {
		globs[i] = e.Glob
		me := mappedEntry{MapEntry: e}
		for _, spec := range e.Files {
			me.files = append(me.files, resolveFile(spec, roots)...)
		}
		m.entries[i] = me
	}
	m.set = fnmatch.NewSet(globs)
	return m
}

// resolveFile turns a file entry into the files to render. A path glob that
// matches nothing yields nothing, as in Salt (`reactor list` shows it).
func resolveFile(spec string, roots map[string][]string) []mappedFile {
	path := spec
	if rest, ok := strings.CutPrefix(spec, "salt://"); ok {
		env := "base"
		if p, q, found := strings.Cut(rest, "?"); found {
			rest = p
			if v, err := url.ParseQuery(q); err == nil && v.Get("saltenv") != "" {
				env = v.Get("saltenv")
			}
		}
		found, err := fileserver.Roots(roots).Find(env, rest)
		switch {
		case errors.Is(err, fileserver.ErrNotFound):
			return []mappedFile{{Spec: spec, Err: fmt.Errorf("%w: %s is in no file_roots %s directory %v", ErrFileMissing, spec, env, roots[env])}}
		case err != nil:
			return []mappedFile{{Spec: spec, Err: err}}
		}
		path = found
	}
	if !strings.ContainsAny(path, "*?[") {
		return []mappedFile{{Spec: spec, Path: path}}
	}
	matches, err := filepath.Glob(path)
	if err != nil {
		return []mappedFile{{Spec: spec, Err: fmt.Errorf("file glob %s: %w", spec, err)}}
	}
	slices.Sort(matches)
	out := make([]mappedFile, len(matches))
	for i, p := range matches {
		out[i] = mappedFile{Spec: spec, Path: p}
	}
	return out
}

// match returns the entries whose glob matches tag, in config order.
func (m *mapping) match(tag string) []*mappedEntry {
	idx := m.set.Match(tag, nil)
	if len(idx) == 0 {
		return nil
	}
	out := make([]*mappedEntry, len(idx))
	for i, j := range idx {
		out[i] = &m.entries[j]
	}
	return out
}
