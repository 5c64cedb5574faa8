package slsutil

import (
	"context"
	"reflect"
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
	modulestest.CheckRenders(t, reg, []modulestest.Case{
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
	})
}

// TestReadOrder: what slsutil.renderer and slsutil.deserialize read from
// YAML or JSON text reaches a template with its mappings in the order
// written, as Salt's loaders' dicts keep it, and another caller as Go
// maps. Each want is what Salt 3006.6 prints for the same template
// (salt.utils.templates.render_jinja_tmpl, `salt` its loaded cp,
// slsutil and defaults modules, over the same files).
func TestReadOrder(t *testing.T) {
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{"base": {
		"map.yaml": "zeta: 1\nalpha:\n  b: {{ 2 }}\n  a: 1\n",
		"map.json": "#!jinja|json\n{\"zeta\": 1, \"alpha\": {\"b\": 2, \"a\": 1}}\n",
	}}}
	env := &modules.Env{Files: files}
	reg, err := modules.Registry(env, Module)
	if err != nil {
		t.Fatal(err)
	}
	env.Functions = reg
	modulestest.CheckRenders(t, reg, []modulestest.Case{
		{"renderer: a string through jinja|yaml",
			`{{ salt['slsutil.renderer'](string='zeta: 1\nalpha:\n  b: {{ 1 + 1 }}\n  a: 1\n  386: x') }}`,
			`{'zeta': 1, 'alpha': {'b': 2, 'a': 1, 386: 'x'}}`},
		{"renderer: a string whose #! line says jinja|json",
			`{{ salt['slsutil.renderer'](string='#!jinja|json\n{"zeta": 1, "alpha": {"b": {{ 2 }}, "a": 1.0}}') }}`,
			`{'zeta': 1, 'alpha': {'b': 2, 'a': 1.0}}`},
		{"renderer: a salt:// map file, iterated",
			`{% for k in salt['slsutil.renderer']('salt://map.yaml') %}{{ k }};{% endfor %}`,
			`zeta;alpha;`},
		{"renderer: a salt:// JSON file",
			`{{ salt['slsutil.renderer']('salt://map.json') }}`,
			`{'zeta': 1, 'alpha': {'b': 2, 'a': 1}}`},
		{"serialize json: the dict's order, unless sort_keys; yaml sorts",
			`{{ salt['slsutil.serialize']('json', {'z': 1, 'a': {'y': 2, 'b': 3}}) }}|{{ salt['slsutil.serialize']('yaml', {'z': 1, 'a': {'y': 2, 'b': 3}}, default_flow_style=False) }}|{{ salt['slsutil.serialize']('json', {'z': 1, 'a': 2}, sort_keys=True) }}`,
			"{\"z\": 1, \"a\": {\"y\": 2, \"b\": 3}}|a:\n  b: 3\n  y: 2\nz: 1|{\"a\": 2, \"z\": 1}"},
		{"serialize json with indent",
			`{{ salt['slsutil.serialize']('json', {'z': 1, 'a': {'y': 2, 'b': 3}}, indent=2) }}`,
			"{\n  \"z\": 1,\n  \"a\": {\n    \"y\": 2,\n    \"b\": 3\n  }\n}"},
		{"deserialize yaml and json",
			`{{ salt['slsutil.deserialize']('yaml', 'z: 1\na: {y: 2, b: 3}') }}|{{ salt['slsutil.deserialize']('json', '{"z": 1, "a": {"y": 2, "b": 3.0}}') }}`,
			`{'z': 1, 'a': {'y': 2, 'b': 3}}|{'z': 1, 'a': {'y': 2, 'b': 3.0}}`},
	})
	for _, fn := range []struct {
		name string
		args []any
	}{
		{"slsutil.renderer", []any{"salt://map.json"}},
		{"slsutil.deserialize", []any{"json", `{"zeta": 1, "alpha": {"b": 2, "a": 1}}`}},
	} {
		t.Run(fn.name+" for a caller that is not a template", func(t *testing.T) {
			got, err := reg.Call(context.Background(), fn.name, fn.args, nil, nil)
			want := map[string]any{"zeta": int64(1), "alpha": map[string]any{"b": int64(2), "a": int64(1)}}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s%v = %#v, %v; want %#v", fn.name, fn.args, got, err, want)
			}
		})
	}
}
