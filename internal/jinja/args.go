package jinja

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/brinehq/brine/internal/py"
)

// Salt's filters are Python functions: Jinja calls them with the value
// filtered first, then the arguments written, positional or by name. A
// filter here is declared the same way, with its parameters' names and
// defaults as Salt's are, so that `flatten(levels=1)` and `flatten(1)`
// both bind.

// param is one parameter of a filter after the value filtered: its name
// as Salt's function spells it, and its default (required when none).
type param struct {
	name     string
	def      any
	required bool
}

// opt is an optional parameter with its default.
func opt(name string, def any) param { return param{name: name, def: def} }

// req is a required parameter.
func req(name string) param { return param{name: name, required: true} }

// pyFunc is a filter's body: the value filtered and its bound
// parameters, in the order declared, as plain Go values.
type pyFunc func(in any, args []any) (any, error)

// pyFilter makes a gonja filter of a Salt filter named name.
func pyFilter(name string, f pyFunc, params ...param) exec.FilterFunction {
	return func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		args, err := bind(name, va, params)
		if err != nil {
			return exec.AsValue(err)
		}
		out, err := f(GoValue(in), args)
		if err != nil {
			// gonja names the filter: "invalid call to filter 'x'".
			return exec.AsValue(err)
		}
		return exec.AsValue(out)
	}
}

// bind binds a call's arguments to params, as Python does, with
// Python's messages for a call that does not fit.
func bind(name string, va *exec.VarArgs, params []param) ([]any, error) {
	out := make([]any, len(params))
	set := make([]bool, len(params))
	if len(va.Args) > len(params) {
		return nil, fmt.Errorf("%s() takes %d positional arguments but %d were given", name, len(params)+1, len(va.Args)+1)
	}
	for i, a := range va.Args {
		out[i], set[i] = GoValue(a), true
	}
	keys := make([]string, 0, len(va.KwArgs))
	for k := range va.KwArgs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i := -1
		for j, p := range params {
			if p.name == k {
				i = j
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("%s() got an unexpected keyword argument '%s'", name, k)
		}
		if set[i] {
			return nil, fmt.Errorf("%s() got multiple values for argument '%s'", name, k)
		}
		out[i], set[i] = GoValue(va.KwArgs[k]), true
	}
	for i, p := range params {
		if set[i] {
			continue
		}
		if p.required {
			return nil, fmt.Errorf("%s() missing 1 required positional argument: '%s'", name, p.name)
		}
		out[i] = p.def
	}
	return out, nil
}

// jinjaStr is Python's str() of a template value: py.Str, extended to the
// values only templates hold (float32, bytes, lists, mappings and tuples
// printed as Python's repr, and Undefined, which prints as nothing).
func jinjaStr(v any) string {
	switch t := v.(type) {
	case float32:
		return py.Float(float64(t))
	case []byte:
		return pyBytes(t)
	case []any, map[string]any, yaml.MapSlice, pyTuple:
		return pyRepr(v)
	case pyUndefined:
		return ""
	}
	return py.Str(v)
}

// pyBytes is Python's repr of bytes: b'…'.
func pyBytes(b []byte) string {
	var sb strings.Builder
	quote := byte('\'')
	if strings.IndexByte(string(b), '\'') >= 0 && strings.IndexByte(string(b), '"') < 0 {
		quote = '"'
	}
	sb.WriteString("b")
	sb.WriteByte(quote)
	for _, c := range b {
		switch {
		case c == '\\' || c == quote:
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, c)
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte(quote)
	return sb.String()
}

// pyRepr is Python's repr of a plain value, for values nested in a list
// or a dictionary.
func pyRepr(v any) string {
	switch t := v.(type) {
	case string:
		return py.Repr(t)
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = pyRepr(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			parts = append(parts, py.Repr(k)+": "+pyRepr(t[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case yaml.MapSlice:
		parts := make([]string, 0, len(t))
		for _, it := range t {
			parts = append(parts, pyRepr(it.Key)+": "+pyRepr(it.Value))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case pyTuple:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = pyRepr(x)
		}
		if len(parts) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case pyUndefined:
		return "Undefined"
	}
	return jinjaStr(v)
}

// pyTypeName is Python's name of a plain value's type, for messages.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case string:
		return "str"
	case bool:
		return "bool"
	case int, int64, int32, uint, uint64:
		return "int"
	case float64, float32:
		return "float"
	case []any:
		return "list"
	case pyTuple:
		return "tuple"
	case map[string]any, yaml.MapSlice:
		return "dict"
	case pyUndefined:
		return "StrictUndefined"
	case []byte:
		return "bytes"
	}
	return fmt.Sprintf("%T", v)
}

// asInt reads an integer argument (Python's int() of an int, a float or
// a numeric string).
func asInt(v any) (int, bool) {
	switch t := v.(type) {
	case int:
		return t, true
	case int64:
		return int(t), true
	case float64:
		return int(t), true
	case bool:
		if t {
			return 1, true
		}
		return 0, true
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(t))
		return n, err == nil
	}
	return 0, false
}

// asFloat reads a number.
func asFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	case float64:
		return t, true
	case bool:
		if t {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// asList is a value iterated as Python does: a list's items, a
// dictionary's keys, a string's characters.
func asList(v any) ([]any, error) {
	switch t := v.(type) {
	case []any:
		return t, nil
	case map[string]any:
		out := make([]any, 0, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			out = append(out, k)
		}
		return out, nil
	case string:
		out := make([]any, 0, len(t))
		for _, r := range t {
			out = append(out, string(r))
		}
		return out, nil
	case nil:
		return nil, fmt.Errorf("'NoneType' object is not iterable")
	}
	return nil, fmt.Errorf("'%s' object is not iterable", pyTypeName(v))
}

// truthy is Python's bool() of a plain value.
func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case int:
		return t != 0
	case int64:
		return t != 0
	case float64:
		return t != 0
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	case []byte:
		return len(t) > 0
	}
	return true
}

// pyErr is an error whose message is Salt's (or Python's) own, word for
// word, capital letter and full stop included, so that a template's
// author reads what Salt would have said.
func pyErr(format string, args ...any) error { return fmt.Errorf(format, args...) }
