package config

import (
	"context"
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
	for _, tc := range []struct{ text, want string }{
		{`{{ salt['config.get']('nope', {'z': 1, 'a': {'y': 1, 'b': 2}}) }}`, `{'z': 1, 'a': {'y': 1, 'b': 2}}`},
		{`{{ salt['config.get']('nope', {'z': 1, 'a': 2}, merge='recurse') }}`, `{'z': 1, 'a': 2}`},
		{`{{ salt['config.get']('x', {'z': 1, 'a': 2}) }}`, `1`},
	} {
		got, err := modulestest.Render(context.Background(), reg, tc.text)
		if err != nil || got != tc.want {
			t.Errorf("%s\n= %s, %v\nSalt: %s", tc.text, got, err, tc.want)
		}
	}
}
