package jinja

import (
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/internal/py"
)

// Salt's salt.utils.dictupdate and copy.deepcopy, which its template
// functions (grains.filter_by, defaults.*, slsutil.*) share.

// DictUpdate is Salt's dictupdate.update(dest, upd, recursive_update,
// merge_lists): upd's keys set in dest, dictionaries under the same key
// updated in turn, lists replaced (or, with mergeLists, extended with
// the items dest lacks). dest is changed and returned.
func DictUpdate(dest, upd map[string]any, recursive, mergeLists bool) map[string]any {
	out, _ := DictUpdateOrdered(dest, nil, upd, nil, recursive, mergeLists)
	return out
}

// DictUpdateOrdered is DictUpdate given the key order of dest (do) and
// of upd (uo), nil for a Go map's (sorted), and giving the order of the
// result as Python's dicts have it: dest's keys where they were, upd's
// new ones after them in upd's order, a dictionary updated in turn
// ordered the same way, a list extended with the orders of its new
// items, a value replaced with upd's order.
func DictUpdateOrdered(dest map[string]any, do *keyorder.Order, upd map[string]any, uo *keyorder.Order, recursive, mergeLists bool) (map[string]any, *keyorder.Order) {
	if recursive {
		overlap := false
		for k := range upd {
			if _, ok := dest[k]; ok {
				overlap = true
				break
			}
		}
		recursive = overlap
	}
	order := &keyorder.Order{Keys: do.KeysOf(dest)}
	sub := func(k string, o *keyorder.Order) {
		if o == nil {
			delete(order.Sub, k)
			return
		}
		if order.Sub == nil {
			order.Sub = map[string]*keyorder.Order{}
		}
		order.Sub[k] = o
	}
	for _, k := range order.Keys {
		sub(k, do.At(k))
	}
	for _, k := range uo.KeysOf(upd) {
		v := upd[k]
		cur, had := dest[k]
		if !had {
			order.Keys = append(order.Keys, k)
		}
		if recursive {
			switch c := cur.(type) {
			case map[string]any:
				if m, ok := v.(map[string]any); ok {
					var o *keyorder.Order
					dest[k], o = DictUpdateOrdered(c, do.At(k), m, uo.At(k), true, mergeLists)
					sub(k, o)
					continue
				}
			case []any:
				if l, ok := v.([]any); ok && mergeLists {
					merged := DeepCopy(c).([]any)
					items := make([]*keyorder.Order, len(c), len(c)+len(l))
					for i := range c {
						items[i] = do.At(k).Item(i)
					}
					// Salt's merged.extend([x for x in val if x not in
					// merged]): each tested against dest's list alone
					for i, x := range l {
						if !pyIn(x, c) {
							merged = append(merged, x)
							items = append(items, uo.At(k).Item(i))
						}
					}
					dest[k] = merged
					sub(k, listOrder(items))
					continue
				}
			}
		}
		dest[k] = v
		sub(k, uo.At(k))
	}
	return dest, order
}

// listOrder is the order of a list whose items have the orders items:
// nil when none of them is known.
func listOrder(items []*keyorder.Order) *keyorder.Order {
	for _, it := range items {
		if it != nil {
			return &keyorder.Order{Items: items}
		}
	}
	return nil
}

// DeepCopy is copy.deepcopy of plain values.
func DeepCopy(v any) any { return py.MapLeaves(v, func(x any) any { return x }) }

// PyStr is Python's str() of a plain value: True, None, 1.0.
func PyStr(v any) string { return jinjaStr(v) }

// Truthy is Python's bool() of a plain value.
func Truthy(v any) bool { return truthy(v) }

// PyError is an error with Salt's own message, word for word.
func PyError(format string, args ...any) error { return pyErr(format, args...) }
