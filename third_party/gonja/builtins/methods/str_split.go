package methods

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// splitArgs reads str.split's and str.rsplit's (sep=None, maxsplit=-1):
// hasSep is false for no separator or None (split on runs of
// whitespace).
func splitArgs(arguments *exec.VarArgs) (sep string, hasSep bool, maxsplit int, err error) {
	p := arguments.Expect(0, []*exec.KwArg{{Name: "sep", Default: nil}, {Name: "maxsplit", Default: -1}})
	if p.IsError() {
		return "", false, 0, exec.ErrInvalidCall(errors.New(p.Error()))
	}
	if m := p.KwArgs["maxsplit"]; !m.IsInteger() {
		return "", false, 0, exec.ErrInvalidCall(errors.New("maxsplit must be an integer"))
	} else {
		maxsplit = m.Integer()
	}
	sepValue := p.KwArgs["sep"]
	if sepValue.IsNil() {
		return "", false, maxsplit, nil
	}
	if !sepValue.IsString() {
		return "", false, 0, exec.ErrInvalidCall(errors.New("must be str or None"))
	}
	if sepValue.String() == "" {
		return "", false, 0, errors.New("ValueError: empty separator")
	}
	return sepValue.String(), true, maxsplit, nil
}

// pyIsSpace is Python's str.isspace of one character.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// pySplit is Python's str.split: at most maxsplit splits (all when
// negative) from the left.
func pySplit(s, sep string, hasSep bool, maxsplit int) []string {
	if hasSep {
		if maxsplit < 0 {
			return strings.Split(s, sep)
		}
		return strings.SplitN(s, sep, maxsplit+1)
	}
	out := []string{}
	for {
		s = strings.TrimLeftFunc(s, pyIsSpace)
		if s == "" {
			return out
		}
		if maxsplit >= 0 && len(out) == maxsplit {
			return append(out, s)
		}
		end := strings.IndexFunc(s, pyIsSpace)
		if end < 0 {
			return append(out, s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
}

// pyRSplit is Python's str.rsplit: at most maxsplit splits (all when
// negative) from the right.
func pyRSplit(s, sep string, hasSep bool, maxsplit int) []string {
	if maxsplit < 0 {
		return pySplit(s, sep, hasSep, maxsplit)
	}
	var rev []string
	for {
		if !hasSep {
			s = strings.TrimRightFunc(s, pyIsSpace)
			if s == "" {
				break
			}
		}
		if len(rev) == maxsplit {
			rev = append(rev, s)
			break
		}
		var start, end int
		if hasSep {
			start = strings.LastIndex(s, sep)
			end = start + len(sep)
		} else {
			start = strings.LastIndexFunc(s, pyIsSpace)
			if start >= 0 {
				_, size := utf8.DecodeRuneInString(s[start:])
				end = start + size
			}
		}
		if start < 0 {
			rev = append(rev, s)
			break
		}
		rev = append(rev, s[end:])
		s = s[:start]
	}
	out := make([]string, len(rev))
	for i, x := range rev {
		out[len(rev)-1-i] = x
	}
	return out
}
