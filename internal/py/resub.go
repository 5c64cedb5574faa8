package py

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// GoRegex is Python's regular expression p in Go's syntax where the two
// spell the same thing differently: Python's \Z (the end of the text) is
// Go's \z. Everything else RE2 has is written alike.
func GoRegex(p string) string {
	if !strings.Contains(p, `\Z`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			if p[i+1] == 'Z' {
				b.WriteString(`\z`)
			} else {
				b.WriteString(p[i : i+2])
			}
			i++
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// ReplTemplate is a replacement of Python's re.sub parsed as Python's
// re parses it (sre_parse.parse_template): literal text and group
// references. Salt's file.replace, file.line and the regex_replace Jinja
// filter all take replacements in this syntax.
type ReplTemplate struct {
	parts []replPart
}

type replPart struct {
	lit   string
	group int // -1 for literal text
}

func reError(msg string, pos int) error { return fmt.Errorf("%s at position %d", msg, pos) }

// ParseRepl parses repl for re as Python does, with Python's errors:
// \1 and \g<1> or \g<name> are groups, \n, \t and the other escapes of
// Python string literals the characters, \0 and three-digit octal
// escapes bytes, an escape of another letter an error ("bad escape \q at
// position 0"), any other escaped character left as written.
func ParseRepl(re *regexp.Regexp, repl string) (*ReplTemplate, error) {
	t := &ReplTemplate{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, replPart{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	addGroup := func(n, pos int) error {
		if n > re.NumSubexp() {
			return reError(fmt.Sprintf("invalid group reference %d", n), pos)
		}
		flush()
		t.parts = append(t.parts, replPart{group: n})
		return nil
	}
	isOct := func(c byte) bool { return c >= '0' && c <= '7' }
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	for i := 0; i < len(repl); {
		c := repl[i]
		if c != '\\' || i+1 >= len(repl) {
			// A lone backslash at the end is kept, as Python's
			// tokenizer errors only inside patterns.
			if c == '\\' {
				return nil, reError(`bad escape (end of pattern)`, i)
			}
			lit.WriteByte(c)
			i++
			continue
		}
		d := repl[i+1]
		end := i + 2 // Python's tell() after the token
		switch {
		case d == 'g':
			if end >= len(repl) || repl[end] != '<' {
				return nil, reError("missing <", end)
			}
			close := strings.IndexByte(repl[end+1:], '>')
			if close < 0 {
				if end+1 == len(repl) {
					return nil, reError("missing group name", end+1)
				}
				return nil, reError("missing >, unterminated name", end+1)
			}
			name := repl[end+1 : end+1+close]
			after := end + 1 + close + 1
			if name == "" {
				return nil, reError("missing group name", end+1)
			}
			var n int
			if idx := re.SubexpIndex(name); isIdentifier(name) {
				if idx < 0 {
					return nil, fmt.Errorf("unknown group name '%s'", name)
				}
				n = idx
			} else {
				v, err := strconv.Atoi(name)
				if err != nil || v < 0 || strings.ContainsAny(name, "+-") {
					return nil, reError(fmt.Sprintf("bad character in group name '%s'", name), after-len(name)-1)
				}
				n = v
			}
			if err := addGroup(n, after-len(name)-1); err != nil {
				return nil, err
			}
			i = after
		case d == '0':
			j := end
			for k := 0; k < 2 && j < len(repl) && isOct(repl[j]); k++ {
				j++
			}
			v, _ := strconv.ParseInt(repl[i+1:j], 8, 32)
			lit.WriteRune(rune(v & 0xff))
			i = j
		case isDigit(d):
			j := end
			if j < len(repl) && isDigit(repl[j]) {
				j++
				if isOct(d) && isOct(repl[j-1]) && j < len(repl) && isOct(repl[j]) {
					j++
					v, _ := strconv.ParseInt(repl[i+1:j], 8, 32)
					if v > 0o377 {
						return nil, reError(fmt.Sprintf("octal escape value %s outside of range 0-0o377", repl[i:j]), i)
					}
					lit.WriteRune(rune(v))
					i = j
					continue
				}
			}
			n, _ := strconv.Atoi(repl[i+1 : j])
			if err := addGroup(n, i+1); err != nil {
				return nil, err
			}
			i = j
		default:
			if r, ok := replEscapes[d]; ok {
				lit.WriteByte(r)
			} else if d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' {
				return nil, reError(`bad escape \`+string(d), i)
			} else {
				lit.WriteByte('\\')
				lit.WriteByte(d)
			}
			i = end
		}
	}
	flush()
	return t, nil
}

var replEscapes = map[byte]byte{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '\\': '\\'}

// isIdentifier is str.isidentifier for ASCII names.
func isIdentifier(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' || c > 127) {
			return false
		}
	}
	return s != ""
}

// expand is the replacement for the match m of src.
func (t *ReplTemplate) expand(b *strings.Builder, src string, m []int) {
	for _, p := range t.parts {
		if p.group < 0 {
			b.WriteString(p.lit)
		} else if 2*p.group+1 < len(m) && m[2*p.group] >= 0 {
			b.WriteString(src[m[2*p.group]:m[2*p.group+1]])
		}
	}
}

// Subn is Python's re.subn(pattern, repl, text, count): the text with
// the first count matches (all when 0) replaced, and how many were. The
// replacement is parsed before anything matches, as in Python: a bad one
// fails even where the pattern matches nothing. Matches are Go's
// (an empty match right after another match is skipped, where Python 3.7
// and later replace it too).
func Subn(re *regexp.Regexp, repl, text string, count int) (string, int, error) {
	t, err := ParseRepl(re, repl)
	if err != nil {
		return "", 0, err
	}
	var b strings.Builder
	last, n := 0, 0
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		if count > 0 && n >= count {
			break
		}
		b.WriteString(text[last:m[0]])
		t.expand(&b, text, m)
		last = m[1]
		n++
	}
	b.WriteString(text[last:])
	return b.String(), n, nil
}
