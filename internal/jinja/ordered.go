package jinja

import (
	"errors"
	"maps"
	"slices"
	"sort"

	"github.com/goccy/go-yaml"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// pyUndefined is Jinja's Undefined inside a value a filter is given
// ([ports['https']] | python): pprint shows it as Undefined, Salt's YAML
// dumper as NULL, json refuses it.
type pyUndefined struct{}

// pyTuple is a Python tuple among plain values: printed (a, b), dumped
// as a list.
type pyTuple []any

// goOrdered is v as plain Go values with every mapping a yaml.MapSlice in
// the template's order (a template dict's as kept, a Go map's sorted, as
// the template reads it), a tuple a pyTuple and an undefined value
// pyUndefined; an error in it is returned.
func goOrdered(v *exec.Value) (any, error) {
	switch {
	case v == nil || v.IsNil():
		return nil, nil
	case v.IsUndefined():
		return pyUndefined{}, nil
	case v.IsError():
		return nil, errors.New(v.Error())
	case v.IsString():
		return v.String(), nil
	case v.IsDict():
		out := yaml.MapSlice{}
		var err error
		v.Iterate(func(_, _ int, key, value *exec.Value) bool {
			var k, x any
			if k, err = goOrdered(key); err != nil {
				return false
			}
			if x, err = goOrdered(value); err != nil {
				return false
			}
			out = append(out, yaml.MapItem{Key: k, Value: x})
			return true
		}, func() {})
		return out, err
	case v.IsList():
		out := []any{}
		var err error
		v.Iterate(func(_, _ int, item, _ *exec.Value) bool {
			var x any
			if x, err = goOrdered(item); err != nil {
				return false
			}
			out = append(out, x)
			return true
		}, func() {})
		if v.IsTuple() {
			return pyTuple(out), err
		}
		return out, err
	}
	return GoValue(v), nil
}

// sortedMaps is v with every mapping's keys sorted, as Python's
// pprint and yaml.dump(sort_keys=True) write a dict.
func sortedMaps(v any) any {
	switch t := v.(type) {
	case yaml.MapSlice:
		out := make(yaml.MapSlice, len(t))
		for i, it := range t {
			out[i] = yaml.MapItem{Key: it.Key, Value: sortedMaps(it.Value)}
		}
		sort.SliceStable(out, func(i, j int) bool { return pyLess(out[i].Key, out[j].Key) })
		return out
	case map[string]any:
		out := make(yaml.MapSlice, 0, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			out = append(out, yaml.MapItem{Key: k, Value: sortedMaps(t[k])})
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = sortedMaps(x)
		}
		return out
	case pyTuple:
		return pyTuple(sortedMaps([]any(t)).([]any))
	}
	return v
}

// toDict is a mapping as a template dict: a template dict itself (so that
// a change is seen by the template), a Go map copied with its keys in
// the template's order.
func toDict(v *exec.Value) (*exec.Dict, bool) {
	if d, ok := v.Interface().(*exec.Dict); ok {
		return d, true
	}
	if !v.IsDict() {
		return nil, false
	}
	d := exec.NewDict()
	v.Iterate(func(_, _ int, key, value *exec.Value) bool {
		d.Set(key, value)
		return true
	}, func() {})
	return d, true
}
