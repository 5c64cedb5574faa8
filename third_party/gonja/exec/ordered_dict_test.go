package exec_test

// Mappings keep their insertion order, as Python's dicts do: dict literals,
// their methods, and a *exec.Dict a caller passes in. Expected outputs are
// Python's (Jinja2 3.1).

import (
	"testing"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// orderedPillar is {"zeta": 1, "alpha": 2, "mid": 3, "nested": {"y": 1, "x": 2}}
// as a caller passes an ordered mapping (from YAML, say).
func orderedPillar() map[string]any {
	nested := exec.NewDict()
	nested.Set("y", 1)
	nested.Set("x", 2)
	pillar := exec.NewDict()
	pillar.Set("zeta", 1)
	pillar.Set("alpha", 2)
	pillar.Set("mid", 3)
	pillar.Set("nested", nested)
	return map[string]any{"pillar": pillar}
}

func TestOrderedDict(t *testing.T) {
	runPyCases(t, []pyCase{
		{`{% set d = {'b': 1, 'a': 2, 'c': 3} %}{{ d }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }}`, `{'b': 1, 'a': 2, 'c': 3} ['b', 'a', 'c'] [1, 2, 3] [('b', 1), ('a', 2), ('c', 3)]`},
		{`{% set d = {'b': 1, 'a': 2} %}{% for k in d %}{{ k }}{% endfor %} {% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}`, `ba b=1;a=2;`},
		{`{% set d = {'b': 1, 'a': 2} %}{% do d.update({'z': 0, 'b': 5}) %}{{ d }}`, `{'b': 5, 'a': 2, 'z': 0}`},
		{`{% set d = {'b': 1} %}{% do d.update(y=2) %}{{ d }}`, `{'b': 1, 'y': 2}`},
		{`{% set d = {'b': 1} %}{{ d.setdefault('a', 3) }}{{ d.setdefault('b', 9) }} {{ d }}`, `31 {'b': 1, 'a': 3}`},
		{`{% set d = {'b': 1, 'a': 2} %}{{ d.pop('b') }} {{ d }} {{ d.pop('x', 7) }}`, `1 {'a': 2} 7`},
		{`{% set d = {'b': 1, 'a': 2} %}{% set e = d.copy() %}{% do e.update(c=1) %}{{ d }} {{ e }}`, `{'b': 1, 'a': 2} {'b': 1, 'a': 2, 'c': 1}`},
		{`{% set d = {'b': 1, 'a': 2} %}{{ d|dictsort }} {{ d|length }} {{ d.get('a') }} {{ d['a'] }} {{ d.a }}`, `[('a', 2), ('b', 1)] 2 2 2 2`},
		{`{% set d = {'b': 1} %}{% set o = {'in': d} %}{% do d.update({'c': 2}) %}{{ o }}`, `{'in': {'b': 1, 'c': 2}}`},
		{`{% for k in {'a': 1} %}{{ k }}{% else %}empty{% endfor %}|{% for k in {} %}{{ k }}{% else %}empty{% endfor %}`, `a|empty`},
		{`{% set d = {'b': {'y': 1, 'x': 2}} %}{{ d.b.keys()|list }}`, `['y', 'x']`},
		{`{% set d = {'b': 1, 'a': 2} %}{% do d.clear() %}{{ d }}`, `{}`},
		{`{% set l = [] %}{% set d = {'b': 1, 'a': 2} %}{% for k, v in d|dictsort %}{% do l.append(k) %}{% endfor %}{{ l }}`, `['a', 'b']`},
		{`{% set l = [] %}{% for x in [1, 2] %}{% if x %}{% do l.append(x) %}{% endif %}{% endfor %}{{ l }}`, `[1, 2]`},
		{`{% set d = {} %}{% for x in ['q', 'b', 'a'] %}{% do d.update({x: loop.index}) %}{% endfor %}{{ d }}`, `{'q': 1, 'b': 2, 'a': 3}`},
		{`{% set d = {'z': 1} %}{% do d.update([('y', 2), ('a', 3)]) %}{{ d }}`, `{'z': 1, 'y': 2, 'a': 3}`},
		{`{{ pillar.items()|list }} {% for k in pillar %}{{ k }}{% endfor %} {{ pillar }} {{ pillar.keys()|list }}`, `[('zeta', 1), ('alpha', 2), ('mid', 3), ('nested', {'y': 1, 'x': 2})] zetaalphamidnested {'zeta': 1, 'alpha': 2, 'mid': 3, 'nested': {'y': 1, 'x': 2}} ['zeta', 'alpha', 'mid', 'nested']`},
		{`{{ pillar.nested.items()|list }} {{ pillar['nested'] }}`, `[('y', 1), ('x', 2)] {'y': 1, 'x': 2}`},
		{`{% do pillar.update({'a': 0}) %}{{ pillar }}`, `{'zeta': 1, 'alpha': 2, 'mid': 3, 'nested': {'y': 1, 'x': 2}, 'a': 0}`},
		// keyword arguments keep the order of the call
		{`{{ dict(b=1, a=2, c=3, aa=0) }}`, `{'b': 1, 'a': 2, 'c': 3, 'aa': 0}`},
		{`{% set d = {} %}{% do d.update(z=1, y=2, x=3) %}{{ d }}`, `{'z': 1, 'y': 2, 'x': 3}`},
		{`{{ dict(q=0, **{'b': 1, 'a': 2}) }}`, `{'q': 0, 'b': 1, 'a': 2}`},
	}, orderedPillar)
}

// A *exec.Dict changed by the template is the caller's, changed.
func TestOrderedDictChangedInPlace(t *testing.T) {
	ctx := orderedPillar()
	if _, err := render(t, "{% do pillar.update({'b': 1}) %}{% do pillar.pop('zeta') %}", ctx); err != nil {
		t.Fatal(err)
	}
	d := ctx["pillar"].(*exec.Dict)
	got := exec.AsValue(d.Keys()).Repr()
	if got != "['alpha', 'mid', 'nested', 'b']" {
		t.Errorf("keys %s", got)
	}
	if v, ok := d.Lookup("b"); !ok || v.Integer() != 1 {
		t.Errorf("b is %v", v)
	}
}

// A Go map is read in its keys' sorted order, as before.
func TestGoMapSorted(t *testing.T) {
	got, err := render(t, "{{ m }} {{ m.keys()|list }} {% for k in m %}{{ k }}{% endfor %}",
		map[string]any{"m": map[string]any{"b": 1, "a": 2}})
	if err != nil || got != "{'a': 2, 'b': 1} ['a', 'b'] ab" {
		t.Errorf("got %q, %v", got, err)
	}
}
