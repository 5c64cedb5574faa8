// Package grains is Salt's grains execution module: items, item, get, ls
// and has_value over the agent's grains; setval, setvals and append keep
// grains in the agent's grains file, as Salt's do.
package grains

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/target"
)

// Module declares the grains functions.
func Module(env *modules.Env) []function.Func {
	set := func(ctx context.Context, g map[string]any) (any, error) {
		if env.SetGrains == nil {
			return nil, errors.New("this agent cannot keep grains")
		}
		return env.SetGrains(ctx, g)
	}
	return []function.Func{
		{
			Name: "grains.setval", Doc: "Set grain key to val in the agent's grains file; returns {key: val}.",
			Params: []function.Param{{Name: "key", Kind: function.String, Required: true}, {Name: "val", Kind: function.Any, Required: true},
				{Name: "destructive", Kind: function.Bool, Default: false}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return set(ctx, map[string]any{in.String("key"): in.Value("val")})
			},
		},
		{
			Name: "grains.setvals", Doc: "Set several grains ({key: val, …}) in the agent's grains file.",
			Params: []function.Param{{Name: "grains", Kind: function.Map, Required: true}, {Name: "destructive", Kind: function.Bool, Default: false}},
			Run:    func(ctx context.Context, in *function.Input) (any, error) { return set(ctx, in.Map("grains")) },
		},
		{
			Name: "grains.append", Doc: "Append val to the list grain key (created when absent); returns {key: [...]}.",
			Params: []function.Param{{Name: "key", Kind: function.String, Required: true}, {Name: "val", Kind: function.Any, Required: true},
				{Name: "convert", Kind: function.Bool, Default: false}, {Name: "delimiter", Kind: function.String, Default: ":"}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				key := in.String("key")
				cur, ok := env.Grains()[key]
				var list []any
				switch v := cur.(type) {
				case nil:
				case []any:
					list = append(list, v...)
				default:
					if !ok || !in.Bool("convert") {
						return nil, fmt.Errorf("the key %s is not a valid list (convert=True makes it one)", key)
					}
					list = []any{v}
				}
				for _, x := range list {
					if reflect.DeepEqual(x, in.Value("val")) {
						return nil, fmt.Errorf("the val %v was already in the list %s", in.Value("val"), key)
					}
				}
				return set(ctx, map[string]any{key: append(list, in.Value("val"))})
			},
		},
		{
			Name: "grains.items", Doc: "Every grain of this agent.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return env.Grains(), nil },
		},
		{
			Name: "grains.item", Doc: "The named grains, as {name: value} (missing ones are empty strings, as Salt).",
			VarArgs: true, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				g := env.Grains()
				out := map[string]any{}
				for _, a := range in.Extra {
					k, _ := a.(string)
					if v, ok := target.Traverse(g, k, target.DefaultDelimiter); ok {
						out[k] = v
					} else {
						out[k] = ""
					}
				}
				return out, nil
			},
		},
		{
			Name: "grains.get", Doc: "One grain by key, nested keys separated by ':' (default when absent).",
			Params: []function.Param{
				{Name: "key", Kind: function.String, Required: true},
				{Name: "default", Kind: function.Any, Default: ""},
				{Name: "delimiter", Kind: function.String, Default: target.DefaultDelimiter},
			},
			ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				if v, ok := target.Traverse(env.Grains(), in.String("key"), in.String("delimiter")); ok {
					return v, nil
				}
				return in.Ordered(in.Value("default"), in.Order("default")), nil
			},
		},
		{
			Name: "grains.filter_by", ReadOnly: true,
			Doc: "The entry of lookup_dict whose key (a glob) matches this agent's value of grain (os_family; each " +
				"item of a list grain in turn), else the entry named default; base's entry under it and merge over it, " +
				"as formulas' map.jinja use it (Salt's salt.utils.data.filter_by).",
			Params: []function.Param{
				{Name: "lookup_dict", Kind: function.Map, Required: true},
				{Name: "grain", Kind: function.String, Default: "os_family"},
				{Name: "merge", Kind: function.Any},
				{Name: "default", Kind: function.Any, Default: "default"},
				{Name: "base", Kind: function.Any},
			},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				out, order, err := FilterBy(in.Map("lookup_dict"), in.Order("lookup_dict"), env.Grains(), in.String("grain"),
					in.Value("merge"), in.Order("merge"), in.Value("default"), in.Value("base"))
				return in.Ordered(out, order), err
			},
		},
		{
			Name: "grains.has_value", Doc: "Whether the grain exists and is not empty.",
			Params:   []function.Param{{Name: "key", Kind: function.String, Required: true}},
			ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				v, ok := target.Traverse(env.Grains(), in.String("key"), target.DefaultDelimiter)
				return ok && !empty(v), nil
			},
		},
		{
			Name: "grains.ls", Doc: "The names of every grain, sorted.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) {
				return slices.Sorted(maps.Keys(env.Grains())), nil
			},
		},
	}
}

func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	case bool:
		return !t
	}
	return false
}

// FilterBy is Salt's salt.utils.data.filter_by: the lookup entry
// whose key matches (fnmatchcase) the value at traverse in data (each
// item of a list in turn), keys tried in lookup's order (lookupOrder),
// else lookup[def]; the entry named base updated with it (or base's
// alone when nothing matched); merge, when truthy, updated into it. The
// order is the result's, as Salt's dicts have it: the entry's keys, then
// merge's new ones in merge's order (mergeOrder), and so on down.
func FilterBy(lookup map[string]any, lookupOrder *keyorder.Order, data map[string]any, traverse string,
	merge any, mergeOrder *keyorder.Order, def, base any) (any, *keyorder.Order, error) {
	val, ok := target.Traverse(data, traverse, target.DefaultDelimiter)
	if !ok {
		val = []any{}
	}
	each, isList := val.([]any)
	if !isList {
		each = []any{val}
	}
	keys := lookupOrder.KeysOf(lookup)
	var ret any
	var order *keyorder.Order
	found := false
	for _, v := range each {
		s := jinja.PyStr(v)
		for _, k := range keys {
			if fnmatch.Compile(k).Match(s) {
				ret, order, found = lookup[k], lookupOrder.At(k), true
				break
			}
		}
		if found && ret != nil {
			break
		}
		found = false
	}
	if ret == nil {
		ret, order = lookup[jinja.PyStr(def)], lookupOrder.At(jinja.PyStr(def))
	}
	if jinja.Truthy(base) {
		if baseValues, ok := lookup[jinja.PyStr(base)]; ok {
			baseOrder := lookupOrder.At(jinja.PyStr(base))
			switch b := baseValues.(type) {
			case map[string]any:
				if ret == nil {
					ret, order = baseValues, baseOrder
					break
				}
				r, ok := ret.(map[string]any)
				if !ok {
					return nil, nil, jinja.PyError("filter_by default and look-up values must both be dictionaries.")
				}
				ret, order = jinja.DictUpdateOrdered(jinja.DeepCopy(b).(map[string]any), baseOrder, r, order, true, false)
			default:
				if ret == nil {
					ret, order = baseValues, baseOrder
				}
			}
		}
	}
	if jinja.Truthy(merge) {
		m, ok := merge.(map[string]any)
		if !ok {
			return nil, nil, jinja.PyError("filter_by merge argument must be a dictionary.")
		}
		if ret == nil {
			return m, mergeOrder, nil
		}
		r, ok := ret.(map[string]any)
		if !ok {
			return nil, nil, jinja.PyError("Cannot update using non-dict types in dictupdate.update()")
		}
		ret, order = jinja.DictUpdateOrdered(r, order, jinja.DeepCopy(m).(map[string]any), mergeOrder, true, false)
	}
	return ret, order, nil
}
