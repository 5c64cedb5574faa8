package state_test

import (
	"context"
	"strings"
	"testing"

	"github.com/brinehq/brine/state"
)

// TestSaltFilters renders each of Salt's filters brine offers in an SLS
// file: a filter that is not registered fails with "not found".
func TestSaltFilters(t *testing.T) {
	r := state.NewRenderer()
	vars := map[string]any{"d": map[string]any{"a": map[string]any{"b": "deep"}, "l": []any{"x", "x", "y"}}}
	for _, tc := range []struct{ src, want string }{
		{`{{ d.l | json }}`, `["x", "x", "y"]`},
		{`{{ d.l | tojson }}`, `["x", "x", "y"]`},
		{`{{ d.a | yaml }}`, `{b: deep}`},
		{`{{ ('{"k": 1}' | load_json).k }}`, `1`},
		{`{{ ('k: v' | load_yaml).k }}`, `v`},
		{`{{ d | traverse('a:b') }}`, `deep`},
		{`{{ d | traverse('a:nope', 'dflt') }}`, `dflt`},
		{`{{ d.l | unique | join(',') }}`, `x,y`},
		{`{{ 'one' | sequence | join(',') }}`, `one`},
		{`{{ 'yes' | to_bool }}`, `True`},
		{`{{ 'abc123' | regex_match('([a-z]+)([0-9]+)') }}`, `('abc', '123')`}, // a tuple, as Salt's
		{`{{ 'x-abc' | regex_search('a(b)c') }}`, `('b',)`},
		{`{{ 'a1b2' | regex_replace('[0-9]', '#') }}`, `a#b#`},
		{`{{ "it's" | quote }}`, `'it'"'"'s'`},
		{`{{ 'say "hi"' | yaml_dquote }}`, `"say \"hi\""`},
		{`{{ "it's" | yaml_squote }}`, `'it''s'`},
		{`{% load_yaml as m %}k: v{% endload_yaml %}{{ m.k }}`, `v`},
		{`{% set x = {'a': 1,} %}{{ x.a }}`, `1`},
	} {
		out, err := r.Jinja(context.Background(), memSource{}, "base", "t.sls", []byte(tc.src), vars)
		if err != nil || strings.TrimSpace(string(out)) != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.src, out, err, tc.want)
		}
	}
}

// TestDictMethodsChangeTheDict: formulas build maps with do x.update(…),
// on literals and on maps from functions alike.
func TestDictMethodsChangeTheDict(t *testing.T) {
	r := state.NewRenderer()
	vars := map[string]any{"gm": map[string]any{"x": 0, "lookup": map[string]any{"pkg": "apache2"}}}
	for _, tc := range []struct{ src, want string }{
		{`{% set d = {} %}{% do d.update({'a': 1}) %}{{ d.a }}`, `1`},
		{`{% set d = {'a': 1} %}{% do d.update(b=2) %}{{ d.a }}{{ d.b }}`, `12`},
		{`{% do gm.update({'y': 1}) %}{{ gm.y }}`, `1`},
		{`{% do gm.lookup.update({'srv': 'httpd'}) %}{{ gm.lookup.srv }}`, `httpd`},
		{`{% set d = {} %}{{ d.setdefault('k', 'v') }}{{ d.k }}`, `vv`},
	} {
		out, err := r.Jinja(context.Background(), memSource{}, "base", "t.sls", []byte(tc.src), vars)
		if err != nil || strings.TrimSpace(string(out)) != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.src, out, err, tc.want)
		}
	}
}

// TestTemplate is what file.managed's template: jinja renders with: the
// compiler's context, the state's own over it; other engines refused.
func TestTemplate(t *testing.T) {
	c := &state.Compiler{Renderer: state.NewRenderer(), Source: memSource{}, Vars: func(saltenv string) map[string]any {
		return map[string]any{"grains": map[string]any{"id": "web01"}, "who": "compiler", "saltenv": saltenv}
	}}
	tpl := c.Template("dev")
	out, err := tpl(context.Background(), "jinja", "motd", []byte("{{ grains.id }} {{ who }} {{ saltenv }}"), map[string]any{"who": "state"})
	if err != nil || string(out) != "web01 state dev" {
		t.Errorf("template = %q, %v", out, err)
	}
	if _, err := tpl(context.Background(), "mako", "motd", nil, nil); err == nil || !strings.Contains(err.Error(), `"mako" is not available`) {
		t.Errorf("mako: %v", err)
	}
}

// TestSaltTags: Salt's load_*/import_* tags (endload, a computed path),
// dictsort, dict() and `is match`; each want is what Salt 3006.6 renders.
func TestSaltTags(t *testing.T) {
	r := state.NewRenderer()
	src := memSource{"defaults.yaml": "a: 1\n", "sub/defaults.yaml": "a: {{ 1 + 2 }}\n", "x.json": "{\"k\": \"jv\"}\n",
		"n.json": `{"b": 1e3, "a": [1, 2.0], "c": "\/x"}`, "bad.json": "{\n  \"a\": ,\n}\n",
		"x.txt": "text {{ 5 }}\n", "lib.jinja": "{% set v = 'libv' %}\n"}
	for _, tc := range []struct{ src, want string }{
		{"{% load_yaml as m %}k: v{% endload %}{{ m.k }}", "v"},
		{"{% load_json as m %}{\"k\": [1, 2]}{% endload %}{{ m.k }}", "[1, 2]"},
		{"{% load_text as m %}hello {{ 1 + 1 }}{% endload %}{{ m }}", "hello 2"},
		{"{% load_yaml as a %}x: {% load_yaml as b %}y: 1{% endload %}{{ b.y }}{% endload %}{{ a.x }}", "1"},
		{"{% set t = {'b': 2, 'a': 1} %}{% for k, v in t|dictsort %}{{ k }}={{ v }};{% endfor %}", "a=1;b=2;"},
		{"{{ dict(a=1) }}", "{'a': 1}"},
		{"{{ dict({'a': 1}, b=2) | json }}", "{\"a\": 1, \"b\": 2}"},
		{"{{ 'abc' is match('a') }}", "True"},
		{"{%- load_yaml as m -%}\nk: v\n{%- endload -%}\n[{{ m.k }}]", "[v]"},
		{"{% import_yaml 'defaults.yaml' as d %}{{ d.a }}", "1"},
		{"{% set tpldir = 'sub' %}{% import_yaml tpldir ~ '/defaults.yaml' as d %}{{ d.a }}", "3"},
		{"{% import_json 'x.json' as j %}{{ j.k }}", "jv"},
		// Python's json.loads, not YAML's: 1e3 is a float, \/ is /, keys
		// in the order written.
		{"{% import_json 'n.json' as j %}{{ j.b }} {{ j.a }} {% for k in j %}{{ k }}{% endfor %} {{ j.c }}", "1000.0 [1, 2.0] bac /x"},
		{"{% load_json as m %}{\"z\": 1, \"y\": 1.5e2}{% endload %}{{ m }}", "{'z': 1, 'y': 150.0}"},
		{"{% import_text 'x.txt' as t %}[{{ t }}]", "[text 5]"},
		{"{% from 'lib.jinja' import v with context %}{{ v }}", "libv"},
		{"{% import 'lib.jinja' as lib %}{{ lib.v }}", "libv"},
	} {
		out, err := r.Jinja(context.Background(), src, "base", "t.sls", []byte(tc.src), nil)
		if err != nil || string(out) != tc.want {
			t.Errorf("%s = %q, %v; Salt renders %q", tc.src, out, err, tc.want)
		}
	}
	// packages-formula: pkgs/golang/clean.sls imports pkgs/map.jinja, whose
	// './defaults.yaml' is pkgs/defaults.yaml, beside map.jinja (Salt found
	// it; brine looked beside the SLS).
	formula := memSource{"pkgs/map.jinja": "{%- import_yaml './defaults.yaml' as d %}{%- set v = d.a %}",
		"pkgs/defaults.yaml": "a: beside map.jinja\n", "pkgs/golang/defaults.yaml": "a: beside the SLS\n"}
	out, err := r.Jinja(context.Background(), formula, "base", "pkgs/golang/clean.sls",
		[]byte("{% from 'pkgs/map.jinja' import v with context %}{{ v }} {% import_yaml './defaults.yaml' as own %}{{ own.a }}"), nil)
	if err != nil || string(out) != "beside map.jinja beside the SLS" {
		t.Errorf("relative import_yaml in an imported template = %q, %v; Salt renders %q", out, err, "beside map.jinja beside the SLS")
	}
	for _, tc := range []struct{ src, want string }{
		{"a\n{% load_yaml as m %}k: [1{% endload %}", "t.sls:2"},
		{"{% import_json 'bad.json' as j %}", "bad.json:2"},
		{"{{ 'x' | union }}", "union() missing 1 required positional argument: 'lst2'"},
		{"{{ raise('custom') }}", "custom"},
	} {
		_, err := r.Jinja(context.Background(), src, "base", "t.sls", []byte(tc.src), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "at :") {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
}
