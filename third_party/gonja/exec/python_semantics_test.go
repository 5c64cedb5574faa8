package exec_test

// Python semantics that Salt's templates rely on. Every expected output
// here is what Python's Jinja2 (3.1, with StrictUndefined, as Salt 3006
// uses it) renders for the same template and context.

import (
	"sort"
	"strings"
	"testing"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

type pyCase struct {
	template string
	want     string // Python's output, or "ERROR: " and Python's message
}

// render renders source with gonja's builtins, StrictUndefined on.
func render(t *testing.T, source string, ctx map[string]any) (string, error) {
	t.Helper()
	cfg := config.New()
	cfg.StrictUndefined = true
	env := &exec.Environment{
		Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables),
		Filters:           builtins.Filters,
		Tests:             builtins.Tests,
		ControlStructures: builtins.ControlStructures,
		Methods:           builtins.Methods,
	}
	loader := loaders.MustNewMemoryLoader(map[string]string{"/tpl": source})
	tpl, err := exec.NewTemplate("/tpl", cfg, loader, env)
	if err != nil {
		return "", err
	}
	all := map[string]any{"f": pyF}
	for k, v := range ctx {
		all[k] = v
	}
	return tpl.ExecuteToString(exec.NewContext(all))
}

// pyF is f(*a, **k) = list(a) + [k[x] for x in sorted(k)].
func pyF(va *exec.VarArgs) any {
	out := []any{}
	for _, a := range va.Args {
		out = append(out, a)
	}
	keys := []string{}
	for k := range va.KwArgs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, va.KwArgs[k])
	}
	return out
}

func runPyCases(t *testing.T, cases []pyCase, ctx func() map[string]any) {
	t.Helper()
	for _, c := range cases {
		var vars map[string]any
		if ctx != nil {
			vars = ctx()
		}
		got, err := render(t, c.template, vars)
		if want, isErr := strings.CutPrefix(c.want, "ERROR: "); isErr {
			if err == nil {
				t.Errorf("%q: rendered %q, Python fails with %q", c.template, got, want)
			} else if !strings.Contains(err.Error(), want) {
				t.Errorf("%q: error %q does not say Python's %q", c.template, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v, Python renders %q", c.template, err, c.want)
			continue
		}
		if got != c.want {
			t.Errorf("%q:\n got %q\nwant %q (Python)", c.template, got, c.want)
		}
	}
}

func TestPythonRepr(t *testing.T) {
	runPyCases(t, []pyCase{
		{`{{ None }} {{ True }} {{ False }} {{ ('a','b') }} {{ ['a','b'] }} {{ ["it's"] }} {{ {'a': 1} }}`, `None True False ('a', 'b') ['a', 'b'] ["it's"] {'a': 1}`},
		{`{{ 1.0 }} {{ 1e20 }} {{ 1e16 }} {{ 1.5e-5 }} {{ 0.1+0.2 }} {{ [None, True] }} {{ 10/4 }} {{ 3.0*2 }}`, `1.0 1e+20 1e+16 1.5e-05 0.30000000000000004 [None, True] 2.5 6.0`},
		{`{{ [1.0, 'a"b', "x'y\"z"] }}`, `[1.0, 'a"b', 'x\'y"z']`},
		{`{{ {'a': None, 'b': [1, (2,3)], 1: 'x'} }}`, `{'a': None, 'b': [1, (2, 3)], 1: 'x'}`},
		{`{{ ('a',) }} {{ () }} {{ [] }} {{ {} }}`, `('a',) () [] {}`},
		{`{{ ('a', 1, None, True, 1.5) }}`, `('a', 1, None, True, 1.5)`},
		{`{{ {'k': ('a',), 'l': [{'m': None}]} }}`, `{'k': ('a',), 'l': [{'m': None}]}`},
		{`{{ "it's" }} {{ ["it's", 'say "hi"', "both ' \""] }}`, `it's ["it's", 'say "hi"', 'both \' "']`},
		{`{{ ['\n', '\t', '\\', 'é', '\x01'] }}`, `['\n', '\t', '\\', 'é', '\x01']`},
		{`{{ [1e100, 1.0e-7, 123456789.0, 0.0001, -0.0, 2.5] }}`, `[1e+100, 1e-07, 123456789.0, 0.0001, -0.0, 2.5]`},
		{`{{ 'x' ~ 1 ~ None }} {{ 'a' ~ [None] }}`, `x1None a[None]`},
		{`{{ (1, 2) + (3,) }} {{ [1] + [2] }}`, `(1, 2, 3) [1, 2]`},
		{`{% macro m(x, y=2) %}{{ x }}{{ y }}{{ kwargs }}{{ varargs }}{% endmacro %}{{ m(1, 3, 4, z=5) }}`, `13{'z': 5}(4,)`},
	}, nil)
}

func syntaxContext() map[string]any {
	return map[string]any{"a": true, "b": false, "name": "bob", "l": []any{1}}
}

func TestPythonSyntax(t *testing.T) {
	runPyCases(t, []pyCase{
		{`{% if a
   and b %}y{% else %}n{% endif %}`, `n`},
		{`{% if a and
 a %}ok{% endif %}`, `ok`},
		{`{{ f(1 if a else 2) }} {{ f(x=1 if b else 2) }} {{ [1 if a else 2, 3] }} {{ [1, 2 if b else 3] }}`, `[1] [2] [1, 3] [1, 3]`},
		{`{{ f(1 if a else 2, k='v' if a else 'w') }}`, `[1, 'v']`},
		{`{{ 'a' if a else 'b' | upper }} {{ 'a' if b else 'b' | upper }}`, `a B`},
		{`{{ 'x' if a else 'y' if b else 'z' }} {{ 'x' if b else 'y' if b else 'z' }}`, `x z`},
		{`{{ 1 if false }}|{{ 1 + 2 if a else 3 }}`, `|3`},
		{`{% for x in [1,2,3] if x > 1 %}{{ x }}{% endfor %}`, `23`},
		{`{{ dict(**{'a': 1}) }} {{ f(*[1, 2], **{'z': 3}) }} {{ f(1, *(2, 3), x=4) }} {{ [1,2]|join(*['-']) }}`, `{'a': 1} [1, 2, 3] [1, 2, 3, 4] 1-2`},
		{`{{ {True: 1, 1: 'a', None: 2} }} {{ {1: 'a', 2: 'b'}[1] }} {{ {1: 'a'}[True] }} {{ {None: 'n'}[None] }}`, `{True: 'a', None: 2} a a n`},
		{`{% set l = [] %}{% do l.append(1) if a %}{% do l.append(2) if b %}{{ l }}`, `[1]`},
		{`{% set l = [] %}{% do l.append(1) if b else l.append(2) %}{{ l }}`, `[2]`},
		{`{% set a, b = 1, 2 %}{{ a }} {{ b }}`, `1 2`},
		{`{% set p = ('x', 'y') %}{% set a, b = p %}{{ a }} {{ b }}`, `x y`},
		{`{% set (a, b) = [3, 4] %}{{ a }}{{ b }}`, `34`},
		{`{% set t = 1, 2 %}{{ t }}`, `(1, 2)`},
		{`{{ '\s' }}|{{ '\n' }}|{{ '\t' }}|{{ '\\' }}|{{ '\x41' }}|{{ '\u00e9' }}|{{ 'a\'b' }}|{{ "a\"b" }}`, `\s|
|	|\|A|é|a'b|a"b`},
		{`{{ '\d+\.\w' }}|{{ '\101' }}|{{ 'a\\' ~ 'b' }}`, `\d+\.\w|A|a\b`},
		{`{{ 'a' 'b' }}`, `ab`},
		{`{{ ('s' in 'x'|lower) and 'wrong' }}`, `False`},
		{`{{ 's' in 'x'|lower and 'wrong' }}`, `False`},
		{`{{ 'x' in 'X'|lower and 'right' }}`, `right`},
		{`{{ 'x' not in 'X'|lower or 'z' }}`, `z`},
		{`{{ not 'a' in 'abc' }} {{ 2 not in [1] }} {{ not 1 in [1] }} {{ not a == b }} {{ not not a }}`, `False True False True True`},
		{`{{ 'A-B'|lower|replace('-', '_') in 'xa_bx' and 'yes' }}`, `yes`},
		{`{{ 1 < 2 < 3 }} {{ 3 > 2 > 1 }} {{ 1 == 1 == 1 }} {{ 1 < 3 < 2 }}`, `True True True False`},
		{`{{ -1|abs }} {{ 1 + 1 is number }} {{ 3 is divisibleby 3 }} {{ 1 is number and 2 }}`, `1 2 True 2`},
		{`{{ '/home/%s' % name }}`, `/home/bob`},
		{`{{ '%d-%s' % (1, 'a') }}`, `1-a`},
		{`{{ '%s' % 'x' }} {{ '%5.2f' % 3.14159 }} {{ '%(a)s' % {'a': 1} }} {{ '%%' % () }} {{ '%r' % 'a' }}`, `x  3.14 1 % 'a'`},
		{`{{ '%-5s|%5s|%05d|%+d|%x|%o|%e|%g|%c' % ('a', 'b', 42, 5, 255, 8, 12345.678, 0.00001, 65) }}`, `a    |    b|00042|+5|ff|10|1.234568e+04|1e-05|A`},
		{`{{ '%s and %s' % ('a', 'b') }} {{ '%s' % None }} {{ '%s' % [None] }} {{ '%s' % (None,) }} {{ '%.2f%%' % 12.345 }}`, `a and b None [None] None 12.35%`},
		{`{{ 7 % 3 }} {{ -7 % 3 }} {{ 7.5 % 2 }} {{ -7 % -3 }} {{ 7 % -3 }}`, `1 2 1.5 -1 -2`},
		{`{{ 1 + 2 * 3 ** 2 }} {{ -2 ** 2 }} {{ 2 ** -1 }} {{ 2 ** 10 }} {{ 2.0 ** 2 }}`, `19 4 0.5 1024 4.0`},
		{`{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 / 2 }} {{ 7 // -2 }} {{ 7.5 // 2 }}`, `3 -4 3.5 -4 3.0`},
		{`{{ True + 1 }} {{ 1 == True }}`, `2 True`},
		{`{{ ['{{', ] }} {{ ['}}', '%}'] }}`, `['{{'] ['}}', '%}']`},
		{`{{ ['a', ] }} {{ {'a': 1, } }} {{ f(1, ) }} {{ (1, ) }}`, `['a'] {'a': 1} [1] (1,)`},
		{`{% for a, b in [(1, 2), (3, 4)] %}{{ a }}{{ b }}{% endfor %}`, `1234`},
		{`{{ l|length > 0 and l[0] }}`, `1`},
		{`{{ [1, 2, 1, 3, 4].index(1, 1, 3) }} {{ [1, 2, 1].index(2) }} {{ [1, 2, 1].count(1) }} {{ {}.fromkeys(['a', 'b'], 0) }} {{ {'z': 1}.fromkeys('xy') }}`, `2 1 2 {'a': 0, 'b': 0} {'x': None, 'y': None}`},
		{`{{ [1].index(5) }}`, `ERROR: 5 is not in list`},
		{`{{ none }} {{ none is none }} {{ [none, None] }} {{ none == None }}`, `None True [None, None] True`},
		// an empty dict is false, as Python's (the systemd formula's
		// {% if networkd.pkg %} with pkg: {} from its defaults.yaml)
		{`{{ 'y' if {} else 'n' }}|{% if {} %}y{% else %}n{% endif %}|{{ not {} }}|{{ {} and 1 }}|{{ {} or 2 }}|{{ [{}, {'a': 1}]|select|list }}|{{ 'y' if () else 'n' }}|{{ not () }}|{{ {}|default('d', true) }}|{{ [{}]|reject|list }}|{{ not {'a': 1} }}`,
			`n|n|True|{}|2|[{'a': 1}]|n|True|d|[{}]|False`},
		{`{{ 6 is divisibleby(num=3) }} {{ 6 is divisibleby(4) }} {{ 1 is eq(1) }} {{ 1 is sameas 1 and 2 }} {{ 3 is in([1, 3]) }} {{ 4 is ge 3 or x }}`, `True False True 2 True True`},
	}, syntaxContext)
}

// TestPythonIndex: an index counts from the end when negative (-len is
// the first item, a one-item list's -1 too), and a string's index is a
// character's.
func TestPythonIndex(t *testing.T) {
	runPyCases(t, []pyCase{
		{`{{ ['a'][-1] }} {{ ['a','b'][-2] }} {{ ('a',)[-1] }} {{ 'a'[-1] }} {{ 'ab'[-2] }}`, `a a a a a`},
		{`{{ 'héllo'[1] }} {{ 'héllo'[-4] }} {{ 'a/b'.split('/')[-1] }} {{ 'a'.split('/')[-1] }}`, `é é b a`},
		{`{{ ['a'][-2] is defined }} {{ ['a'][0] is defined }}`, `False True`},
		{`{{ ['a'][-2] }}`, `ERROR: list object has no element -2`},
		{`{{ 'ab'[-3] }}`, `ERROR: str object has no element -3`},
		{`{{ ['a'][1] }}`, `ERROR: list object has no element 1`},
	}, nil)
}

// TestPythonStr: Python has one str, so what a str method returns equals
// (==, in, a dict key) the same text written in the template; split and
// rsplit take Python's arguments (no separator or None: runs of
// whitespace; maxsplit counts splits, from the right for rsplit); a
// method of a parenthesized value is called on it, as in the redis
// formula's (value|string).format(name=instance_name).
func TestPythonStr(t *testing.T) {
	runPyCases(t, []pyCase{
		{`{{ "A".lower() == "a" }} {{ " a ".strip() == "a" }} {{ "a".upper() == "A" }} {{ "a:b".partition(":")[0] == "a" }} {{ "a b".split(" ")[0] == "a" }} {{ "a\nb".splitlines()[0] == "a" }} {{ "a:b".rsplit(":")[0] == "a" }} {{ "a".title() == "A" }} {{ "x".zfill(2) == "0x" }}`,
			`True True True True True True True True True`},
		{`{{ {"a": 1}["A".lower()] }} {{ "A".lower() in ["a"] }} {{ "A".lower() in {"a": 1} }} {{ "a:b".split(":")[0] in {"a": 1} }} {{ "a:b".split(":")[0] in "abc" }} {{ "a:b".split(":") == ["a", "b"] }} {{ "hash:/x".split(":")[0] in ("btree", "hash") }}`,
			`1 True True True True True True`},
		{`{{ "A".lower() in m }} {{ "a:b".split(":")[0] in m }} {{ "Z".lower() in m }}`, `True True False`},
		{`{{ "a b".split() }} {{ " a  b ".split() }} {{ "a  b".split(" ") }} {{ " a  b ".rsplit(None, 1) }} {{ "a b c".split(None, 1) }} {{ "a:b:c".split(":", 1) }}`,
			`['a', 'b'] ['a', 'b'] ['a', '', 'b'] [' a', 'b'] ['a', 'b c'] ['a', 'b:c']`},
		{`{{ "a:b:c".rsplit(":", 1) }} {{ "a::b::c".rsplit("::", 1) }} {{ "a:b:c".split(":", 0) }} {{ "".split() }} {{ "".split(":") }} {{ " a b ".split(maxsplit=1) }} {{ "a/b/c".rsplit("/", 1)[-1] }}`,
			`['a:b', 'c'] ['a::b', 'c'] ['a:b:c'] [] [''] ['a', 'b '] c`},
		{`{{ "a".split("") }}`, `ERROR: empty separator`},
		{`{{ ('a{n}'|string).format(n=1) }} {{ (1|string).upper() }} {{ ('a' ~ 'b').upper() }} {{ (x).split('/')[0] }} {{ ([1, 2]).index(2) }} {{ ({'a': 1}).get('a') }} {{ ('a/b').split('/').1 }} {{ ('A').lower().upper() }}`,
			`a1 1 AB p 1 1 b A`},
		{`{% set d = {} %}{% do (d).update({'k': 1}) %}{{ d }}`, `{'k': 1}`},
	}, func() map[string]any { return map[string]any{"m": map[string]any{"a": 1}, "x": "p/q"} })
}

// TestPythonScopes: an if block makes no scope (a set in it is seen after
// it, in a for body too); a for body does, each iteration its own.
func TestPythonScopes(t *testing.T) {
	runPyCases(t, []pyCase{
		{`{% for x in [1,2] %}{% set n = False %}{% if x == 2 %}{% set n = True %}{% endif %}{{ n }}{% endfor %}`, `FalseTrue`},
		{`{% set n = 0 %}{% for x in [1,2] %}{% if x == 2 %}{% set n = 5 %}{% endif %}{{ n }}{% endfor %}{{ n }}`, `050`},
		{`{% for x in [1,2] %}{% if x == 2 %}{% set m = 5 %}{% endif %}{% endfor %}{{ m is defined }}`, `False`},
		{`{% for x in [1,2] %}{% if true %}{% if x == 2 %}{% set n = x %}{% endif %}{% endif %}{{ n is defined }}{% endfor %}`, `FalseTrue`},
		{`{% for x in [1] %}{% for y in [1] %}{% set n = 1 %}{% endfor %}{{ n is defined }}{% endfor %}`, `False`},
		{`{% for x in [1,2] %}{% if x == 1 %}{% set n = 1 %}{% endif %}{{ n is defined }}{% endfor %}`, `TrueFalse`},
		{`{% for m in ["a"] %}{% set n = False %}{% set fp = "hash:/etc/x" %}{% if fp.startswith("proxy:") %}{% set _, ft, fp = fp.split(":") %}{% elif ":" in fp %}{% set ft, fp = fp.split(":") %}{% else %}{% set ft = "z" %}{% endif %}{% if ft in ("btree", "hash") %}{% set n = True %}{% endif %}{{ n }} {{ ft }} {{ fp }}{% endfor %}`, `True hash /etc/x`},
	}, nil)
}

// TestPythonDictInPlace: a dict's methods change the dict itself, a Go
// map of the context (Salt's pillar) too, whatever name reaches it.
func TestPythonDictInPlace(t *testing.T) {
	ctx := func() map[string]any {
		m := map[string]any{"a": 1, "b": 2, "s": map[string]any{"j": 2, "k": 1}}
		return map[string]any{"m": m, "n": m}
	}
	runPyCases(t, []pyCase{
		{`{% do m.pop("a") %}{{ m }}`, `{'b': 2, 's': {'j': 2, 'k': 1}}`},
		{`{{ m.pop("z", 5) }}{{ m|length }}`, `53`},
		{`{{ m.popitem() }}{{ m }}`, `('s', {'j': 2, 'k': 1}){'a': 1, 'b': 2}`},
		{`{% do m.clear() %}{{ m }}{{ n }}`, `{}{}`},
		{`{% set x = m.get("s") %}{% do x.pop("k") %}{{ m }}`, `{'a': 1, 'b': 2, 's': {'j': 2}}`},
		{`{% set x = m.s %}{% do x.clear() %}{{ n.s }}`, `{}`},
		{`{{ m.pop("zz") }}`, `ERROR: KeyError: 'zz'`},
		{`{% set d = {'a': 1, 'b': 2} %}{{ d.popitem() }}{{ d }}`, `('b', 2){'a': 1}`},
		{`{{ {}.popitem() }}`, `ERROR: popitem(): dictionary is empty`},
	}, ctx)
}

// TestPythonListMethods: extend, insert, pop, remove and clear change
// the list, as Python's do (libmapstack.jinja extends its lists).
func TestPythonListMethods(t *testing.T) {
	runPyCases(t, []pyCase{
		{`{% set l = [1] %}{% do l.extend([2, 3]) %}{% do l.extend((4,)) %}{% do l.extend("ab") %}{% do l.extend({"k": 1}) %}{{ l }}`, `[1, 2, 3, 4, 'a', 'b', 'k']`},
		{`{% set l = [1, 2, 3] %}{% do l.insert(0, 0) %}{% do l.insert(-1, 9) %}{% do l.insert(99, 7) %}{% do l.insert(-99, 5) %}{{ l }}`, `[5, 0, 1, 2, 9, 3, 7]`},
		{`{% set l = [1, 2, 3] %}{{ l.pop() }}{{ l.pop(0) }}{{ l }}`, `31[2]`},
		{`{% set l = [1, 2, 1] %}{% do l.remove(1) %}{{ l }}`, `[2, 1]`},
		{`{% set l = [1, 2] %}{% do l.clear() %}{{ l }}`, `[]`},
		{`{% set d = {"l": []} %}{% do d.l.extend([1]) %}{{ d }}`, `{'l': [1]}`},
		{`{% set l = [] %}{% for x in [1] %}{% do l.extend([x, 2]) %}{% endfor %}{{ l }}`, `[1, 2]`},
		{`{{ [].pop() }}`, `ERROR: pop from empty list`},
		{`{{ [1].pop(5) }}`, `ERROR: pop index out of range`},
		{`{{ [1].remove(3) }}`, `ERROR: list.remove(x): x not in list`},
	}, nil)
}

// TestPythonAddition: + as Python's, with its TypeErrors.
func TestPythonAddition(t *testing.T) {
	runPyCases(t, []pyCase{
		{`{{ 'a' + 'b' }} {{ [1] + [2] }} {{ (1,) + (2,) }} {{ True + 1.5 }} {{ 1 + 2 }} {{ 1.5 + 1 }}`, `ab [1, 2] (1, 2) 2.5 3 2.5`},
		{`{{ "a" + 1 }}`, `ERROR: can only concatenate str (not "int") to str`},
		{`{{ "a" + 1.5 }}`, `ERROR: can only concatenate str (not "float") to str`},
		{`{{ 1 + "a" }}`, `ERROR: unsupported operand type(s) for +: 'int' and 'str'`},
		{`{{ [1] + "a" }}`, `ERROR: can only concatenate list (not "str") to list`},
		{`{{ [1] + {} }}`, `ERROR: can only concatenate list (not "dict") to list`},
		{`{{ (1,) + [2] }}`, `ERROR: can only concatenate tuple (not "list") to tuple`},
		{`{{ [1] + (2,) }}`, `ERROR: can only concatenate list (not "tuple") to list`},
		{`{{ None + 1 }}`, `ERROR: unsupported operand type(s) for +: 'NoneType' and 'int'`},
		{`{{ {} + {} }}`, `ERROR: unsupported operand type(s) for +: 'dict' and 'dict'`},
	}, nil)
}
