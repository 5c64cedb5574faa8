package jinja

import (
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/internal/saltyaml"
)

// OrderedBy is v with every map[string]any an ordered template
// dictionary whose keys follow o (keys o does not know last, sorted, as a
// Go map reads): a pillar held as plain maps iterates in a template in
// the order its YAML was written, as Salt's dicts do.
func OrderedBy(v any, o *keyorder.Order) any {
	switch t := v.(type) {
	case map[string]any:
		d := exec.NewDict()
		// the keys are distinct: append, not Set (which looks each up)
		for _, k := range o.KeysOf(t) {
			d.Pairs = append(d.Pairs, &exec.Pair{Key: exec.AsValue(k), Value: exec.AsValue(OrderedBy(t[k], o.At(k)))})
		}
		return d
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = OrderedBy(x, o.Item(i))
		}
		return out
	}
	return v
}

// PillarOrdered is call with the mappings the pillar functions return
// (pillar.get and its alias fetch, pillar.item, pillar.items and its
// alias data, pillar.raw, config.get) ordered as the pillar was written:
// by order's subtree at the path each reads. A value the pillar does not
// hold (a default, an opts or grains value of config.get) reads with its
// keys sorted, as before.
func PillarOrdered(call Caller, order *keyorder.Order) Caller {
	if order == nil {
		return call
	}
	return func(name string, args []any, kwargs map[string]any) (any, error) {
		out, err := call(name, args, kwargs)
		if err != nil {
			return out, err
		}
		switch name {
		case "pillar.get", "pillar.fetch":
			// get(key, default, merge, merge_nested_lists, delimiter, …)
			at := pillarAt(order, args, kwargs, 4)
			if merge, _ := argOf(args, kwargs, "merge", 2).(bool); merge {
				// the value merged over the default mapping: the
				// default's keys first, as dictupdate.merge leaves them
				if def, ok := argOf(args, kwargs, "default", 1).(yaml.MapSlice); ok {
					if at == nil {
						at = keyorder.Of(def)
					} else {
						at = keyorder.Merged(keyorder.Of(def), at)
					}
					// pillar.get ordered the merge without the
					// pillar's order, which at has
					out = saltyaml.Plain(out)
				}
			}
			return OrderedBy(out, at), nil
		case "config.get":
			// get(key, default, delimiter, merge, …)
			return OrderedBy(out, pillarAt(order, args, kwargs, 2)), nil
		case "pillar.items", "pillar.data":
			return OrderedBy(out, order), nil
		case "pillar.raw":
			if key, _ := argOf(args, kwargs, "key", 0).(string); key != "" {
				return OrderedBy(out, order.At(key)), nil
			}
			return OrderedBy(out, order), nil
		case "pillar.item":
			// {arg: value} in the order of the arguments
			delim, _ := kwargs["delimiter"].(string)
			if delim == "" {
				delim = ":"
			}
			o := &keyorder.Order{Sub: map[string]*keyorder.Order{}}
			for _, a := range args {
				if k, ok := a.(string); ok {
					o.Keys = append(o.Keys, k)
					if sub := order.At(strings.Split(k, delim)...); sub != nil {
						o.Sub[k] = sub
					}
				}
			}
			return OrderedBy(out, o), nil
		}
		return out, nil
	}
}

// pillarAt is order's subtree at the key a pillar function reads (its
// first argument, or key=) split by its delimiter (the argument at
// delimAt, or delimiter=; ':' by default), as Salt's
// traverse_dict_and_list splits it; nil without a key.
func pillarAt(order *keyorder.Order, args []any, kwargs map[string]any, delimAt int) *keyorder.Order {
	key, ok := argOf(args, kwargs, "key", 0).(string)
	if !ok {
		return nil
	}
	delim, _ := argOf(args, kwargs, "delimiter", delimAt).(string)
	if delim == "" {
		delim = ":"
	}
	return order.At(strings.Split(key, delim)...)
}

// argOf is a function's argument by keyword, else by position.
func argOf(args []any, kwargs map[string]any, name string, at int) any {
	if v, ok := kwargs[name]; ok {
		return v
	}
	if at < len(args) {
		return args[at]
	}
	return nil
}
