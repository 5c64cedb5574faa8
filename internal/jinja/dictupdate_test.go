package jinja

import (
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/internal/keyorder"
)

// plainOf is a YAML mapping read in order as plain maps, and its order.
func plainOf(t *testing.T, text string) (map[string]any, *keyorder.Order) {
	t.Helper()
	var ms yaml.MapSlice
	if err := yaml.UnmarshalWithOptions([]byte(text), &ms, yaml.UseOrderedMap()); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m, keyorder.Of(ms)
}

// TestDictUpdateOrdered: each want is what Salt 3006.6's
// salt.utils.dictupdate.update returns for the same dicts, printed by
// Python (its key order).
func TestDictUpdateOrdered(t *testing.T) {
	for _, tc := range []struct {
		name, dest, upd       string
		recursive, mergeLists bool
		want                  string
	}{
		{"recursive: dest's keys where they were, upd's new ones after",
			`{z: 1, a: {y: 1, b: 2}}`, `{m: 1, a: {c: 1, b: 3}}`, true, false, `{'z': 1, 'a': {'y': 1, 'b': 3, 'c': 1}, 'm': 1}`},
		{"not recursive: a mapping replaced, in upd's order",
			`{z: 1, a: {y: 1, b: 2}}`, `{m: 1, a: {c: 1, b: 3}}`, false, false, `{'z': 1, 'a': {'c': 1, 'b': 3}, 'm': 1}`},
		{"merge_lists: the new items' orders after dest's",
			`{z: 1, l: [{b: 1, a: 2}]}`, `{l: [{b: 1, a: 2}, {d: 1, c: 2}], k: {y: 1, x: 2}}`, true, true, `{'z': 1, 'l': [{'b': 1, 'a': 2}, {'d': 1, 'c': 2}], 'k': {'y': 1, 'x': 2}}`},
		{"merge_lists: each item tested against dest's list alone",
			`{l: [1, 2], z: 0}`, `{l: [2, 3, 3], b: 1}`, true, true, `{'l': [1, 2, 3, 3], 'z': 0, 'b': 1}`},
		{"a mapping replaced by a scalar, a new mapping in upd's order",
			`{z: 1, a: {y: 1}}`, `{a: 5, m: {y: 1, x: 2}}`, true, false, `{'z': 1, 'a': 5, 'm': {'y': 1, 'x': 2}}`},
		{"no key in common",
			`{a: {y: 1}}`, `{b: {y: 1, x: 2}}`, true, false, `{'a': {'y': 1}, 'b': {'y': 1, 'x': 2}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest, do := plainOf(t, tc.dest)
			upd, uo := plainOf(t, tc.upd)
			out, order := DictUpdateOrdered(dest, do, upd, uo, tc.recursive, tc.mergeLists)
			if got := exec2repr(t, keyorder.MapSlices(out, order)); got != tc.want {
				t.Errorf("update(%s, %s) = %s; Salt: %s", tc.dest, tc.upd, got, tc.want)
			}
			// DictUpdate is the same update, its order aside
			dest2, _ := plainOf(t, tc.dest)
			plain := DictUpdate(dest2, upd, tc.recursive, tc.mergeLists)
			if got, want := exec2repr(t, keyorder.MapSlices(plain, order)), tc.want; got != want {
				t.Errorf("DictUpdate(%s, %s) = %s; Salt: %s", tc.dest, tc.upd, got, want)
			}
		})
	}
}

// exec2repr is v as a template prints it: a yaml.MapSlice as a dict in
// its order, Python's repr.
func exec2repr(t *testing.T, v any) string {
	t.Helper()
	out, err := renderStrict(t, "{{ v }}", map[string]any{"v": Ordered(v)})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
