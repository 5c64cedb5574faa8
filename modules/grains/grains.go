// Package grains is Salt's grains execution module: items, item, get, ls
// and has_value over the agent's grains.
package grains

import (
	"context"
	"maps"
	"slices"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/target"
)

// Module declares the grains functions.
func Module(env *modules.Env) []function.Func {
	return []function.Func{
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
