package jinja

import "github.com/brinehq/brine/internal/py"

// Salt's salt.utils.dictupdate and copy.deepcopy, which its template
// functions (grains.filter_by, defaults.*, slsutil.*) share.

// DictUpdate is Salt's dictupdate.update(dest, upd, recursive_update,
// merge_lists): upd's keys set in dest, dictionaries under the same key
// updated in turn, lists replaced (or, with mergeLists, extended with
// the items dest lacks). dest is changed and returned.
func DictUpdate(dest, upd map[string]any, recursive, mergeLists bool) map[string]any {
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
	for k, v := range upd {
		if !recursive {
			dest[k] = v
			continue
		}
		switch cur := dest[k].(type) {
		case map[string]any:
			if m, ok := v.(map[string]any); ok {
				dest[k] = DictUpdate(cur, m, true, mergeLists)
				continue
			}
		case []any:
			if l, ok := v.([]any); ok && mergeLists {
				merged := DeepCopy(cur).([]any)
				for _, x := range l {
					if !pyIn(x, merged) {
						merged = append(merged, x)
					}
				}
				dest[k] = merged
				continue
			}
		}
		dest[k] = v
	}
	return dest
}

// DeepCopy is copy.deepcopy of plain values.
func DeepCopy(v any) any { return py.MapLeaves(v, func(x any) any { return x }) }

// PyStr is Python's str() of a plain value: True, None, 1.0.
func PyStr(v any) string { return jinjaStr(v) }

// Truthy is Python's bool() of a plain value.
func Truthy(v any) bool { return truthy(v) }

// PyError is an error with Salt's own message, word for word.
func PyError(format string, args ...any) error { return pyErr(format, args...) }
