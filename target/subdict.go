package target

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"

	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/internal/py"
)

// valueMode is how a grain or pillar value is compared with a target's.
type valueMode int

const (
	valueGlob  valueMode = iota // fnmatch (grain, pillar, G@, I@)
	valueRegex                  // re.match (grain_pcre, pillar_pcre, P@, J@)
	valueExact                  // equality (pillar_exact)
)

// maxParts bounds the parts of a grain or pillar expression: matching
// "*:*:…" takes time in the cube of their number.
const maxParts = 64

// subdict is a compiled grain or pillar expression, matched as Salt's
// salt.utils.data.subdict_match: "foo:bar:baz" matches data["foo"]["bar"]
// against "baz", and also data["foo"] against "bar:baz" (the deeper key is
// tried first), so values may contain the delimiter.
type subdict struct {
	expr, delim string
	mode        valueMode
	// values are the compiled value patterns: every part of expr that
	// follows a delimiter or a ':' (nested mappings always split on ':',
	// as Salt's). Compiled once so that matching many minions compiles
	// nothing; read only after compileSubdict.
	values map[string]func(string) bool
}

// compileSubdict compiles expr. In regex mode, a pattern that Go cannot
// compile never matches, and it is an error when none of the candidate
// patterns compiles, since the target could then select nothing.
func compileSubdict(expr, delim string, mode valueMode) (*subdict, error) {
	n := strings.Count(expr, delim) + 1
	if delim != DefaultDelimiter {
		// Nested mappings split at ':' whatever the delimiter.
		n += strings.Count(expr, DefaultDelimiter)
	}
	if n > maxParts {
		return nil, fmt.Errorf("more than %d parts separated by %q", maxParts, delim)
	}
	s := &subdict{expr: expr, delim: delim, mode: mode, values: map[string]func(string) bool{}}
	var firstErr error
	compiled := 0
	for i := range len(expr) {
		var p string
		switch {
		case strings.HasPrefix(expr[i:], delim):
			p = expr[i+len(delim):]
		case expr[i] == ':':
			p = expr[i+1:]
		default:
			continue
		}
		if _, done := s.values[p]; done {
			continue
		}
		f, err := compileValue(p, mode)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			s.values[p] = func(string) bool { return false }
			continue
		}
		s.values[p] = f
		compiled++
	}
	if compiled == 0 && firstErr != nil {
		return nil, firstErr
	}
	return s, nil
}

// compileValue compiles one value pattern into a test on a lowercased
// value: Salt lowercases both the value and the pattern.
func compileValue(pattern string, mode valueMode) (func(string) bool, error) {
	switch mode {
	case valueRegex:
		// (?i) rather than lowercasing the pattern, which would turn \D
		// into \d: case-insensitive all the same.
		re, err := regexp.Compile(`(?i)^(?:` + pattern + `)`)
		if err != nil {
			return nil, fmt.Errorf("regular expression %q: %w", pattern, err)
		}
		return re.MatchString, nil
	case valueExact:
		want := strings.ToLower(pattern)
		return func(v string) bool { return v == want }, nil
	}
	return fnmatch.Compile(strings.ToLower(pattern)).Match, nil
}

func (s *subdict) match(data map[string]any) bool {
	return s.matchIn(&memo{}, data, s.expr, s.delim)
}

// memo remembers dictMatch's answers during one match. subdict_match
// tries every split of "*:*:…" at every level of nested mappings, which
// takes exponential time in the number of wildcards; an answer depends
// only on the mapping and the pattern, so each is computed once.
type memo map[memoKey]bool

type memoKey struct {
	m       uintptr // the mapping, by identity (alive during the match)
	pattern string
}

// matchIn is subdict_match of expr on data.
func (s *subdict) matchIn(mm *memo, data any, expr, delim string) bool {
	splits := strings.Split(expr, delim)
	if len(splits) == 1 {
		return false
	}
	for idx := len(splits) - 1; idx >= 1; idx-- {
		key := strings.Join(splits[:idx], delim)
		var pattern string
		var v any
		if key == "*" {
			pattern, v = expr, data
		} else {
			var ok bool
			pattern = strings.Join(splits[idx:], delim)
			if v, ok = Traverse(data, key, delim); !ok {
				continue
			}
		}
		switch t := v.(type) {
		case map[string]any:
			// Salt's traversal default is {}, so an empty mapping is
			// taken for a missing key.
			if len(t) > 0 && s.dictMatch(mm, t, pattern) {
				return true
			}
			continue
		case []any:
			for _, member := range t {
				if m, ok := member.(map[string]any); ok && s.dictMatch(mm, m, pattern) {
					return true
				}
				if s.value(member, pattern) {
					return true
				}
			}
			continue
		}
		if s.value(v, pattern) {
			return true
		}
	}
	return false
}

// dictMatch is subdict_match's _dict_match: pattern "*" or a key of m
// matches; so does a nested expression; "*:pattern" matches any value.
func (s *subdict) dictMatch(mm *memo, m map[string]any, pattern string) bool {
	if *mm == nil {
		*mm = memo{}
	}
	k := memoKey{reflect.ValueOf(m).Pointer(), pattern}
	if v, ok := (*mm)[k]; ok {
		return v
	}
	v := s.dictMatchOnce(mm, m, pattern)
	(*mm)[k] = v
	return v
}

func (s *subdict) dictMatchOnce(mm *memo, m map[string]any, pattern string) bool {
	wildcard := strings.HasPrefix(pattern, "*:")
	if wildcard {
		pattern = pattern[2:]
	}
	if pattern == "*" {
		return true
	}
	if _, ok := m[pattern]; ok {
		return true
	}
	if s.matchIn(mm, m, pattern, DefaultDelimiter) {
		return true
	}
	if !wildcard {
		return false
	}
	for _, v := range m {
		switch t := v.(type) {
		case map[string]any:
			if s.dictMatch(mm, t, pattern) {
				return true
			}
		case []any:
			for _, item := range t {
				if s.value(item, pattern) {
					return true
				}
			}
		default:
			if s.value(v, pattern) {
				return true
			}
		}
	}
	return false
}

// value compares one value, as Python's str(value), with pattern.
func (s *subdict) value(v any, pattern string) bool {
	f, ok := s.values[pattern]
	if !ok {
		// Not a part of expr after a delimiter; compileSubdict collects
		// every pattern matchIn can reach, so this is only a safety net.
		var err error
		if f, err = compileValue(pattern, s.mode); err != nil {
			return false
		}
	}
	return f(strings.ToLower(matchStr(v)))
}

// matchStr is Python's str() of a decoded JSON or YAML value, which is what
// Salt compares grain and pillar patterns with: True, None, 2 (not 2.0).
// It is not py.Str: lists and mappings print as Python prints them, and
// an integral float prints as the int it was in Salt (grains and pillar
// that went through JSON hold Python's ints as floats).
func matchStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyRepr is Python's repr() of a decoded value. Integral numbers that
// JSON decoding made floats print as the ints Python would have.
func pyRepr(v any) string { return py.ReprValue(pyInts(v)) }

// pyInts turns integral floats (below 1e16) into int64, in lists and
// mappings too.
func pyInts(v any) any { return py.MapLeaves(v, pyInt) }

// pyInt is an integral float (below 1e16) as an int64, any other float as
// a float64, and anything else as it is.
func pyInt(v any) any {
	switch t := v.(type) {
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e16 {
			return int64(t)
		}
	case float32:
		return pyInt(float64(t))
	}
	return v
}
