package jinja_test

import (
	"context"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/defaults"
	"github.com/brinehq/brine/modules/slsutil"
	"github.com/brinehq/brine/state"
)

// TestSaltChangesInPlace: Salt's functions that change a dictionary they
// are given change the template's own (its order, the objects in it),
// and return it. Every expected output is Salt 3006.6's (salt-call
// --local slsutil.renderer default_renderer=jinja); `m` is a Go map of
// the context (as the pillar), written as a dict literal of the same
// (sorted) order on Salt's side.
func TestSaltChangesInPlace(t *testing.T) {
	reg := function.New()
	env := &modules.Env{}
	if err := reg.RegisterAll(append(defaults.Module(env), slsutil.Module(env)...)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	salt := jinja.Salt(reg.Names(), func(name string, args []any, kwargs map[string]any) (any, error) {
		return reg.Call(ctx, name, args, kwargs, nil)
	})
	r := state.NewRenderer()
	for _, tc := range []struct{ src, want string }{
		{`{% set d = {'a': {'x': 1}, 'l': [1]} %}{% set x = d.a %}{% set r = salt['defaults.merge'](d, {'z': 2, 'a': {'y': 3, 'x': 0}, 'l': [2]}) %}{{ d }} {{ x }} {{ r is sameas d }}`,
			`{'a': {'x': 0, 'y': 3}, 'l': [2], 'z': 2} {'x': 0, 'y': 3} True`},
		{`{% set d = {'l': [1, 2], 'k': 1} %}{% do salt['defaults.merge'](d, {'l': [2, 3]}, merge_lists=True) %}{{ d }}`, `{'l': [1, 2, 3], 'k': 1}`},
		{`{% set d = {'a': 1} %}{% set r = salt['defaults.merge'](d, {'b': 2}, in_place=False) %}{{ d }} {{ r }}`, `{'a': 1} {'a': 1, 'b': 2}`},
		{`{% set d = {'a': 1} %}{% do salt['defaults.merge'](dest=d, src={'c': {'d': 1}, 'b': 2}) %}{{ d }}`, `{'a': 1, 'c': {'d': 1}, 'b': 2}`},
		{`{% set d = {'a': 1} %}{% do salt['defaults.merge'](d, None) %}{{ d }}`, `{'a': 1}`},
		{`{% set d = {'a': {'b': 1}} %}{% set s = {'a': {'c': {'k': 1}}} %}{% do salt['defaults.merge'](d, s) %}{% do s.a.c.update({'j': 2}) %}{{ d }}`,
			`{'a': {'b': 1, 'c': {'k': 1, 'j': 2}}}`},
		{`{% do salt['defaults.merge'](m, {'b': {'c': 1}}) %}{{ m }}`, `{'a': 1, 'b': {'c': 1}}`},
		{`{% set d = {'n1': {'b': 1, 'z': 9}, 'n2': None} %}{% set r = salt['defaults.update'](d, {'a': 0, 'b': 0}) %}{{ d }} {{ r is sameas d }}`,
			`{'n1': {'a': 0, 'b': 1, 'z': 9}, 'n2': {'a': 0, 'b': 0}} True`},
		{`{% set d = {'n1': {'l': [1]}} %}{% do salt['defaults.update'](d, {'l': [0]}) %}{{ d }}`, `{'n1': {'l': [0, 1]}}`},
		{`{% set d = {'n1': {'l': [1]}} %}{% set r = salt['defaults.update'](d, {'l': [0]}, in_place=False) %}{{ d }} {{ r }}`, `{'n1': {'l': [1]}} {'n1': {'l': [0, 1]}}`},
		{`{% set d = {'a': {'b': 1}} %}{% set r = salt['slsutil.update'](d, {'a': {'c': 2}, 'e': 3}) %}{{ d }} {{ r is sameas d }}`, `{'a': {'b': 1, 'c': 2}, 'e': 3} True`},
		{`{% set d = {'a': {'b': 1}} %}{% do salt['slsutil.update'](d, {'a': {'c': 2}}, recursive_update=False) %}{{ d }}`, `{'a': {'c': 2}}`},
		// a Go map's own methods change it too (apt's repositories.pop);
		// these three as Python's Jinja2 renders them
		{`{% set r = m %}{% do r.pop('a') %}{{ m }}`, `{}`},
		{`{{ m.popitem() }}{{ m }}`, `('a', 1){}`},
		{`{% do m.update({'b': 2}) %}{{ m.setdefault('c', 3) }}{{ m }}`, `3{'a': 1, 'b': 2, 'c': 3}`},
	} {
		vars := map[string]any{"salt": salt, "m": map[string]any{"a": 1}}
		got, err := r.Jinja(ctx, nil, "base", "t.sls", []byte(tc.src), vars)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s\n got %q, %v\nSalt %q", tc.src, got, err, tc.want)
		}
	}
}
