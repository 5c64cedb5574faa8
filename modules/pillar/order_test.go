package pillar

import (
	"context"
	"testing"

	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
	"github.com/brinehq/brine/state"
)

// TestDefaultOrder: a default mapping pillar.get returns iterates in
// the template's order, as Salt returns the template's dict itself.
func TestDefaultOrder(t *testing.T) {
	own := map[string]any{"x": 1}
	reg, err := modules.Registry(&modules.Env{Pillar: func(context.Context, bool) (map[string]any, error) { return own, nil }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	modulestest.CheckRenders(t, reg, []modulestest.Case{
		{"", `{{ salt['pillar.get']('nope', {'z': 1, 'a': {'y': 1, 'b': 2}}) }}`, `{'z': 1, 'a': {'y': 1, 'b': 2}}`},
		{"", `{{ salt['pillar.fetch']('nope', default={'z': 1, 'a': 2}) }}`, `{'z': 1, 'a': 2}`},
		{"", `{{ salt['pillar.get']('x', {'z': 1, 'a': 2}) }}`, `1`},
	})
}

// TestMergeOrder: pillar.get(…, merge=True) gives a template the merged
// mapping with the default's keys first, as Salt's dictupdate.merge
// leaves them, then the pillar's (written sorted here: the function
// alone does not know the pillar's order, jinja.PillarOrdered does).
// Each want is what Salt 3006.6 prints for the same template and pillar
// (salt.modules.pillar.get through render_jinja_tmpl).
func TestMergeOrder(t *testing.T) {
	own := map[string]any{"x": map[string]any{"a": int64(1), "b": map[string]any{"q": int64(1), "r": int64(2)},
		"n": []any{map[string]any{"k": int64(1), "m": int64(2)}}}}
	reg, err := modules.Registry(&modules.Env{Pillar: func(context.Context, bool) (map[string]any, error) { return own, nil }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	modulestest.CheckRenders(t, reg, []modulestest.Case{
		{"", `{{ salt['pillar.get']('x', {'z': 0, 'b': {'z': 1}, 'c': 2}, merge=True) }}`,
			`{'z': 0, 'b': {'z': 1, 'q': 1, 'r': 2}, 'c': 2, 'a': 1, 'n': [{'k': 1, 'm': 2}]}`},
		{"", `{% for k in salt['pillar.get']('x:b', {'z': 1, 'q': 0}, merge=True) %}{{ k }};{% endfor %}`,
			`z;q;r;`},
	})
}

// TestMergeOrderKnown: where the caller knows the pillar's order (a
// state run wraps its calls in jinja.PillarOrdered), the merged mapping
// has the pillar's keys in the order written after the default's. The
// want is what Salt 3006.6 prints for the pillar {'w': {'zeta': 1,
// 'alpha': 2}}.
func TestMergeOrderKnown(t *testing.T) {
	own := map[string]any{"w": map[string]any{"zeta": int64(1), "alpha": int64(2)}}
	order := &keyorder.Order{Keys: []string{"w"}, Sub: map[string]*keyorder.Order{"w": {Keys: []string{"zeta", "alpha"}}}}
	reg, err := modules.Registry(&modules.Env{Pillar: func(context.Context, bool) (map[string]any, error) { return own, nil }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	salt := jinja.Salt(reg.Names(), jinja.PillarOrdered(func(name string, args []any, kwargs map[string]any) (any, error) {
		return reg.Call(ctx, name, args, kwargs, nil)
	}, order))
	text := `{{ salt['pillar.get']('w', {'m': 0}, merge=True) }}`
	got, err := state.NewRenderer().Jinja(ctx, nil, "base", "test.sls", []byte(text), map[string]any{"salt": salt})
	if want := `{'m': 0, 'zeta': 1, 'alpha': 2}`; err != nil || string(got) != want {
		t.Errorf("%s\n= %s, %v\nSalt: %s", text, got, err, want)
	}
}
