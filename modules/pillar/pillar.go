// Package pillar is Salt's pillar execution module: an agent reads the
// pillar the master compiled for it (pillar.get, items, item, raw, keys,
// ls). Pillar is the agent's own: no function here can ask for another
// agent's, since the master compiles it for the id it authenticated.
package pillar

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
	"github.com/brinehq/brine/target"
)

// Module declares the pillar functions.
func Module(env *modules.Env) []function.Func {
	pillar := func(ctx context.Context) (map[string]any, error) { return modules.PillarOf(ctx, env) }
	get := function.Func{
		Name: "pillar.get", ReadOnly: true,
		Doc: "The pillar value at key (nested keys joined by delimiter, ':'), default when absent; merge=True " +
			"merges a dictionary default under the value.",
		Params: []function.Param{
			{Name: "key", Kind: function.String, Required: true},
			{Name: "default", Kind: function.Any, Default: ""},
			{Name: "merge", Kind: function.Bool, Default: false},
			{Name: "merge_nested_lists", Kind: function.Bool, Default: false},
			{Name: "delimiter", Kind: function.String, Default: ":"},
			{Name: "pillarenv", Kind: function.String},
			{Name: "saltenv", Kind: function.String},
		},
		Run: func(ctx context.Context, in *function.Input) (any, error) {
			p, err := pillar(ctx)
			if err != nil {
				return nil, err
			}
			def := in.Value("default")
			v, ok := target.Traverse(p, in.String("key"), in.String("delimiter"))
			if !ok {
				// a default mapping iterates in the template's order
				return in.Ordered(def, in.Order("default")), nil
			}
			if in.Bool("merge") {
				if _, isMap := def.(map[string]any); isMap {
					// for a template: the default's keys first, as
					// dictupdate.merge leaves them, then the pillar's,
					// in an order this function does not know (sorted;
					// jinja.PillarOrdered gives the pillar's where the
					// caller knows it)
					order := keyorder.Merged(in.Order("default"), keyorder.Of(keyorder.MapSlices(v, nil)))
					return in.Ordered(state.Merge(def, v), order), nil
				}
			}
			return v, nil
		},
	}
	fetch := get
	fetch.Name, fetch.Doc = "pillar.fetch", "The same as pillar.get."
	return []function.Func{
		get, fetch,
		{
			Name: "pillar.items", ReadOnly: true, VarArgs: true, VarKwargs: true,
			Doc: "The whole pillar, or only the keys named as arguments.",
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				p, err := pillar(ctx)
				if err != nil {
					return nil, err
				}
				if len(in.Extra) == 0 {
					return p, nil
				}
				return pick(p, in.Extra, nil, ":"), nil
			},
		},
		{
			// Salt's item(*args, **kwargs): default and delimiter are
			// keywords only, every positional argument is a key.
			Name: "pillar.item", ReadOnly: true, VarArgs: true, VarKwargs: true,
			Doc: "The pillar values of the keys named as arguments (nested keys with delimiter=':'), default='' for those absent.",
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				p, err := pillar(ctx)
				if err != nil {
					return nil, err
				}
				def, ok := in.ExtraKwargs["default"]
				if !ok {
					def = ""
				}
				delim, _ := in.ExtraKwargs["delimiter"].(string)
				if delim == "" {
					delim = ":"
				}
				return pick(p, in.Extra, def, delim), nil
			},
		},
		{
			Name: "pillar.raw", ReadOnly: true,
			Doc:    "The pillar as the agent holds it, or the value of key.",
			Params: []function.Param{{Name: "key", Kind: function.String}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				p, err := pillar(ctx)
				if err != nil {
					return nil, err
				}
				if in.String("key") == "" {
					return p, nil
				}
				return p[in.String("key")], nil
			},
		},
		{
			Name: "pillar.keys", ReadOnly: true,
			Doc:    "The keys of the dictionary at key (nested keys with delimiter).",
			Params: []function.Param{{Name: "key", Kind: function.String, Required: true}, {Name: "delimiter", Kind: function.String, Default: ":"}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				p, err := pillar(ctx)
				if err != nil {
					return nil, err
				}
				v, ok := target.Traverse(p, in.String("key"), in.String("delimiter"))
				if !ok {
					return nil, fmt.Errorf("pillar key not found: %s", in.String("key"))
				}
				m, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("pillar value in key %s is not a dict", in.String("key"))
				}
				return sortedKeys(m), nil
			},
		},
		{
			Name: "pillar.ls", ReadOnly: true, Doc: "The top-level keys of the pillar.",
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				p, err := pillar(ctx)
				if err != nil {
					return nil, err
				}
				return sortedKeys(p), nil
			},
		},
	}
}

func pick(p map[string]any, keys []any, def any, delim string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		key := fmt.Sprint(k)
		if v, ok := target.Traverse(p, key, delim); ok {
			out[key] = v
		} else if def != nil {
			out[key] = def
		}
	}
	return out
}

func sortedKeys(m map[string]any) []any {
	return py.List(slices.Sorted(maps.Keys(m)))
}
