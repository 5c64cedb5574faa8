// Package py formats decoded arguments as Python does, for the execution
// modules that must print or convert them as Salt would: str() of a number
// or boolean given where a string is used, repr() of a command in a
// message, the truth value of an argument, a number of any decoded type
// as a float; and Python's re.sub replacement syntax (resub.go), which
// file.replace and the regex_replace filter share.
package py

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Str is Python's str() of a decoded argument (a number, boolean, string
// or None).
func Str(v any) string {
	switch t := v.(type) {
	case nil:
		return "None"
	case string:
		return t
	case bool:
		if t {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(t, 10)
	case int:
		return strconv.Itoa(t)
	case float64:
		return Float(t)
	}
	return fmt.Sprint(v)
}

// Float is Python's repr of a float: shortest digits, an exponent only
// below 1e-4 or from 1e16, and ".0" on integral values.
func Float(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// Repr is Python's repr of a string.
func Repr(s string) string {
	q := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteRune(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == q:
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteRune(q)
	return b.String()
}

// ReprList is Python's repr of a list of strings.
func ReprList(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = Repr(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Truth is Python's truth value of a decoded argument.
func Truth(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case int64:
		return t != 0
	case float64:
		return t != 0
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	return true
}

// Number is a decoded number (an int, int64 or uint64 from YAML, int64 or
// float64 from JSON, a float64) as a float64, and whether v was one. A
// boolean is not a number here, though Python's bool is an int: the
// options, thresholds and durations read with it want True refused, not
// read as 1.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// Equal is Python's == on decoded data: numbers by value (1 == 1.0 ==
// True), lists item by item, mappings key by key whatever their order.
func Equal(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// number is Number with booleans counted as the numbers Python's bool
// is (True == 1, False == 0.0), which Number refuses because option
// readers want True kept apart from 1.
func number(v any) (float64, bool) {
	if b, ok := v.(bool); ok {
		if b {
			return 1, true
		}
		return 0, true
	}
	return Number(v)
}

// ReprValue is Python's repr() of a decoded value: strings quoted, floats
// as Python prints them, lists and mappings as Python prints them (mapping
// keys sorted: the original order is not known here).
func ReprValue(v any) string {
	switch t := v.(type) {
	case nil:
		return "None"
	case bool:
		if t {
			return "True"
		}
		return "False"
	case string:
		return Repr(t)
	case float64:
		return Float(t)
	case float32:
		return Float(float64(t))
	case int:
		return strconv.Itoa(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case uint64:
		return strconv.FormatUint(t, 10)
	case json.Number:
		return t.String()
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = ReprValue(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(t))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = Repr(k) + ": " + ReprValue(t[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// Strs is Python's str() of each item of a decoded list: the list
// arguments (options, names) that commands and files take as text.
func Strs(l []any) []string {
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = Str(x)
	}
	return out
}

// PathJoin is Python's os.path.join: an absolute part starts the path
// over, any other joins it after a slash unless the path is empty or
// ends in one already.
func PathJoin(parts ...string) string {
	out := ""
	for i, s := range parts {
		switch {
		case i == 0, strings.HasPrefix(s, "/"):
			out = s
		case out == "" || strings.HasSuffix(out, "/"):
			out += s
		default:
			out += "/" + s
		}
	}
	return out
}

// List is a list of strings as decoded data holds it (Python's list of
// str): what a return or an event carries.
func List(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Finite is v with each float JSON cannot hold (a YAML .inf or .nan an SLS
// passed on, which module.run returns in its changes) replaced by the text
// Python prints for it, inf, -inf or nan: what Salt's outputters show.
// Returns go through it before they are queued or printed, where
// json.Marshal would refuse the whole return and lose it.
func Finite(v any) any {
	return MapLeaves(v, func(x any) any {
		if f, ok := x.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return Float(f)
		}
		return x
	})
}
