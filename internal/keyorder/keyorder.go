// Package keyorder keeps the order in which a mapping's keys were
// written beside a value held as plain Go maps.
//
// Salt keeps pillar mappings in Python dicts, which iterate in insertion
// order, and formulas generate states in the order they iterate
// pillar['x'].items(). brine holds pillar as map[string]any, which every
// consumer (targeting, pillar.get, merges) reads; an Order is the small
// side index that lets the places that iterate for a template (the
// master's JSON answer, the agent's template variables) restore Salt's
// order without changing the map.
package keyorder

import (
	"fmt"
	"slices"
	"sort"

	"github.com/goccy/go-yaml"
)

// Order is the key order of one value: for a mapping, its keys as
// written and the order of each value that is itself a mapping or a list;
// for a list, the order of each item. A nil *Order knows nothing: its
// mappings read sorted, as Go maps read today.
type Order struct {
	Keys  []string
	Sub   map[string]*Order
	Items []*Order
}

// At is the order of the value under path (each step a key), nil when
// the index does not know it.
func (o *Order) At(path ...string) *Order {
	for _, k := range path {
		if o == nil {
			return nil
		}
		o = o.Sub[k]
	}
	return o
}

// Item is the order of a list's i-th item, nil when unknown.
func (o *Order) Item(i int) *Order {
	if o == nil || i < 0 || i >= len(o.Items) {
		return nil
	}
	return o.Items[i]
}

// KeysOf is m's keys in the order o knows; keys it does not know come
// last, sorted, so that the result is always deterministic.
func (o *Order) KeysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	seen := make(map[string]bool, len(m))
	if o != nil {
		for _, k := range o.Keys {
			if _, ok := m[k]; ok && !seen[k] {
				out = append(out, k)
				seen[k] = true
			}
		}
	}
	if len(out) == len(m) {
		return out
	}
	rest := make([]string, 0, len(m)-len(out))
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// Of is the order of a YAML value as read (yaml.MapSlice mappings, keys
// by their text as the pillar's maps hold them); nil when v holds no
// mapping.
func Of(v any) *Order {
	switch t := v.(type) {
	case yaml.MapSlice:
		o := &Order{Keys: make([]string, 0, len(t))}
		for _, it := range t {
			k := fmt.Sprint(it.Key)
			o.Keys = append(o.Keys, k)
			o.setSub(k, Of(it.Value))
		}
		return o
	case []any:
		var items []*Order
		for i, x := range t {
			if sub := Of(x); sub != nil {
				if items == nil {
					items = make([]*Order, len(t))
				}
				items[i] = sub
			}
		}
		if items == nil {
			return nil
		}
		return &Order{Items: items}
	}
	return nil
}

func (o *Order) setSub(k string, sub *Order) {
	if sub == nil {
		delete(o.Sub, k)
		return
	}
	if o.Sub == nil {
		o.Sub = map[string]*Order{}
	}
	o.Sub[k] = sub
}

// Merged is the order of src merged over dst as Salt's recursive
// dictionary update merges them (state.Merge): a key already there keeps
// its place, a new one goes after, a mapping merged into a mapping merges
// its keys the same way, anything else is replaced with src's.
func Merged(dst, src *Order) *Order {
	if dst == nil || src == nil || dst.Keys == nil || src.Keys == nil {
		return src
	}
	out := &Order{Keys: slices.Clone(dst.Keys)}
	known := make(map[string]bool, len(dst.Keys))
	for _, k := range dst.Keys {
		known[k] = true
	}
	for k, sub := range dst.Sub {
		out.setSub(k, sub)
	}
	for _, k := range src.Keys {
		if !known[k] {
			out.Keys = append(out.Keys, k)
			known[k] = true
		}
		ss := src.Sub[k]
		if ss == nil {
			// a scalar or a mapping-less list replaces what was there
			out.setSub(k, nil)
			continue
		}
		out.setSub(k, Merged(out.Sub[k], ss))
	}
	return out
}

// MapSlices is v with every map[string]any a yaml.MapSlice whose keys
// follow o (keys o does not know last, sorted): the ordered form a
// function returns to a caller that iterates its mappings, a template,
// which reads a MapSlice as a dict in its order. A yaml.MapSlice already
// in v is kept as it is.
func MapSlices(v any, o *Order) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(yaml.MapSlice, 0, len(t))
		for _, k := range o.KeysOf(t) {
			out = append(out, yaml.MapItem{Key: k, Value: MapSlices(t[k], o.At(k))})
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = MapSlices(x, o.Item(i))
		}
		return out
	}
	return v
}
