// Package defaults is Salt's defaults execution module, which formulas'
// templates call: merge, update, deepcopy, and get, which reads a
// formula's defaults.yaml (or defaults.json) from the master.
package defaults

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/saltyaml"
	"github.com/brinehq/brine/internal/serializers"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/target"
)

// Module declares the defaults functions.
func Module(env *modules.Env) []function.Func {
	return []function.Func{
		{
			Name: "defaults.merge", ReadOnly: true,
			Doc: "Merge src into dest (recursively; lists replaced unless merge_lists) and return it; in_place (the " +
				"default) changes dest itself; None counts as {} when convert_none.",
			Params: []function.Param{
				{Name: "dest", Kind: function.Any, Required: true}, {Name: "src", Kind: function.Any, Required: true},
				{Name: "merge_lists", Kind: function.Bool, Default: false}, {Name: "in_place", Kind: function.Bool, Default: true},
				{Name: "convert_none", Kind: function.Bool, Default: true},
			},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				out, order, err := Merge(in.Value("dest"), in.Order("dest"), in.Value("src"), in.Order("src"),
					in.Bool("merge_lists"), in.Bool("in_place"), in.Bool("convert_none"))
				return in.Ordered(out, order), err
			},
		},
		{
			Name: "defaults.update", ReadOnly: true,
			Doc: "Each entry of dest merged over a copy of defaults (lists merged unless merge_lists=False): " +
				"the per-item defaults of a formula's pillar.",
			Params: []function.Param{
				{Name: "dest", Kind: function.Any, Required: true}, {Name: "defaults", Kind: function.Any, Required: true},
				{Name: "merge_lists", Kind: function.Bool, Default: true}, {Name: "in_place", Kind: function.Bool, Default: true},
				{Name: "convert_none", Kind: function.Bool, Default: true},
			},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				out, order, err := Update(in.Value("dest"), in.Order("dest"), in.Value("defaults"), in.Order("defaults"),
					in.Bool("merge_lists"), in.Bool("in_place"), in.Bool("convert_none"))
				return in.Ordered(out, order), err
			},
		},
		{
			Name: "defaults.deepcopy", ReadOnly: true, Doc: "A deep copy of source.",
			Params: []function.Param{{Name: "source", Kind: function.Any, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return in.Ordered(jinja.DeepCopy(in.Value("source")), in.Order("source")), nil
			},
		},
		{
			Name: "defaults.get", ReadOnly: true,
			Doc: "formula:key of salt://<formula>/defaults.yaml (or .json) on the master, keys separated by ':'; " +
				"the whole file without a key; default when absent.",
			Params: []function.Param{{Name: "key", Kind: function.String, Required: true}, {Name: "default", Kind: function.Any, Default: ""}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				namespace, key, _ := strings.Cut(in.String("key"), ":")
				data, err := load(ctx, env, namespace)
				if err != nil {
					return nil, err
				}
				if key != "" {
					v, ok := target.Traverse(data, key, target.DefaultDelimiter)
					if !ok {
						return in.Ordered(in.Value("default"), in.Order("default")), nil
					}
					data = v
				}
				// a template iterates the file's mappings in the order
				// they were written, as Salt's loaders' dicts keep it
				if in.FromTemplate() {
					return data, nil
				}
				return saltyaml.Plain(data), nil
			},
		},
	}
}

// Merge is Salt's defaults.merge: src updated into dest (a copy of it
// unless inPlace). destOrder and srcOrder are their key orders (nil for
// a Go map's), and the order returned the result's, as Salt's dicts
// have it (jinja.DictUpdateOrdered).
func Merge(dest any, destOrder *keyorder.Order, src any, srcOrder *keyorder.Order, mergeLists, inPlace, convertNone bool) (any, *keyorder.Order, error) {
	if src == nil && convertNone {
		src = map[string]any{}
	}
	if dest == nil && convertNone {
		if inPlace {
			return nil, nil, jinja.PyError("Can't perform in-place merge into NoneType")
		}
		dest = map[string]any{}
	}
	d, ok1 := dest.(map[string]any)
	s, ok2 := src.(map[string]any)
	if !ok1 || !ok2 {
		return nil, nil, jinja.PyError("Cannot update using non-dict types in dictupdate.update()")
	}
	if !inPlace {
		d = jinja.DeepCopy(d).(map[string]any)
	}
	out, order := jinja.DictUpdateOrdered(d, destOrder, s, srcOrder, true, mergeLists)
	return out, order, nil
}

// Update is Salt's defaults.update: each of dest's entries is defaults
// with the entry merged over it. The orders are as Merge's: dest's keys
// stay where they are, each entry ordered defaults' keys first.
func Update(dest any, destOrder *keyorder.Order, defaults any, defaultsOrder *keyorder.Order, mergeLists, inPlace, convertNone bool) (any, *keyorder.Order, error) {
	if inPlace && dest == nil {
		return nil, nil, jinja.PyError("Can't perform in-place update into NoneType")
	}
	if dest == nil && convertNone {
		dest = map[string]any{}
	}
	nodes, ok := dest.(map[string]any)
	if !ok {
		return nil, nil, jinja.PyError("'%s' object has no attribute 'items'", jinja.PyStr(dest))
	}
	if !inPlace {
		nodes = jinja.DeepCopy(nodes).(map[string]any)
	}
	if defaults == nil && convertNone {
		defaults = map[string]any{}
	}
	order := &keyorder.Order{Keys: destOrder.KeysOf(nodes)}
	for _, name := range order.Keys {
		merged, o, err := Merge(jinja.DeepCopy(defaults), defaultsOrder, nodes[name], destOrder.At(name), mergeLists, true, convertNone)
		if err != nil {
			return nil, nil, err
		}
		nodes[name] = merged
		if o != nil {
			if order.Sub == nil {
				order.Sub = map[string]*keyorder.Order{}
			}
			order.Sub[name] = o
		}
	}
	return nodes, order, nil
}

// load reads salt://<formula>/defaults.yaml, else defaults.json, as
// Salt's loaders read them (salt.utils.yaml.safe_load, json.load), its
// mappings yaml.MapSlices in the order written; {} when the file is
// empty, None (nil) when neither exists.
func load(ctx context.Context, env *modules.Env, formula string) (any, error) {
	if env.Files == nil {
		return nil, errors.New("defaults.get reads salt:// files, and this agent has no master")
	}
	for _, ext := range []string{"yaml", "json"} {
		p, err := env.Files.Cache(ctx, formula+"/defaults."+ext, "base")
		if errors.Is(err, modules.ErrNoFile) {
			continue
		}
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		ser, _ := serializers.Get(ext)
		v, err := ser.LoadOrdered(b)
		if err != nil {
			return nil, jinja.PyError("salt://%s/defaults.%s: %v", formula, ext, err)
		}
		if !py.Truth(saltyaml.Plain(v)) {
			// Salt's `defaults or {}`
			return yaml.MapSlice{}, nil
		}
		return v, nil
	}
	// Salt's _load falls off its loop: None, which a key's lookup
	// answers with the default
	return nil, nil
}
