package pillar

import (
	"context"
	"testing"

	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
)

// TestDefaultOrder: a default mapping pillar.get returns iterates in
// the template's order, as Salt returns the template's dict itself.
func TestDefaultOrder(t *testing.T) {
	own := map[string]any{"x": 1}
	reg, err := modules.Registry(&modules.Env{Pillar: func(context.Context, bool) (map[string]any, error) { return own, nil }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ text, want string }{
		{`{{ salt['pillar.get']('nope', {'z': 1, 'a': {'y': 1, 'b': 2}}) }}`, `{'z': 1, 'a': {'y': 1, 'b': 2}}`},
		{`{{ salt['pillar.fetch']('nope', default={'z': 1, 'a': 2}) }}`, `{'z': 1, 'a': 2}`},
		{`{{ salt['pillar.get']('x', {'z': 1, 'a': 2}) }}`, `1`},
	} {
		got, err := modulestest.Render(context.Background(), reg, tc.text)
		if err != nil || got != tc.want {
			t.Errorf("%s\n= %s, %v\nSalt: %s", tc.text, got, err, tc.want)
		}
	}
}
