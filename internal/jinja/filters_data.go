package jinja

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/target"
)

// Salt's filters on lists and dictionaries (salt/utils/jinja.py,
// salt/utils/data.py, salt/utils/dictupdate.py), with Salt's names,
// parameters and results.

// pyIn is Python's `x in list`.
func pyIn(x any, list []any) bool {
	for _, y := range list {
		if py.Equal(x, y) {
			return true
		}
	}
	return false
}

// uniqueList keeps the first of equal items, as Salt's unique does on a
// list.
func uniqueList(in []any) []any {
	out := make([]any, 0, len(in))
	for _, v := range in {
		if !pyIn(v, out) {
			out = append(out, v)
		}
	}
	return out
}

// hashable says whether Python would treat the value as hashable (a
// scalar or a string), so that Salt's set operations return a set.
func hashable(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return false
	}
	return true
}

// pySet is a set Salt returns of hashables: its items, in an order fixed
// for a given input (Python's set order is its hashes'; brine sorts).
func pySet(items []any) []any {
	out := uniqueList(items)
	sort.SliceStable(out, func(i, j int) bool { return pyLess(out[i], out[j]) })
	return out
}

// pyLess orders numbers by value and everything else by its text.
func pyLess(a, b any) bool {
	fa, okA := asFloat(a)
	fb, okB := asFloat(b)
	if okA && okB {
		return fa < fb
	}
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return sa < sb
		}
	}
	return jinjaStr(a) < jinjaStr(b)
}

func listArg(v any) ([]any, error) { return asList(v) }

// setOp is union, intersect, difference or symmetric_difference.
func setOp(op string) pyFunc {
	return func(in any, args []any) (any, error) {
		if hashable(in) && hashable(args[0]) {
			a, err := asList(in)
			if err != nil {
				return nil, err
			}
			b, err := asList(args[0])
			if err != nil {
				return nil, err
			}
			return pySet(combine(op, a, b)), nil
		}
		a, err := listArg(in)
		if err != nil {
			return nil, err
		}
		b, err := listArg(args[0])
		if err != nil {
			return nil, err
		}
		if op == "union" {
			if _, ok := in.([]any); !ok {
				return nil, fmt.Errorf(`can only concatenate %s (not "%s") to %s`, pyTypeName(in), pyTypeName(args[0]), pyTypeName(in))
			}
			if _, ok := args[0].([]any); !ok {
				return nil, fmt.Errorf(`can only concatenate list (not "%s") to list`, pyTypeName(args[0]))
			}
		}
		return uniqueList(combine(op, a, b)), nil
	}
}

func combine(op string, a, b []any) []any {
	var out []any
	switch op {
	case "union":
		out = append(append(out, a...), b...)
	case "intersect":
		for _, x := range a {
			if pyIn(x, b) {
				out = append(out, x)
			}
		}
	case "difference":
		for _, x := range a {
			if !pyIn(x, b) {
				out = append(out, x)
			}
		}
	case "symmetric_difference":
		both := combine("intersect", a, b)
		for _, x := range uniqueList(combine("union", a, b)) {
			if !pyIn(x, both) {
				out = append(out, x)
			}
		}
	}
	if out == nil {
		out = []any{}
	}
	return out
}

func filterUniqueSalt(in any, _ []any) (any, error) {
	l, err := asList(in)
	if err != nil {
		return nil, err
	}
	if hashable(in) {
		return pySet(l), nil
	}
	return uniqueList(l), nil
}

// minMax is Salt's min and max: Python's min(obj)/max(obj).
func minMax(isMax bool) pyFunc {
	return func(in any, _ []any) (any, error) {
		l, err := asList(in)
		if err != nil {
			return nil, err
		}
		name := "min"
		if isMax {
			name = "max"
		}
		if len(l) == 0 {
			return nil, fmt.Errorf("%s() arg is an empty sequence", name)
		}
		best := l[0]
		for _, x := range l[1:] {
			if err := comparable(best, x); err != nil {
				return nil, err
			}
			if isMax && pyLess(best, x) || !isMax && pyLess(x, best) {
				best = x
			}
		}
		return best, nil
	}
}

// comparable refuses what Python cannot order: a number and a string.
func comparable(a, b any) error {
	_, na := asFloat(a)
	_, nb := asFloat(b)
	_, sa := a.(string)
	_, sb := b.(string)
	if na && nb || sa && sb {
		return nil
	}
	return fmt.Errorf("'<' not supported between instances of '%s' and '%s'", pyTypeName(b), pyTypeName(a))
}

// filterAvg is Salt's avg: the mean of a list, or a number as a float.
func filterAvg(in any, _ []any) (any, error) {
	if hashable(in) {
		if f, ok := asFloat(in); ok {
			return f, nil
		}
		return nil, fmt.Errorf("could not convert %s to float: %s", pyTypeName(in), pyRepr(in))
	}
	l, err := asList(in)
	if err != nil {
		return nil, err
	}
	if len(l) == 0 {
		return nil, errors.New("division by zero")
	}
	sum := 0.0
	for _, x := range l {
		f, ok := asFloat(x)
		if !ok {
			return nil, fmt.Errorf("unsupported operand type(s) for +: 'int' and '%s'", pyTypeName(x))
		}
		sum += f
	}
	return sum / float64(len(l)), nil
}

// isIter is Salt's is_iter: iterable and not a string.
func isIter(v any) bool {
	switch v.(type) {
	case []any, map[string]any, []byte:
		return true
	}
	return false
}

// filterFlatten is Salt's flatten(levels=None, preserve_nulls=False).
func filterFlatten(in any, args []any) (any, error) {
	levels := -1
	if args[0] != nil {
		n, ok := asInt(args[0])
		if !ok {
			return nil, fmt.Errorf("levels must be an integer, not %s", pyTypeName(args[0]))
		}
		levels = n
	}
	l, err := asList(in)
	if err != nil {
		return nil, err
	}
	return flatten(l, levels, truthy(args[1])), nil
}

func flatten(l []any, levels int, preserveNulls bool) []any {
	out := []any{}
	for _, x := range l {
		if !preserveNulls && (x == nil || x == "None" || x == "null") {
			continue
		}
		if isIter(x) && levels != 0 {
			sub, _ := asList(x)
			next := levels - 1
			if levels < 0 {
				next = -1
			}
			out = append(out, flatten(sub, next, preserveNulls)...)
			continue
		}
		out = append(out, x)
	}
	return out
}

// exactlyN is Salt's exactly_n_true: exactly amount items are truthy.
func exactlyN(in any, args []any) (any, error) {
	l, err := asList(in)
	if err != nil {
		return nil, err
	}
	amount, ok := asInt(args[0])
	if !ok {
		return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", pyTypeName(args[0]))
	}
	n := 0
	for _, x := range l {
		if truthy(x) {
			n++
		}
	}
	return n == amount, nil
}

// compareLists is Salt's compare_lists(old, new): {'new': added, 'old':
// removed}, only the keys with items.
func compareLists(in any, args []any) (any, error) {
	old, err := asList(in)
	if err != nil {
		return nil, err
	}
	nw, err := asList(args[0])
	if err != nil {
		return nil, err
	}
	ret := map[string]any{}
	for _, x := range nw {
		if !pyIn(x, old) {
			l, _ := ret["new"].([]any)
			ret["new"] = append(l, x)
		}
	}
	for _, x := range old {
		if !pyIn(x, nw) {
			l, _ := ret["old"].([]any)
			ret["old"] = append(l, x)
		}
	}
	return ret, nil
}

// compareDicts is Salt's compare_dicts(old, new): each key changed as
// {'old': …, 'new': …}, ” for a side without it.
func compareDicts(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if _, err := bind("compare_dicts", va, []param{opt("new", nil)}); err != nil {
		return exec.AsValue(err)
	}
	nwValue := va.GetKeywordArgument("new", nil)
	if len(va.Args) > 0 {
		nwValue = va.Args[0]
	}
	old, okOld := toDict(in)
	nw, okNew := toDict(nwValue)
	if !in.IsNil() && !okOld || !nwValue.IsNil() && !okNew {
		return exec.AsValue(errors.New("compare_dicts compares two dictionaries"))
	}
	if old == nil {
		old = exec.NewDict()
	}
	if nw == nil {
		nw = exec.NewDict()
	}
	// Salt goes through a set of the keys, whose order Python's hashing
	// makes: here the new dict's keys, then the old one's.
	ret := exec.NewDict()
	change := func(pairs ...any) *exec.Dict {
		d := exec.NewDict()
		for i := 0; i < len(pairs); i += 2 {
			d.Set(pairs[i], pairs[i+1])
		}
		return d
	}
	for _, p := range nw.Pairs {
		o, ok := old.Lookup(p.Key)
		switch {
		case !ok:
			ret.Set(p.Key, change("old", "", "new", p.Value))
		case !py.Equal(GoValue(o), GoValue(p.Value)):
			ret.Set(p.Key, change("old", o, "new", p.Value))
		}
	}
	for _, p := range old.Pairs {
		if _, ok := nw.Lookup(p.Key); !ok {
			ret.Set(p.Key, change("new", "", "old", p.Value))
		}
	}
	return exec.AsValue(ret)
}

// encodeData is Salt's json_encode_list/json_encode_dict (and their
// json_decode_* aliases, which Salt points at the same functions): every
// string, key or value, made bytes.
func encodeData(kind string) pyFunc {
	return func(in any, _ []any) (any, error) {
		switch kind {
		case "list":
			if _, ok := in.([]any); !ok {
				if _, ok := in.(map[string]any); !ok {
					if _, err := asList(in); err != nil {
						return nil, err
					}
				}
			}
			l, _ := asList(in)
			return encodeValue(l), nil
		default:
			m, ok := in.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'items'", pyTypeName(in))
			}
			return encodeValue(m), nil
		}
	}
}

// bytesKeyed is a dictionary whose keys are bytes, as json_encode_dict
// makes: {b'a': b'b'}.
type bytesKeyed map[string]any

func (m bytesKeyed) String() string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, pyBytes([]byte(k))+": "+pyRepr(m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// byteList is a list holding bytes, printed as Python does.
type byteList []any

func (l byteList) String() string {
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = pyRepr(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func encodeValue(v any) any {
	switch t := v.(type) {
	case string:
		return pyByteString(t)
	case []any:
		out := make(byteList, len(t))
		for i, x := range t {
			out[i] = encodeValue(x)
		}
		return out
	case map[string]any:
		out := bytesKeyed{}
		for k, x := range t {
			out[k] = encodeValue(x)
		}
		return out
	}
	return v
}

// pyByteString is bytes that print as Python's repr of them.
type pyByteString string

func (b pyByteString) String() string { return pyBytes([]byte(b)) }

func sortedIgnorecase(in any, _ []any) (any, error) {
	l, err := asList(in)
	if err != nil {
		return nil, err
	}
	out := append([]any(nil), l...)
	for _, x := range out {
		if _, ok := x.(string); !ok {
			return nil, fmt.Errorf("'%s' object has no attribute 'lower'", pyTypeName(x))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return strings.ToLower(out[i].(string)) < strings.ToLower(out[j].(string))
	})
	return out, nil
}

func substringInList(in any, args []any) (any, error) {
	s, ok := in.(string)
	if !ok {
		return nil, fmt.Errorf("'in <string>' requires string as left operand, not %s", pyTypeName(in))
	}
	l, err := asList(args[0])
	if err != nil {
		return nil, err
	}
	for _, x := range l {
		if t, ok := x.(string); ok && strings.Contains(t, s) {
			return true, nil
		}
	}
	return false, nil
}

// dictKey is set/update/append/extend_dict_key_value: keys is a path
// through in_dict, delimited, whose missing dictionaries are made; the
// last key is set (or its dictionary updated, its list appended to or
// extended). The dictionary itself is changed and returned.
func dictKey(op string) exec.FilterFunction {
	name := op + "_dict_key_value"
	return func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		args, err := bind(name, va, dictKeyParams)
		if err != nil {
			return exec.AsValue(err)
		}
		value := va.GetKeywordArgument("value", nil)
		if len(va.Args) > 1 {
			value = va.Args[1]
		}
		// A template dict is changed in place, keeping its order, as
		// Salt changes the dict it is given; a Go map (the context's)
		// is changed too, and the dict returned keeps the order a
		// template reads it in, new keys last.
		goMap, isGoMap := in.Interface().(map[string]any)
		d, ok := toDict(in)
		if !ok {
			return exec.AsValue(fmt.Errorf("the value must be a dictionary, not %s", pyTypeName(GoValue(in))))
		}
		if err := dictKeyChange(op, d, jinjaStr(args[0]), value, jinjaStr(args[2])); err != nil {
			return exec.AsValue(err)
		}
		out := exec.AsValue(d)
		if isGoMap {
			for k := range goMap {
				delete(goMap, k)
			}
			for k, v := range GoValue(out).(map[string]any) {
				goMap[k] = v
			}
		}
		return out
	}
}

// dictKeyChange is salt.utils.dictupdate's set/update/append/extend of
// the key keys (delim between levels) in d.
func dictKeyChange(op string, d *exec.Dict, keys string, value *exec.Value, delim string) error {
	ptr := d
	last := keys
	if delim != "" && strings.Contains(keys, delim) {
		parts := strings.Split(keys, delim)
		last = parts[len(parts)-1]
		for _, k := range parts[:len(parts)-1] {
			// Salt's ensure_dict_key replaces what is not a
			// dictionary on the way.
			cur, _ := ptr.Lookup(k)
			next, ok := (*exec.Dict)(nil), false
			if cur != nil {
				next, ok = toDict(cur)
			}
			if !ok {
				next = exec.NewDict()
			}
			if cur == nil || cur.Interface() != any(next) {
				ptr.Set(k, next)
			}
			ptr = next
		}
	}
	cur, found := ptr.Lookup(last)
	switch op {
	case "set":
		ptr.Set(last, value)
	case "update":
		if !found || cur.IsNil() {
			cur = exec.AsValue(exec.NewDict())
		}
		target, ok := toDict(cur)
		if !ok {
			return pyErr("The last key contains a %s, which cannot update.", pyClass(GoValue(cur)))
		}
		if !value.IsDict() {
			return pyErr("Cannot update %s with a %s.", pyClass(map[string]any{}), pyClass(GoValue(value)))
		}
		value.Iterate(func(_, _ int, k, v *exec.Value) bool {
			target.Set(k, v)
			return true
		}, func() {})
		ptr.Set(last, target)
	case "append", "extend":
		if !found || cur.IsNil() {
			cur = exec.AsValue([]any{})
		}
		if !cur.IsList() || cur.IsTuple() {
			return pyErr("The last key contains a %s, which cannot %s.", pyClass(GoValue(cur)), op)
		}
		list := []any{}
		cur.Iterate(func(_, _ int, item, _ *exec.Value) bool {
			list = append(list, item)
			return true
		}, func() {})
		if op == "append" {
			list = append(list, value)
		} else {
			// list.extend takes any iterable: a string's characters,
			// a dict's keys
			switch {
			case value.IsString():
				for _, r := range value.String() {
					list = append(list, string(r))
				}
			case value.IsList() || value.IsDict():
				value.Iterate(func(_, _ int, item, _ *exec.Value) bool {
					list = append(list, item)
					return true
				}, func() {})
			default:
				return pyErr("Cannot extend %s with a %s.", pyClass([]any{}), pyClass(GoValue(value)))
			}
		}
		ptr.Set(last, list)
	}
	return nil
}

// pyClass is Python's repr of a value's type: <class 'list'>.
func pyClass(v any) string { return "<class '" + pyTypeName(v) + "'>" }

// mysqlToDict is Salt's mysql_to_dict(data, key): the rows of MySQL's
// table output, by the column key.
func mysqlToDict(in any, args []any) (any, error) {
	lines, err := asList(in)
	if err != nil {
		return nil, err
	}
	key := jinjaStr(args[0])
	ret := exec.NewDict()
	headers := []string{""}
	for _, l := range lines {
		line := jinjaStr(l)
		if line == "" || strings.HasPrefix(line, "+") {
			continue
		}
		comps := strings.Split(line, "|")
		for i := range comps {
			comps[i] = strings.TrimSpace(comps[i])
		}
		if len(headers) > 1 {
			row := exec.NewDict()
			for f := 1; f < len(headers)-1; f++ {
				if f < len(comps) {
					row.Set(headers[f], toNum(comps[f]))
				}
			}
			k, ok := row.Lookup(key)
			if !ok {
				return nil, fmt.Errorf("KeyError: %s", pyRepr(key))
			}
			ret.Set(k, row)
		} else {
			headers = comps
		}
	}
	return ret, nil
}

// filterTraverseSalt is Salt's traverse(data, key, default=None,
// delimiter=':').
func filterTraverseSalt(in any, args []any) (any, error) {
	if v, ok := target.Traverse(in, jinjaStr(args[0]), jinjaStr(args[2])); ok {
		return v, nil
	}
	return args[1], nil
}

// filterSequenceSalt is Salt's sequence: a list of a single value.
func filterSequenceSalt(in any, _ []any) (any, error) {
	if isIter(in) {
		return in, nil
	}
	return []any{in}, nil
}

// filterToBoolSalt is Salt's to_bool: yes, 1 and true (any case) are
// true among strings; positive integers; non-empty lists and
// dictionaries; and nothing else.
func filterToBoolSalt(in any, _ []any) (any, error) {
	switch t := in.(type) {
	case nil:
		return false, nil
	case bool:
		return t, nil
	case string:
		s := strings.ToLower(t)
		return s == "yes" || s == "1" || s == "true", nil
	case int:
		return t > 0, nil
	case int64:
		return t > 0, nil
	case []any:
		return len(t) > 0, nil
	case map[string]any:
		return len(t) > 0, nil
	}
	return false, nil
}

// filterDictsort is Jinja's dictsort(value, case_sensitive=False,
// by='key', reverse=False): the (key, value) pairs, sorted.
func filterDictsort(in any, args []any) (any, error) {
	m, ok := in.(map[string]any)
	if !ok {
		return nil, pyErr("'%s' object has no attribute 'items'", pyTypeName(in))
	}
	by := jinjaStr(args[1])
	if by != "key" && by != "value" {
		return nil, pyErr("You can only sort by either 'key' or 'value'")
	}
	fold := func(v any) any {
		if s, ok := v.(string); ok && !truthy(args[0]) {
			return strings.ToLower(s)
		}
		return v
	}
	pairs := make([]any, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		pairs = append(pairs, []any{k, m[k]})
	}
	idx := 0
	if by == "value" {
		idx = 1
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		a, b := fold(pairs[i].([]any)[idx]), fold(pairs[j].([]any)[idx])
		if truthy(args[2]) {
			return pyLess(b, a)
		}
		return pyLess(a, b)
	})
	// Jinja's dictsort is sorted(value.items()): a list of tuples.
	for i, p := range pairs {
		kv := p.([]any)
		pairs[i] = exec.Tuple{exec.AsValue(kv[0]), exec.AsValue(kv[1])}
	}
	return pairs, nil
}
