package config

import (
	"testing"

	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
)

// TestDefaultOrder: a default mapping config.get returns iterates in
// the template's order, as Salt returns the template's dict itself.
func TestDefaultOrder(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{Opts: func() map[string]any { return map[string]any{"x": 1} }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	modulestest.CheckRenders(t, reg, []modulestest.Case{
		{"", `{{ salt['config.get']('nope', {'z': 1, 'a': {'y': 1, 'b': 2}}) }}`, `{'z': 1, 'a': {'y': 1, 'b': 2}}`},
		{"", `{{ salt['config.get']('nope', {'z': 1, 'a': 2}, merge='recurse') }}`, `{'z': 1, 'a': 2}`},
		{"", `{{ salt['config.get']('x', {'z': 1, 'a': 2}) }}`, `1`},
	})
}
