// Package grains is Salt's grains execution module: items, item, get, ls
// and has_value over the agent's grains; setval, setvals and append keep
// grains in the agent's grains file, as Salt's do.
package grains

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
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
				return in.Value("default"), nil
			},
		},
		{
			Name: "grains.filter_by", ReadOnly: true,
			Doc: "The entry of lookup_dict for this agent's value of grain (os_family; keys may be globs), else the " +
				"entry named default; base's entry under it and merge over it, as formulas' map.jinja use it.",
			Params: []function.Param{
				{Name: "lookup_dict", Kind: function.Map, Required: true},
				{Name: "grain", Kind: function.String, Default: "os_family"},
				{Name: "merge", Kind: function.Map},
				{Name: "default", Kind: function.String, Default: "default"},
				{Name: "base", Kind: function.String},
			},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return filterBy(in.Map("lookup_dict"), env.Grains(), in.String("grain"), in.Map("merge"),
					in.String("default"), in.String("base")), nil
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

// filterBy is Salt's grains.filter_by (salt.utils.data.filter_by).
func filterBy(lookup, grains map[string]any, grain string, merge map[string]any, def, base string) any {
	val, _ := target.Traverse(grains, grain, target.DefaultDelimiter)
	var keys []string
	switch v := val.(type) {
	case []any:
		for _, x := range v {
			keys = append(keys, fmt.Sprint(x))
		}
	case nil:
	default:
		keys = []string{fmt.Sprint(v)}
	}
	var ret any
	found := false
	for _, k := range keys {
		for pattern, entry := range lookup {
			if ok, _ := path.Match(pattern, k); ok || pattern == k {
				ret, found = entry, true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		ret = lookup[def]
	}
	if base != "" {
		if b, ok := lookup[base].(map[string]any); ok {
			ret = state.Merge(b, ret)
		}
	}
	if merge != nil {
		ret = state.Merge(ret, merge)
	}
	return ret
}
