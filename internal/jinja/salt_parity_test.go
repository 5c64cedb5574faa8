package jinja

import (
	"strings"
	"testing"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// renderStrict renders src as state.Renderer does: Salt's filters, tests
// and globals, StrictUndefined.
func renderStrict(t *testing.T, src string, vars map[string]any) (string, error) {
	t.Helper()
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{})
	filters.Update(builtins.Filters)
	for name, f := range Filters() {
		if filters.Exists(name) {
			_ = filters.Replace(name, f)
		} else {
			_ = filters.Register(name, f)
		}
	}
	env := &exec.Environment{
		Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables).Update(Globals()),
		Filters:           filters,
		Tests:             Tests(),
		ControlStructures: exec.NewControlStructureSet(Tags()).Update(builtins.ControlStructures),
		Methods:           Methods(),
	}
	loader, err := loaders.NewMemoryLoader(map[string]string{"/t": src})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.New()
	cfg.StrictUndefined = true
	tpl, err := exec.NewTemplate("/t", cfg, loader, env)
	if err != nil {
		return "", err
	}
	return tpl.ExecuteToString(exec.NewContext(vars))
}

// TestAsSalt3006: every expected output is what Salt 3006.6 renders for
// the template (salt-call --local slsutil.renderer default_renderer=jinja).
func TestAsSalt3006(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
		vars            map[string]any
	}{
		{"method_call", `{{ [1, 2, 1, 3, 4]|method_call('index', 1, 1, 3) }}|{{ 6.5|method_call('is_integer') }}|{{ 'a'|method_call('nope') }}|{{ 6|method_call('bit_length') }}`, `2|False|None|3`, nil},
		{"method_call fromkeys, dictsort tuples", `{{ {}|method_call('fromkeys', ['a', 'b', 'c'], 0)|dictsort }}`, `[('a', 0), ('b', 0), ('c', 0)]`, nil},
		{"regex groups are a tuple", `{{ 'abcd'|regex_search('(b)(x)?') }}|{{ 'abcd'|regex_match('^(.*)BC(.*)$', ignorecase=True) }}|{{ 'foo1'|regex_match('(foo.)') }}`, `('b', None)|('a', 'd')|('foo1',)`, nil},
		{"regex_escape as Python 3's re.escape", `{{ 'a:b/c.d'|regex_escape }}|{{ dataset|regex_escape }}`, `a:b/c\.d|foo\?:\.\*/\\bar`, map[string]any{"dataset": `foo?:.*/\bar`}},
		{"json keeps non-ASCII, sorts keys", `{{ {'b': 1, 'a': {'é': [1, 'x y', 'yes']}}|json }}|{{ {'b': 1, 'a': 'é<'}|json(sort_keys=False) }}`, `{"a": {"é": [1, "x y", "yes"]}, "b": 1}|{"b": 1, "a": "é<"}`, nil},
		{"tojson escapes non-ASCII, keeps order", `{{ {'b': 1, 'a': 'é'}|tojson }}`, `{"b": 1, "a": "\u00e9"}`, nil},
		{"yaml quotes as PyYAML", `{{ {'b': 1, 'a': ['Café?', '1', 'x: y', 'plain']}|yaml }}|{{ {"Question": "Quieres Café?"}|yaml }}`, `{a: ['Café?', '1', 'x: y', plain], b: 1}|{Question: 'Quieres Café?'}`, nil},
		{"yaml block", `{{ {'b': {'z': 1, 'a': [1, 2]}}|yaml(False) }}`, "b:\n  a:\n  - 1\n  - 2\n  z: 1", nil},
		{"yaml of undefined", `{{ ports['https']|yaml }}`, `NULL`, map[string]any{"ports": map[string]any{"http": 80}}},
		{"python of undefined", `{{ [ports['x'], 666 + 1]|python }}|{{ [none, {}|method_call('fromkeys', 'ab')]|python }}`, `[Undefined, 667]|[None, {'a': None, 'b': None}]`, map[string]any{"ports": map[string]any{"http": 80}}},
		{"dict_to_sls_yaml_params keeps order", `{{ {'z': 1, 'a': 2}|dict_to_sls_yaml_params }}`, "- z: 1\n- a: 2", nil},
		{"dict_to_sls_yaml_params nested", `{{ {'name': 'donkey', 'list': ['one', 'two'], 'dict': {'one': 'two'}, 'nested': ['one', {'two': 'three'}]}|dict_to_sls_yaml_params }}`, "- name: donkey\n- list:\n  - one\n  - two\n- dict:\n    one: two\n- nested:\n  - one\n  - two: three", nil},
		{"update_dict_key_value keeps order", `{{ {'b': {'z': 1}}|update_dict_key_value('b', {'a': 2}) }}|{{ foo|update_dict_key_value('bar:baz', {'quux': 3}) }}`, `{'b': {'z': 1, 'a': 2}}|{'bar': {'baz': {'qux': 1, 'quux': 3}}}`, map[string]any{"foo": map[string]any{"bar": map[string]any{"baz": map[string]any{"qux": 1}}}}},
		{"compare_dicts ordered", `{{ {'a': 'b', 'c': 'd'}|compare_dicts({'c': 'e', 'a': 'b'}) }}`, `{'c': {'old': 'd', 'new': 'e'}}`, nil},
		{"mysql_to_dict ordered", `{{ ['| Id | User |', '|  7 | root |']|mysql_to_dict('User')|tojson }}`, `{"root": {"Id": 7, "User": "root"}}`, nil},
		{"json_query", `{{ {'a': [{'b': 1}, {'b': 2}]}|json_query('a[].b') }}|{{ [1, 2, 3]|json_query('length(@)') }}|{{ [1, 2, 3]|json_query('[1]') }}`, `[1, 2]|3|2`, nil},
		{"profile tag", `{% profile as 'p' %}{% set v = 1 %}{% endprofile %}{{ v }}`, `1`, nil},
		{"odict and dict keep the order given", `{{ odict({'b': 1, 'a': 2})|list }}|{{ odict([('b', 1), ('a', 2)])|list }}|{{ dict([('a', 1)], b=2) }}|{{ dict(z=1, a=2) }}|{{ dict({1: 'x'}) }}|{{ dict() }}|{{ dict([['k', 'v'], 'xy']) }}|{{ dict([(1, 2)])[1] }}|{{ 'y' if dict() else 'n' }}`, `['b', 'a']|['b', 'a']|{'a': 1, 'b': 2}|{'z': 1, 'a': 2}|{1: 'x'}|{}|{'k': 'v', 'x': 'y'}|2|n`, nil},
		{"match test with keywords, none", `{{ 'ABC' is match('^a', ignorecase=True) }}|{{ 'A' is match('[a-b]', True) }}|{{ none is none }}`, `True|True|True`, nil},
	} {
		got, err := renderStrict(t, tc.src, tc.vars)
		if err != nil || got != tc.want {
			t.Errorf("%s: %s = %q, %v; Salt renders %q", tc.name, tc.src, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{`{% set d = {'foo': 'x'}|load_yaml %}`, `a string or stream input is required`},
		{`{{ [ports['x']]|json }}`, `Object of type StrictUndefined is not JSON serializable`},
		{`{{ dict([('a', 1, 2)]) }}`, `dictionary update sequence element #0 has length 3; 2 is required`},
		{`{{ dict([('a', 1), 1]) }}`, `cannot convert dictionary update sequence element #1 to a sequence`},
		{`{{ dict(none) }}`, `'NoneType' object is not iterable`},
		{`{{ odict(1) }}`, `'int' object is not iterable`},
	} {
		_, err := renderStrict(t, tc.src, map[string]any{"ports": map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, Salt's says %q", tc.src, err, tc.want)
		}
	}
}
