package defaults

import (
	"context"
	"testing"

	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
)

// TestMergeOrder: a template's mappings keep their insertion order
// through the defaults functions, as Python's dicts do; each want is
// what Salt 3006.6 prints for the same template.
func TestMergeOrder(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"merge, a copy",
			`{{ salt['defaults.merge']({'z': 1, 'a': {'y': 1}}, {'m': 1, 'a': {'c': 1, 'y': 2}}, in_place=False) }}`,
			`{'z': 1, 'a': {'y': 2, 'c': 1}, 'm': 1}`},
		{"merge in place",
			`{% set d = {'z': 1, 'a': {'y': 1}} %}{% do salt['defaults.merge'](d, {'m': 1, 'a': {'c': 1, 'y': 2}}) %}{{ d }}`,
			`{'z': 1, 'a': {'y': 2, 'c': 1}, 'm': 1}`},
		{"merge_lists: each item of src tested against dest's list",
			`{{ salt['defaults.merge']({'l': [1, 2], 'z': 0}, {'l': [2, 3, 3], 'b': 1}, merge_lists=True, in_place=False) }}`,
			`{'l': [1, 2, 3, 3], 'z': 0, 'b': 1}`},
		{"update: dest's keys, each entry defaults' keys first",
			`{{ salt['defaults.update']({'u2': {'shell': 'z', 'a': 1}, 'u1': None}, {'shell': 'b', 'groups': ['x']}, in_place=False) }}`,
			`{'u2': {'shell': 'z', 'groups': ['x'], 'a': 1}, 'u1': {'shell': 'b', 'groups': ['x']}}`},
		{"deepcopy",
			`{{ salt['defaults.deepcopy']({'z': 1, 'a': {'y': 1, 'b': 2}}) }}`,
			`{'z': 1, 'a': {'y': 1, 'b': 2}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := modulestest.Render(context.Background(), reg, tc.text)
			if err != nil || got != tc.want {
				t.Errorf("%s\n= %s, %v\nSalt: %s", tc.text, got, err, tc.want)
			}
		})
	}
}
