package file

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/brinehq/brine/internal/sysuser"

	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/internal/py"
)

// This file is the text editing half of Salt's file module (replace,
// search, blockreplace): the file.replace and file.blockreplace states
// call these same functions, so that the execution function and the
// state cannot disagree on what a pattern or a block does to a file.

// EditError is a failure worded as Salt's SaltInvocationError or
// CommandExecutionError words it: states show it as their comment.
type EditError string

func (e EditError) Error() string { return string(e) }

func editErrorf(format string, args ...any) error { return EditError(fmt.Sprintf(format, args...)) }

// Python's re flags, by name, as file.replace's flags gives them.
var reFlags = map[string]int{"TEMPLATE": 1, "T": 1, "IGNORECASE": 2, "I": 2, "LOCALE": 4, "L": 4, "MULTILINE": 8, "M": 8,
	"DOTALL": 16, "S": 16, "UNICODE": 32, "U": 32, "VERBOSE": 64, "X": 64, "DEBUG": 128, "ASCII": 256, "A": 256}

// FlagBits is Salt's _get_flags: Python's re flags given as a number, a
// name or a list of names.
func FlagBits(v any) (int, error) {
	switch t := v.(type) {
	case int64:
		return int(t), nil
	case int:
		return t, nil
	case float64:
		return int(t), nil
	case nil:
		return 0, nil
	case string:
		return FlagBits([]any{t})
	case []any:
		n := 0
		for _, f := range t {
			bit, ok := reFlags[strings.ToUpper(py.Str(f))]
			if !ok {
				return 0, editErrorf("Invalid re flag given: %s", py.Str(f))
			}
			n |= bit
		}
		return n, nil
	}
	return 0, editErrorf(`Invalid re flags: "%s", must be given either as a single flag string, a list of strings, as an integer, or as an re flag`, py.Str(v))
}

// CompilePy compiles a Python regular expression with Python's re flag
// bits (IGNORECASE, MULTILINE, DOTALL, VERBOSE are what RE2 has). \Z is
// Python's end of text. A construct RE2 lacks (lookaround,
// backreferences) is an error naming the pattern, never a different
// match.
func CompilePy(pattern string, bits int) (*regexp.Regexp, error) {
	var f string
	if bits&2 != 0 {
		f += "i"
	}
	if bits&8 != 0 {
		f += "m"
	}
	if bits&16 != 0 {
		f += "s"
	}
	p := py.GoRegex(pattern)
	if f != "" {
		p = "(?" + f + ")" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, editErrorf("Invalid regular expression %s: %s", py.Repr(pattern),
			strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// IsText is Salt's files.is_text: no NUL byte, and mostly printable
// text, judged on the first 512 bytes.
func IsText(b []byte) bool {
	if len(b) > 512 {
		b = b[:512]
	}
	if len(b) == 0 {
		return true
	}
	nontext := 0
	for _, c := range b {
		switch {
		case c == 0:
			return false
		case c >= 32 && c != 127, c == '\n', c == '\r', c == '\t', c == '\b', c == '\f':
		default:
			nontext++
		}
	}
	return float64(nontext)/float64(len(b)) <= 0.30
}

// WriteKeeping replaces p atomically, keeping its mode and owner (Salt's
// check_perms with the file's old user, group and mode after writing).
func WriteKeeping(p string, data []byte, fi fs.FileInfo) error {
	if err := atomicfile.WriteBytes(p, data, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return err
	}
	if uid, gid, ok := sysuser.Owner(fi); ok {
		return os.Chown(p, uid, gid)
	}
	return nil
}

// backupCopy writes old, p's contents before an edit, to p+suffix with
// p's mode and owner (Salt's shutil.copy2 and check_perms).
func backupCopy(p, suffix string, old []byte, fi fs.FileInfo) error {
	if err := WriteKeeping(p+suffix, old, fi); err != nil {
		return editErrorf("Unable to write the backup file %s%s: %v", p, suffix, err)
	}
	return nil
}

// ReplaceOpts are file.replace's arguments past path, pattern and repl.
type ReplaceOpts struct {
	Count                               int
	Flags                               any
	AppendIfNotFound, PrependIfNotFound bool
	NotFoundContent                     *string
	Backup                              string // "" for none
	DryRun, SearchOnly, ShowChanges     bool
	IgnoreIfMissing, BackslashLiteral   bool
}

// Replace is Salt's file.replace: the unified diff of the change (or,
// without show_changes, whether there is one); with search_only, whether
// pattern matches. A symlink is followed, and edited at its target.
func Replace(path, pattern, repl string, o ReplaceOpts) (any, error) {
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	fi, err := os.Stat(real)
	if err != nil {
		if o.IgnoreIfMissing {
			return false, nil
		}
		return nil, editErrorf("File not found: %s", real)
	}
	raw, err := os.ReadFile(real)
	if err != nil {
		return nil, editErrorf("Unable to open file '%s'. Exception: %v", real, err)
	}
	if !IsText(raw) {
		return nil, editErrorf("Cannot perform string replacements on a binary file: %s", real)
	}
	if o.SearchOnly && (o.AppendIfNotFound || o.PrependIfNotFound) {
		return nil, editErrorf("search_only cannot be used with append/prepend_if_not_found")
	}
	if o.AppendIfNotFound && o.PrependIfNotFound {
		return nil, editErrorf("Only one of append and prepend_if_not_found is permitted")
	}
	bits, err := FlagBits(o.Flags)
	if err != nil {
		return nil, err
	}
	re, err := CompilePy(pattern, bits)
	if err != nil {
		return nil, err
	}
	text := string(raw)
	if o.SearchOnly {
		return re.MatchString(text), nil
	}
	r := repl
	if o.BackslashLiteral {
		r = strings.ReplaceAll(repl, `\`, `\\`)
	}
	content := repl
	if o.NotFoundContent != nil && *o.NotFoundContent != "" && (o.PrependIfNotFound || o.AppendIfNotFound) {
		content = *o.NotFoundContent
	}
	result, nrepl, err := py.Subn(re, r, text, o.Count)
	if err != nil {
		return nil, editErrorf("%v", err)
	}
	found, changed := nrepl > 0, nrepl > 0 && pattern != repl
	if o.PrependIfNotFound || o.AppendIfNotFound {
		// Salt looks for the content itself as a line: "^{re.escape(content)}($|(?=\r\n))".
		if again, err := CompilePy("^"+regexp.QuoteMeta(content)+`(?:$|\r\n)`, bits); err == nil && again.MatchString(text) {
			found = true
		}
	}
	orig, newLines := SplitLines(text, true), SplitLines(result, true)
	if strings.Join(orig, "\x00") == strings.Join(newLines, "\x00") && len(orig) == len(newLines) {
		changed = false
	}
	if !found && (o.AppendIfNotFound || o.PrependIfNotFound) {
		nf := repl
		if o.NotFoundContent != nil {
			nf = *o.NotFoundContent
		}
		if o.PrependIfNotFound {
			newLines = append([]string{nf + "\n"}, newLines...)
		} else {
			if n := len(newLines); n > 0 && !strings.HasSuffix(newLines[n-1], "\n") {
				newLines[n-1] += "\n"
			}
			newLines = append(newLines, nf+"\n")
		}
		changed = true
	}
	if changed && !o.DryRun {
		if o.Backup != "" {
			if err := backupCopy(real, o.Backup, raw, fi); err != nil {
				return nil, err
			}
		}
		if err := WriteKeeping(real, []byte(strings.Join(newLines, "")), fi); err != nil {
			return nil, err
		}
	}
	diff := GetDiff(orig, newLines)
	if o.ShowChanges {
		return diff, nil
	}
	return changed && diff != "", nil
}

// BlockOpts are file.blockreplace's arguments past path.
type BlockOpts struct {
	MarkerStart, MarkerEnd, Content     string
	AppendIfNotFound, PrependIfNotFound bool
	InsertBeforeMatch, InsertAfterMatch string
	Backup                              string // "" for none
	DryRun, ShowChanges                 bool
	AppendNewline                       *bool // nil: Salt's None
}

// splitUniversal splits text as Python iterates a file opened with
// newline="": lines end at \n, \r\n or \r, endings kept.
func splitUniversal(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			out = append(out, s[start:i+1])
			start = i + 1
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// Blockreplace is Salt's file.blockreplace: the block between the lines
// holding marker_start and marker_end gets content (added at the start,
// the end, or before/after the first line matching a pattern when
// missing, if asked); the return is the diff (or, without show_changes,
// whether there is one).
func Blockreplace(path string, o BlockOpts) (any, error) {
	n := 0
	for _, b := range []bool{o.AppendIfNotFound, o.PrependIfNotFound, o.InsertBeforeMatch != "", o.InsertAfterMatch != ""} {
		if b {
			n++
		}
	}
	if n > 1 {
		return nil, editErrorf("Only one of append_if_not_found, prepend_if_not_found, insert_before_match, and insert_after_match is permitted")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, editErrorf("File not found: %s", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, editErrorf("Failed to read from %s: %v", path, err)
	}
	if !IsText(raw) {
		return nil, editErrorf("Cannot perform string replacements on a binary file: %s", path)
	}
	appendNewline := o.AppendNewline != nil && *o.AppendNewline
	if o.AppendNewline == nil && !strings.HasSuffix(o.Content, "\n") {
		appendNewline = true
	}
	var split []string
	for _, w := range strings.Split(o.Content, "\r\n") {
		split = append(split, strings.Split(w, "\n")...)
	}
	addContent := func(linesep string, lines []string, withStart bool, endLine string) []string {
		endLine = strings.TrimRight(endLine, "\r\n") + linesep
		if withStart {
			lines = append(lines, o.MarkerStart+linesep)
		}
		for i, l := range split {
			switch {
			case i+1 != len(split):
				lines = append(lines, l+linesep)
			case appendNewline:
				lines = append(lines, l+linesep, endLine)
			default:
				lines = append(lines, l+endLine)
			}
		}
		return lines
	}
	var orig, out []string
	inBlock, found := false, false
	linesep := ""
	for _, line := range splitUniversal(string(raw)) {
		keep := true
		if linesep == "" {
			switch {
			case strings.HasSuffix(line, "\r\n"):
				linesep = "\r\n"
			default:
				linesep = "\n"
			}
		}
		if strings.Contains(line, o.MarkerStart) {
			inBlock = true
		} else if inBlock {
			keep = false
			if pos := strings.Index(line, o.MarkerEnd); pos >= 0 {
				inBlock, found = false, true
				out = addContent(linesep, out, false, line[pos:])
			}
		}
		orig = append(orig, line)
		if keep {
			out = append(out, line)
		}
	}
	if linesep == "" {
		linesep = "\n"
	}
	if inBlock {
		return nil, editErrorf("Unterminated marked block. End of file reached before marker_end.")
	}
	if !found {
		switch {
		case o.PrependIfNotFound:
			out = append(addContent(linesep, nil, true, o.MarkerEnd), out...)
			found = true
		case o.AppendIfNotFound:
			if n := len(out); n > 0 && !strings.HasSuffix(out[n-1], linesep) {
				out[n-1] += linesep
			}
			out = addContent(linesep, out, true, o.MarkerEnd)
			found = true
		case o.InsertBeforeMatch != "" || o.InsertAfterMatch != "":
			pat := o.InsertBeforeMatch
			if pat == "" {
				pat = o.InsertAfterMatch
			}
			re, err := CompilePy(pat, 0)
			if err != nil {
				return nil, err
			}
			for i, l := range orig {
				if !re.MatchString(l) {
					continue
				}
				if o.InsertAfterMatch != "" {
					i++
				}
				block := addContent(linesep, nil, true, o.MarkerEnd)
				out = append(out[:i], append(block, out[i:]...)...)
				found = true
				break
			}
		}
		if !found {
			return nil, editErrorf("Cannot edit marked block. Markers were not found in file.")
		}
	}
	diff := GetDiff(orig, out)
	if diff != "" && !o.DryRun {
		if o.Backup != "" {
			if err := backupCopy(path, o.Backup, raw, fi); err != nil {
				return nil, err
			}
		}
		if err := WriteKeeping(path, []byte(strings.Join(out, "")), fi); err != nil {
			return nil, err
		}
	}
	if o.ShowChanges {
		return diff, nil
	}
	return diff != "", nil
}
