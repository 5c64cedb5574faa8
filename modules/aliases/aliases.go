// Package aliases is Salt's aliases execution module: the mail aliases
// file (/etc/aliases, or the agent option aliases.file as in Salt) read
// and rewritten line for line as Salt's module does, so that a file Salt
// managed and one brine manages are the same bytes. The alias states are
// built on it.
//
// Salt parses each line with one regular expression and writes back what
// it parsed, so its quirks are kept on purpose: a line without a colon
// ("nocolon here") parses as an alias with no target and is written back
// as an empty line, "webmaster : root" is the alias "webmaster " (with
// its space), and blank lines are aliases named "\n" in list_aliases.
// After a change the file's newaliases command is run when it is on
// PATH, as Salt does; without it the file is still written.
package aliases

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/brinehq/brine/internal/sysuser"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
)

// DefaultFile is Salt's default aliases.file.
const DefaultFile = "/etc/aliases"

// aliasRE is Salt's __ALIAS_RE, `([^:#]*)\s*:?\s*([^#]*?)(\s+#.*|$)`,
// matched against a line with its newline: Python's `$` also matches
// before a final newline, which `\n?\z` stands for here (the third group
// is then the newline, read as empty).
var aliasRE = regexp.MustCompile(`^([^:#]*)\s*:?\s*([^#]*?)(\s+#.*|\n?\z)`)

// ErrEmpty is Salt's SaltInvocationError for an empty alias or target.
var ErrEmpty = errors.New("can not be an empty string")

// line is one line of the file as Salt's __parse_aliases returns it: an
// alias, its target and the comment after them, or (parsed false) the
// stripped line kept as a comment.
type line struct {
	alias, target, comment string
	parsed                 bool
}

// File is an aliases file.
type File struct {
	// Path is the file as configured; Salt resolves its symlinks.
	Path string
}

// Of returns the aliases file of an agent: its aliases.file option, else
// /etc/aliases.
func Of(env *modules.Env) File {
	if env != nil && env.Opts != nil {
		if p, ok := env.Opts()["aliases.file"].(string); ok && p != "" {
			return File{Path: p}
		}
	}
	return File{Path: DefaultFile}
}

func (f File) path() string { return realpath(f.Path) }

func (f File) parse() ([]line, error) {
	fh, err := os.Open(f.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("aliases file: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	var out []line
	r := bufio.NewReader(fh)
	for {
		s, err := r.ReadString('\n')
		if s != "" {
			if m := aliasRE.FindStringSubmatch(s); m != nil {
				c := m[3]
				if c == "\n" {
					c = ""
				}
				out = append(out, line{alias: m[1], target: m[2], comment: c, parsed: true})
			} else {
				out = append(out, line{comment: strings.TrimSpace(s)})
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("aliases file %s: %w", f.path(), err)
		}
	}
}

// Alias is one alias and its target, in the file's order.
type Alias struct{ Name, Target string }

// List returns the file's aliases in its order (Salt's list_aliases, a
// dict: a later line of the same alias wins, at the first one's place).
func (f File) List() ([]Alias, error) {
	lines, err := f.parse()
	if err != nil {
		return nil, err
	}
	var out []Alias
	at := map[string]int{}
	for _, l := range lines {
		if !l.parsed || l.alias == "" {
			continue
		}
		if i, ok := at[l.alias]; ok {
			out[i].Target = l.target
			continue
		}
		at[l.alias] = len(out)
		out = append(out, Alias{l.alias, l.target})
	}
	return out, nil
}

func (f File) lookup(alias string) (string, bool, error) {
	all, err := f.List()
	if err != nil {
		return "", false, err
	}
	for _, a := range all {
		if a.Name == alias {
			return a.Target, true, nil
		}
	}
	return "", false, nil
}

// Target returns alias's target, "" when there is none (get_target).
func (f File) Target(alias string) (string, error) {
	t, _, err := f.lookup(alias)
	return t, err
}

// TargetString is a target as Salt writes it: a list joined by ", ".
func TargetString(target any) string {
	if l, ok := target.([]any); ok {
		return strings.Join(py.Strs(l), ", ")
	}
	return py.Str(target)
}

// Has reports whether alias has target (a string or a list), as
// has_target: an empty target is an error.
func (f File) Has(alias string, target any) (bool, error) {
	if s, ok := target.(string); ok && s == "" {
		return false, fmt.Errorf("target %w", ErrEmpty)
	}
	t, ok, err := f.lookup(alias)
	if err != nil || !ok {
		return false, err
	}
	return TargetString(target) == t, nil
}

// Set makes target (a string or a list) alias's target: its first line
// rewritten with its comment kept, later lines of it dropped, or a line
// added at the end (set_target). A string target the alias already has
// writes nothing; a list is always written, as Salt compares it with the
// file's string.
func (f File) Set(ctx context.Context, alias string, target any) error {
	if alias == "" {
		return fmt.Errorf("alias %w", ErrEmpty)
	}
	if s, ok := target.(string); ok {
		if s == "" {
			return fmt.Errorf("target %w", ErrEmpty)
		}
		if t, err := f.Target(alias); err != nil {
			return err
		} else if t == s {
			return nil
		}
	}
	lines, err := f.parse()
	if err != nil {
		return err
	}
	ts := TargetString(target)
	var out []line
	done := false
	for _, l := range lines {
		if l.parsed && l.alias == alias {
			if !done {
				out = append(out, line{alias: alias, target: ts, comment: l.comment, parsed: true})
				done = true
			}
			continue
		}
		out = append(out, l)
	}
	if !done {
		out = append(out, line{alias: alias, target: ts, parsed: true})
	}
	return f.write(ctx, out)
}

// Remove removes every line of alias (rm_alias); an alias without a
// target is left alone, as Salt does.
func (f File) Remove(ctx context.Context, alias string) error {
	if t, err := f.Target(alias); err != nil || t == "" {
		return err
	}
	lines, err := f.parse()
	if err != nil {
		return err
	}
	var out []line
	for _, l := range lines {
		if !(l.parsed && l.alias == alias) {
			out = append(out, l)
		}
	}
	return f.write(ctx, out)
}

// write replaces the file with lines as Salt's __write_aliases_file
// does (atomically, keeping its mode and owner; a new file is 0644
// root:root) and runs newaliases when it is on PATH.
func (f File) write(ctx context.Context, lines []line) error {
	afn := f.path()
	var b strings.Builder
	for _, l := range lines {
		if l.alias != "" && l.target != "" {
			fmt.Fprintf(&b, "%s: %s%s\n", l.alias, l.target, l.comment)
		} else {
			b.WriteString(l.comment + "\n")
		}
	}
	mode, uid, gid := os.FileMode(0o644), 0, 0
	if st, err := os.Stat(afn); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
		if u, g, ok := sysuser.Owner(st); ok {
			uid, gid = u, g
		}
	}
	if err := atomicfile.WriteBytes(afn, []byte(b.String()), mode); err != nil {
		return fmt.Errorf("aliases file: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(afn, uid, gid); err != nil {
			return fmt.Errorf("aliases file: %w", err)
		}
	}
	if cmd, err := exec.LookPath("newaliases"); err == nil {
		// Salt runs it through cmd.run and ignores how it ends.
		_ = exec.CommandContext(ctx, cmd).Run()
	}
	return nil
}

// realpath resolves p as Python's os.path.realpath: symlinks followed as
// far as they exist, the rest kept.
func realpath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(filepath.Clean(p))
	if dir == "" || dir == p {
		return filepath.Clean(p)
	}
	return filepath.Join(realpath(filepath.Clean(dir)), base)
}

// Module declares the aliases functions.
func Module(env *modules.Env) []function.Func {
	alias := function.Param{Name: "alias", Kind: function.String, Required: true}
	target := function.Param{Name: "target", Kind: function.Any, Required: true}
	return []function.Func{
		{Name: "aliases.list_aliases", ReadOnly: true, Doc: "The aliases of the aliases file, {alias: target}.",
			Run: func(context.Context, *function.Input) (any, error) {
				all, err := Of(env).List()
				if err != nil {
					return nil, err
				}
				out := map[string]any{}
				for _, a := range all {
					out[a.Name] = a.Target
				}
				return out, nil
			}},
		{Name: "aliases.get_target", ReadOnly: true, Doc: "The target of alias, '' when there is none.",
			Params: []function.Param{alias},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return Of(env).Target(in.String("alias"))
			}},
		{Name: "aliases.has_target", ReadOnly: true, Doc: "Whether alias has target (a list is joined with ', ').",
			Params: []function.Param{alias, target},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return Of(env).Has(in.String("alias"), in.Value("target"))
			}},
		{Name: "aliases.set_target", Doc: "Set alias's target (a string or a list), replacing its line or adding one; " +
			"runs newaliases when it is installed.",
			Params: []function.Param{alias, target},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if err := Of(env).Set(ctx, in.String("alias"), in.Value("target")); err != nil {
					return nil, err
				}
				return true, nil
			}},
		{Name: "aliases.rm_alias", Doc: "Remove alias's lines; runs newaliases when it is installed.",
			Params: []function.Param{alias},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if err := Of(env).Remove(ctx, in.String("alias")); err != nil {
					return nil, err
				}
				return true, nil
			}},
	}
}
