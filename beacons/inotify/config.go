//go:build linux

package inotify

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/brinehq/brine/beacons"
)

// maskNames are Salt's mask names (its validate's list) and the inotify
// bits they stand for, pyinotify's IN_* constants lower-cased.
var maskNames = map[string]uint32{
	"access":        unix.IN_ACCESS,
	"attrib":        unix.IN_ATTRIB,
	"close_nowrite": unix.IN_CLOSE_NOWRITE,
	"close_write":   unix.IN_CLOSE_WRITE,
	"create":        unix.IN_CREATE,
	"delete":        unix.IN_DELETE,
	"delete_self":   unix.IN_DELETE_SELF,
	"excl_unlink":   unix.IN_EXCL_UNLINK,
	"ignored":       unix.IN_IGNORED,
	"modify":        unix.IN_MODIFY,
	"moved_from":    unix.IN_MOVED_FROM,
	"moved_to":      unix.IN_MOVED_TO,
	"move_self":     unix.IN_MOVE_SELF,
	"oneshot":       unix.IN_ONESHOT,
	"onlydir":       unix.IN_ONLYDIR,
	"open":          unix.IN_OPEN,
	"unmount":       unix.IN_UNMOUNT,
}

// flagBits are the mask names that change how a watch behaves rather
// than name an event.
const flagBits = unix.IN_EXCL_UNLINK | unix.IN_ONESHOT | unix.IN_ONLYDIR

// alwaysBits are events the kernel sends whatever the mask: they are
// reported only when the mask names them, and never passed to
// inotify_add_watch.
const alwaysBits = unix.IN_IGNORED | unix.IN_UNMOUNT

// defaultMask is Salt's: create, delete and modify.
const defaultMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY

// eventNames are pyinotify's masknames of the events, in bit order.
var eventNames = []struct {
	bit  uint32
	name string
}{
	{unix.IN_ACCESS, "IN_ACCESS"}, {unix.IN_MODIFY, "IN_MODIFY"}, {unix.IN_ATTRIB, "IN_ATTRIB"},
	{unix.IN_CLOSE_WRITE, "IN_CLOSE_WRITE"}, {unix.IN_CLOSE_NOWRITE, "IN_CLOSE_NOWRITE"},
	{unix.IN_OPEN, "IN_OPEN"}, {unix.IN_MOVED_FROM, "IN_MOVED_FROM"}, {unix.IN_MOVED_TO, "IN_MOVED_TO"},
	{unix.IN_CREATE, "IN_CREATE"}, {unix.IN_DELETE, "IN_DELETE"}, {unix.IN_DELETE_SELF, "IN_DELETE_SELF"},
	{unix.IN_MOVE_SELF, "IN_MOVE_SELF"}, {unix.IN_UNMOUNT, "IN_UNMOUNT"}, {unix.IN_IGNORED, "IN_IGNORED"},
}

// changeName is pyinotify's maskname: the event's name, with |IN_ISDIR
// when it is about a directory.
func changeName(bit uint32, isDir bool) string {
	var parts []string
	for _, e := range eventNames {
		if bit&e.bit != 0 {
			parts = append(parts, e.name)
		}
	}
	if isDir {
		parts = append(parts, "IN_ISDIR")
	}
	return strings.Join(parts, "|")
}

// exclude is one entry of a path's exclude list, matched against an
// event's full path as Salt does: a regular expression found anywhere in
// it ({pattern: {regex: True}}), a glob when the entry has a *, a prefix
// otherwise.
type exclude struct {
	re     *regexp.Regexp // regex or glob
	prefix string
}

func (e exclude) match(path string) bool {
	if e.re != nil {
		return e.re.MatchString(path)
	}
	return strings.HasPrefix(path, e.prefix)
}

// root is one configured path.
type root struct {
	path     string
	report   uint32 // the events reported
	flags    uint32 // excl_unlink, oneshot, onlydir
	recurse  bool
	autoAdd  bool
	excludes []exclude

	// wd is the watch on the path itself (-1: none yet: it does not
	// exist, or was removed), dev and ino the file it watches; parentWd is
	// the watch on its directory that follows the path's (re)appearance.
	wd       int
	dev, ino uint64
	isDir    bool
	parentWd int
}

func (r *root) excluded(path string) bool {
	for _, e := range r.excludes {
		if e.match(path) {
			return true
		}
	}
	return false
}

// kernelMask is what inotify_add_watch is asked for on r's directories
// and file: the reported events, the flags, the self events that tell a
// watched file replaced or moved away, and the creations auto_add follows.
func (r *root) kernelMask() uint32 {
	m := r.report&^alwaysBits | r.flags | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	if r.autoAdd {
		m |= unix.IN_CREATE | unix.IN_MOVED_TO
	}
	return m
}

// parse checks the configuration: Salt's validate and the rest (unknown
// keys, relative paths, regular expressions).
func parse(cfg beacons.Config) ([]*root, error) {
	for k := range cfg {
		if k != "files" {
			return nil, fmt.Errorf("%s: unknown option (want files)", k)
		}
	}
	raw, ok := cfg["files"]
	if !ok {
		return nil, fmt.Errorf("files: missing: the inotify beacon needs the paths to watch")
	}
	files, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("files: want a mapping of paths to options, got %T", raw)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("files: empty: the inotify beacon needs the paths to watch")
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	seen := map[string]string{}
	var roots []*root
	for _, p := range paths {
		r, err := parseRoot(p, files[p])
		if err != nil {
			return nil, fmt.Errorf("files: %s: %w", p, err)
		}
		if other, dup := seen[r.path]; dup {
			return nil, fmt.Errorf("files: %s: the same path as %s", p, other)
		}
		seen[r.path] = p
		roots = append(roots, r)
	}
	return roots, nil
}

func parseRoot(p string, v any) (*root, error) {
	if !filepath.IsAbs(p) {
		return nil, fmt.Errorf("want an absolute path")
	}
	r := &root{path: filepath.Clean(p), report: defaultMask, wd: -1, parentWd: -1}
	if v == nil {
		return r, nil
	}
	opts, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a mapping of options (mask, recurse, auto_add, exclude), got %T", v)
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		switch k {
		case "mask":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return nil, fmt.Errorf("mask: want a list of events, got %v", v)
			}
			r.report, r.flags = 0, 0
			for _, m := range list {
				name, _ := m.(string)
				bit, ok := maskNames[name]
				if !ok {
					return nil, fmt.Errorf("mask: unknown event %q (want one of %s)", fmt.Sprint(m), validMasks())
				}
				if bit&flagBits != 0 {
					r.flags |= bit
				} else {
					r.report |= bit
				}
			}
			if r.report == 0 {
				return nil, fmt.Errorf("mask: %v names no event, only flags", v)
			}
		case "recurse", "auto_add":
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("%s: want true or false, got %v", k, v)
			}
			if k == "recurse" {
				r.recurse = b
			} else {
				r.autoAdd = b
			}
		case "exclude":
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("exclude: want a list of paths, globs or {regex: true} mappings, got %T", v)
			}
			for i, x := range list {
				e, err := parseExclude(x)
				if err != nil {
					return nil, fmt.Errorf("exclude: item %d: %w", i+1, err)
				}
				r.excludes = append(r.excludes, e)
			}
		default:
			return nil, fmt.Errorf("%s: unknown option (want mask, recurse, auto_add or exclude)", k)
		}
	}
	return r, nil
}

// validMasks lists the mask names in Salt's order.
func validMasks() string {
	return "access, attrib, close_nowrite, close_write, create, delete, delete_self, excl_unlink, " +
		"ignored, modify, moved_from, moved_to, move_self, oneshot, onlydir, open, unmount"
}

// parseExclude reads "/path/prefix", "/path/*.swp" or
// {"pattern": {"regex": true}}.
func parseExclude(x any) (exclude, error) {
	switch x := x.(type) {
	case string:
		return plainExclude(x)
	case map[string]any:
		if len(x) != 1 {
			return exclude{}, fmt.Errorf("want one pattern per mapping, got %d", len(x))
		}
		for pat, v := range x {
			regex := false
			if v != nil {
				opts, ok := v.(map[string]any)
				if !ok {
					return exclude{}, fmt.Errorf("%s: want {regex: true}, got %v", pat, v)
				}
				for k, o := range opts {
					b, ok := o.(bool)
					if k != "regex" || !ok {
						return exclude{}, fmt.Errorf("%s: %s: unknown option (want regex: true or false)", pat, k)
					}
					regex = b
				}
			}
			if !regex {
				return plainExclude(pat)
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				return exclude{}, fmt.Errorf("%s: bad regular expression: %w", pat, err)
			}
			return exclude{re: re}, nil
		}
	}
	return exclude{}, fmt.Errorf("want a path, a glob or {pattern: {regex: true}}, got %v", x)
}

func plainExclude(s string) (exclude, error) {
	if s == "" {
		return exclude{}, fmt.Errorf("empty exclude")
	}
	if !strings.Contains(s, "*") {
		return exclude{prefix: s}, nil
	}
	re, err := regexp.Compile(globRegexp(s))
	if err != nil {
		return exclude{}, fmt.Errorf("%s: bad glob: %w", s, err)
	}
	return exclude{re: re}, nil
}

// globRegexp translates a glob as Python's fnmatch does: * and ? match
// any character, / included; [...] is a class, [!...] its negation.
func globRegexp(g string) string {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := i + 1
			if j < len(g) && g[j] == '!' {
				j++
			}
			if j < len(g) && g[j] == ']' {
				j++
			}
			for j < len(g) && g[j] != ']' {
				j++
			}
			if j >= len(g) {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			} else if strings.HasPrefix(class, "^") {
				class = `\` + class
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return b.String()
}
