package defaults

import (
	"context"
	"reflect"
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
	modulestest.CheckRenders(t, reg, []modulestest.Case{
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
	})
}

// TestGetOrder: defaults.get gives a template the mappings of a
// formula's defaults.yaml or defaults.json in the order the file writes
// them, as Salt's loaders' dicts keep it, and another caller Go maps.
// Each want is what Salt 3006.6 prints for the same template
// (salt.utils.templates.render_jinja_tmpl with salt.modules.defaults.get
// reading the same files).
func TestGetOrder(t *testing.T) {
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{"base": {
		"f1/defaults.yaml": "f1:\n  zeta: 1\n  alpha:\n    yes: on\n    b: 2\n    a: 1\n  mid: [ {z: 1, a: 2} ]\n  386: x\n",
		"f2/defaults.json": `{"f2": {"zeta": 1, "alpha": {"b": 2, "a": 1.0}, "list": [{"z": 1, "a": 2}]}}`,
	}}}
	reg, err := modules.Registry(&modules.Env{Files: files}, Module)
	if err != nil {
		t.Fatal(err)
	}
	modulestest.CheckRenders(t, reg, []modulestest.Case{
		{"the whole YAML file, as YAML 1.1 reads it",
			`{{ salt['defaults.get']('f1') }}`,
			`{'f1': {'zeta': 1, 'alpha': {True: True, 'b': 2, 'a': 1}, 'mid': [{'z': 1, 'a': 2}], 386: 'x'}}`},
		{"a JSON file's subtree",
			`{{ salt['defaults.get']('f2:f2') }}`,
			`{'zeta': 1, 'alpha': {'b': 2, 'a': 1.0}, 'list': [{'z': 1, 'a': 2}]}`},
		{"items() generate in the file's order",
			`{% for k, v in salt['defaults.get']('f1:f1:alpha').items() %}{{ k }}={{ v }};{% endfor %}`,
			`True=True;b=2;a=1;`},
		{"a list's item by index",
			`{{ salt['defaults.get']('f1:f1:mid:0') }}`,
			`{'z': 1, 'a': 2}`},
		{"an integer key by its text",
			`{{ salt['defaults.get']('f1:f1:386') }}`,
			`x`},
		{"a key in a list's mappings",
			`{{ salt['defaults.get']('f2:f2:list:z') }}`,
			`1`},
		{"a missing key: the default, in its order",
			`{{ salt['defaults.get']('f1:f1:nope', {'b': 1, 'a': 2}) }}`,
			`{'b': 1, 'a': 2}`},
		{"no defaults file: None, and a key's default",
			`{{ salt['defaults.get']('nothere:x', 'd') }}|{{ salt['defaults.get']('nothere') }}`,
			`d|None`},
	})
	t.Run("a caller that is not a template gets Go maps", func(t *testing.T) {
		got, err := reg.Call(context.Background(), "defaults.get", []any{"f2:f2:alpha"}, nil, nil)
		want := map[string]any{"b": int64(2), "a": 1.0}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("defaults.get f2:f2:alpha = %#v, %v; want %#v", got, err, want)
		}
	})
}
