package py

// MapLeaves is a copy of decoded data v with every value that is not a
// list ([]any) or a mapping (map[string]any) replaced by leaf's answer for
// it: lists and mappings are rebuilt, never changed in place, so v stays
// as it was. The packages that convert a decoded tree (integral floats to
// ints, ordered YAML mappings to maps, infinities to text) walk it with
// this one function and say only what becomes of a leaf; a leaf that holds
// a tree of its own (an ordered mapping) is for leaf to walk.
func MapLeaves(v any, leaf func(any) any) any {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = MapLeaves(x, leaf)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = MapLeaves(x, leaf)
		}
		return out
	}
	return leaf(v)
}
