package grains

import (
	"testing"

	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
)

// TestFilterByOrder: a template's mappings keep their insertion order
// through grains.filter_by, as Python's dicts do; each want is what Salt
// 3006.6 prints for the same call (salt.utils.data.filter_by).
func TestFilterByOrder(t *testing.T) {
	g := map[string]any{"os_family": "Debian", "os": "Ubuntu", "osfinger": "Ubuntu-22.04"}
	reg, err := modules.Registry(&modules.Env{Grains: func() map[string]any { return g }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	modulestest.CheckRenders(t, reg, []modulestest.Case{
		{"merge: the entry's keys, then merge's new ones in its order",
			`{{ salt['grains.filter_by']({'default': {'z': 1, 'a': {'y': 1, 'b': 2}}}, merge={'t': 1, 'a': {'c': 1, 'b': 3}, 'k': 2}) }}`,
			`{'z': 1, 'a': {'y': 1, 'b': 3, 'c': 1}, 't': 1, 'k': 2}`},
		{"nested filter_by, as a formula's map.jinja, with base",
			`{{ salt['grains.filter_by']({'common': {'z': 1, 'a': {'y': 1}}, 'Debian': {'p': 1}}, merge=salt['grains.filter_by']({'Debian': {'m': 1, 'a': {'x': 1}}}, merge=salt['grains.filter_by']({'Ubuntu-22.04': {'q': 1}}, grain='osfinger', merge={'terminator': 1, 'phantomjs': 2, 'kubectl': 3})), base='common') }}`,
			`{'z': 1, 'a': {'y': 1, 'x': 1}, 'p': 1, 'm': 1, 'q': 1, 'terminator': 1, 'phantomjs': 2, 'kubectl': 3}`},
		{"lookup keys tried in their written order: exact first",
			`{{ salt['grains.filter_by']({'Debian': 'exact', 'D*': 'glob'}) }}`, `exact`},
		{"lookup keys tried in their written order: glob first",
			`{{ salt['grains.filter_by']({'D*': 'glob', 'Debian': 'exact'}) }}`, `glob`},
		{"base's keys first",
			`{{ salt['grains.filter_by']({'Debian': {'b': 1, 'a': 2}, 'common': {'z': 0, 'b': 0}}, base='common') }}`,
			`{'z': 0, 'b': 1, 'a': 2}`},
		{"no entry: merge itself",
			`{{ salt['grains.filter_by']({'RedHat': {}}, merge={'z': 1, 'a': 2}) }}`, `{'z': 1, 'a': 2}`},
		{"grains.get's default",
			`{{ salt['grains.get']('nope', {'z': 1, 'a': {'y': 1, 'b': 2}}) }}`, `{'z': 1, 'a': {'y': 1, 'b': 2}}`},
	})
}
