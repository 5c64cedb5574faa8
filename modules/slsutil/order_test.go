package slsutil

import (
	"context"
	"testing"

	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
)

// TestMergeOrder: a template's mappings keep their insertion order
// through the slsutil merges, as Python's dicts do; each want is what
// Salt 3006.6 prints for the same template.
func TestMergeOrder(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"merge",
			`{{ salt['slsutil.merge']({'z': 1, 'a': {'y': 1}}, {'m': 1, 'a': {'c': 1}}) }}`,
			`{'z': 1, 'a': {'y': 1, 'c': 1}, 'm': 1}`},
		{"merge, strategy list",
			`{{ salt['slsutil.merge']({'z': 1, 'a': {'y': 1}, 'q': 2}, {'m': 1, 'a': {'c': 1}}, strategy='list') }}`,
			`{'z': 1, 'a': [{'y': 1}, {'c': 1}], 'q': 2}`},
		{"merge, strategy overwrite",
			`{{ salt['slsutil.merge']({'z': 1, 'a': {'y': 1, 'w': 0}}, {'m': 1, 'a': {'c': 1, 'y': 2}}, strategy='overwrite') }}`,
			`{'z': 1, 'a': {'c': 1, 'y': 2}, 'm': 1}`},
		{"merge_all",
			`{{ salt['slsutil.merge_all']([{'z': 1}, {'a': 1, 'z': 2}, {'m': 1, 'a': {'b': 1, 'a': 2}}]) }}`,
			`{'z': 2, 'a': {'b': 1, 'a': 2}, 'm': 1}`},
		{"update",
			`{% set d = {'z': 1, 'a': {'y': 1}} %}{% do salt['slsutil.update'](d, {'m': 1, 'a': {'c': 1}}) %}{{ d }}`,
			`{'z': 1, 'a': {'y': 1, 'c': 1}, 'm': 1}`},
		{"update, not recursive",
			`{% set d = {'z': 1, 'a': {'y': 1}} %}{% do salt['slsutil.update'](d, {'m': 1, 'a': {'c': 1}}, recursive_update=False) %}{{ d }}`,
			`{'z': 1, 'a': {'c': 1}, 'm': 1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := modulestest.Render(context.Background(), reg, tc.text)
			if err != nil || got != tc.want {
				t.Errorf("%s\n= %s, %v\nSalt: %s", tc.text, got, err, tc.want)
			}
		})
	}
}
