package jinja

import (
	"github.com/nikolalohinski/gonja/v2/exec"
)

// Salt's functions that change a dictionary they are given, as the
// template sees it: {% do salt['defaults.merge'](defaults, overrides) %}
// merges into the template's own `defaults`. A salt function is called
// with plain copies of its arguments (function.Call normalises them), so
// the `salt` object, once the call has succeeded (its checks and errors
// are the function's), makes the same change to the template's value
// itself, with Python's semantics on it (key order, the same objects),
// and gives that value back, as Salt returns dest itself.

// inPlace is, per function, the change it makes to its arguments; ok is
// false when it makes none here (in_place=False, or a dest the template
// does not hold as a dictionary), and the function's result stands.
var inPlace = map[string]func(a boundArgs) (dest *exec.Value, ok bool){
	// defaults.merge(dest, src, merge_lists=False, in_place=True, convert_none=True)
	"defaults.merge": func(a boundArgs) (*exec.Value, bool) {
		dest, src := a.arg(0, "dest"), a.arg(1, "src")
		if !a.flag(3, "in_place", true) || !isMutableDict(dest) {
			return nil, false
		}
		if src == nil || src.IsNil() {
			return dest, true // convert_none: {} (else the call failed)
		}
		updateValue(dest, src, true, a.flag(2, "merge_lists", false))
		return dest, true
	},
	// defaults.update(dest, defaults, merge_lists=True, in_place=True, convert_none=True)
	"defaults.update": func(a boundArgs) (*exec.Value, bool) {
		dest, defaults := a.arg(0, "dest"), a.arg(1, "defaults")
		if !a.flag(3, "in_place", true) || !isMutableDict(dest) {
			return nil, false
		}
		mergeLists := a.flag(2, "merge_lists", true)
		for _, item := range dest.Items() {
			merged := deepCopyValue(defaults)
			if merged == nil || merged.IsNil() {
				merged = exec.AsValue(exec.NewDict())
			}
			if !item.Value.IsNil() {
				updateValue(merged, item.Value, true, mergeLists)
			}
			setItem(dest, item.Key, merged)
		}
		return dest, true
	},
	// slsutil.update(dest, upd, recursive_update=True, merge_lists=False)
	"slsutil.update": func(a boundArgs) (*exec.Value, bool) {
		dest, upd := a.arg(0, "dest"), a.arg(1, "upd")
		if !isMutableDict(dest) || upd == nil || !upd.IsDict() {
			return nil, false
		}
		updateValue(dest, upd, a.flag(2, "recursive_update", true), a.flag(3, "merge_lists", false))
		return dest, true
	},
}

// boundArgs is a call's arguments as the template gave them.
type boundArgs struct{ *exec.VarArgs }

// arg is parameter name, given at position i or by keyword; nil when
// not given.
func (a boundArgs) arg(i int, name string) *exec.Value {
	if i < len(a.Args) {
		return a.Args[i]
	}
	return a.KwArgs[name]
}

// flag is a boolean parameter, def when not given.
func (a boundArgs) flag(i int, name string, def bool) bool {
	if v := a.arg(i, name); v != nil {
		return v.IsTrue()
	}
	return def
}

// isMutableDict tells whether v is a dictionary the template holds
// itself: a template dict or a Go map.
func isMutableDict(v *exec.Value) bool {
	if v == nil {
		return false
	}
	switch v.Interface().(type) {
	case *exec.Dict, map[string]any:
		return true
	}
	return false
}

// lookup is d[key] of a template dict or a Go map.
func lookup(d, key *exec.Value) (*exec.Value, bool) {
	switch t := d.Interface().(type) {
	case *exec.Dict:
		return t.Lookup(key)
	case map[string]any:
		v, ok := t[key.PyString()]
		if !ok {
			return nil, false
		}
		return exec.ToValue(v), true
	}
	return nil, false
}

// setItem is d[key] = value: a Go map holds plain values, as the rest
// of brine reads it.
func setItem(d, key, value *exec.Value) {
	switch t := d.Interface().(type) {
	case *exec.Dict:
		t.Set(key, value)
	case map[string]any:
		t[key.PyString()] = GoValue(value)
	}
}

// updateValue is Salt's dictupdate.update(dest, upd, recursive_update,
// merge_lists) on template values (DictUpdate's algorithm): dest changed
// in place, a dictionary under a key both have updated in turn, upd's
// other values set as they are (the same objects), new keys in upd's
// order.
func updateValue(dest, upd *exec.Value, recursive, mergeLists bool) {
	items := upd.Items()
	if recursive {
		overlap := false
		for _, it := range items {
			if _, ok := lookup(dest, it.Key); ok {
				overlap = true
				break
			}
		}
		recursive = overlap
	}
	for _, it := range items {
		if recursive {
			cur, _ := lookup(dest, it.Key)
			switch {
			case cur != nil && isMutableDict(cur) && it.Value.IsDict():
				updateValue(cur, it.Value, true, mergeLists)
				setItem(dest, it.Key, cur)
				continue
			case cur != nil && isPyList(cur) && isPyList(it.Value) && mergeLists:
				merged := deepCopyValue(cur).Interface().([]any)
				had := merged[:len(merged):len(merged)]
				for _, x := range listItems(it.Value) {
					if !containsValue(had, x) {
						merged = append(merged, x.Interface())
					}
				}
				setItem(dest, it.Key, exec.AsValue(merged))
				continue
			}
		}
		setItem(dest, it.Key, it.Value)
	}
}

// isPyList tells a Python list (not a tuple or a string).
func isPyList(v *exec.Value) bool { return v.IsList() && !v.IsTuple() && !v.IsString() }

func containsValue(list []any, x *exec.Value) bool {
	for _, y := range list {
		if exec.ToValue(y).EqualValueTo(x) {
			return true
		}
	}
	return false
}

// deepCopyValue is copy.deepcopy of a template value: dictionaries and
// lists copied all the way down (a template dict stays one, in order).
func deepCopyValue(v *exec.Value) *exec.Value {
	if v == nil {
		return nil
	}
	switch t := v.Interface().(type) {
	case *exec.Dict:
		out := exec.NewDict()
		for _, p := range t.Pairs {
			out.Set(p.Key, deepCopyValue(p.Value))
		}
		return exec.AsValue(out)
	case map[string]any:
		return exec.AsValue(DeepCopy(t))
	}
	if isPyList(v) {
		out := []any{}
		for _, it := range listItems(v) {
			out = append(out, deepCopyValue(it).Interface())
		}
		return exec.AsValue(out)
	}
	return v
}

// listItems are a list's items.
func listItems(v *exec.Value) []*exec.Value {
	out := []*exec.Value{}
	v.Iterate(func(_, _ int, item, _ *exec.Value) bool {
		out = append(out, item)
		return true
	}, func() {})
	return out
}
