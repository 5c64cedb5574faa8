package pkgrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// repoFile is a yum/dnf .repo file as Salt's yumpkg reads it: the
// comment lines before the first section (the header), then sections of
// key=value options in their order, each with the comment lines inside
// it.
type repoFile struct {
	header   string
	sections []*repoSection
}

type repoSection struct {
	name     string
	keys     []string
	values   map[string]string
	comments []string
}

func (s *repoSection) set(k, v string) {
	if _, ok := s.values[k]; !ok {
		s.keys = append(s.keys, k)
	}
	s.values[k] = v
}

func (s *repoSection) unset(k string) {
	if _, ok := s.values[k]; !ok {
		return
	}
	delete(s.values, k)
	for i, x := range s.keys {
		if x == k {
			s.keys = append(s.keys[:i], s.keys[i+1:]...)
			break
		}
	}
}

// parseRepoFile reads a .repo file (Python's configparser: "key=value"
// or "key: value", keys lower-cased, indented lines continue a value).
func parseRepoFile(text string) *repoFile {
	f := &repoFile{}
	var cur *repoSection
	last := ""
	for raw := range strings.SplitSeq(text, "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
			if cur == nil {
				f.header += line + "\n"
			} else {
				cur.comments = append(cur.comments, strings.TrimLeft(line[1:], " \t"))
			}
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			cur = &repoSection{name: line[1 : len(line)-1], values: map[string]string{}}
			f.sections = append(f.sections, cur)
			last = ""
		case line == "":
			last = ""
		case cur != nil && last != "" && (raw[0] == ' ' || raw[0] == '\t'):
			cur.values[last] += "\n" + line
		case cur != nil:
			i := strings.IndexAny(line, "=:")
			if i < 0 {
				continue
			}
			k := strings.ToLower(strings.TrimSpace(line[:i]))
			cur.set(k, strings.TrimSpace(line[i+1:]))
			last = k
		}
	}
	return f
}

func (f *repoFile) section(name string) *repoSection {
	for _, s := range f.sections {
		if s.name == name {
			return s
		}
	}
	return nil
}

// String writes the file as Salt's yumpkg.mod_repo does.
func (f *repoFile) String() string {
	var b strings.Builder
	b.WriteString(f.header)
	for _, s := range f.sections {
		fmt.Fprintf(&b, "[%s]\n", s.name)
		for _, k := range s.keys {
			fmt.Fprintf(&b, "%s=%s\n", k, strings.ReplaceAll(s.values[k], "\n", "\n "))
		}
		for _, c := range s.comments {
			b.WriteString("# " + c + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// yumRepo is where repo is defined: its file and section; nil when no
// .repo file of dirs defines it.
func yumFind(dirs []string, repo string) (string, *repoFile, error) {
	for _, d := range dirs {
		names, err := filepath.Glob(filepath.Join(d, "*.repo"))
		if err != nil {
			return "", nil, err
		}
		sort.Strings(names)
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				return "", nil, err
			}
			if f := parseRepoFile(string(b)); f.section(repo) != nil {
				return n, f, nil
			}
		}
	}
	return "", nil, nil
}

// yumInfo is Salt's yumpkg.get_repo: the section's options, and its
// comments.
func yumInfo(s *repoSection) map[string]any {
	out := map[string]any{}
	for _, k := range s.keys {
		out[k] = s.values[k]
	}
	if len(s.comments) > 0 {
		out["comments"] = strs(s.comments)
	}
	return out
}

// yumValue is an option as Salt writes it: booleans 1 and 0.
func yumValue(v any) string {
	switch t := v.(type) {
	case bool:
		if t {
			return "1"
		}
		return "0"
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, "\n")
	}
	return fmt.Sprint(v)
}

// empty is Python's falsiness but for 0, which Salt keeps.
func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case bool:
		return false
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}
