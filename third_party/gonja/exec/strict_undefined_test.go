package exec_test

// StrictUndefined (config.Config.StrictUndefined) as Jinja2's
// StrictUndefined, which Salt uses; the expected outputs and messages are
// Python's. Errors carry the line (exec.TemplateError) and Jinja's words.

import (
	"errors"
	"strings"
	"testing"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/parser"
)

func undefinedContext() map[string]any {
	return map[string]any{"d": map[string]any{"k": nil, "q": nil}, "l": []any{1}, "s": "str"}
}

func TestStrictUndefined(t *testing.T) {
	runPyCases(t, []pyCase{
		{`{{ foo }}`, `ERROR: 'foo' is undefined`},
		{`{{ d.x }}`, `ERROR: 'dict object' has no attribute 'x'`},
		{`{{ d['x'] }}`, `ERROR: 'dict object' has no attribute 'x'`},
		{`{{ foo + 1 }}`, `ERROR: 'foo' is undefined`},
		{`{% for x in foo %}{% endfor %}`, `ERROR: 'foo' is undefined`},
		{`{{ foo() }}`, `ERROR: 'foo' is undefined`},
		{`{% if foo %}y{% endif %}`, `ERROR: 'foo' is undefined`},
		{`{{ foo|upper }}`, `ERROR: 'foo' is undefined`},
		{`{{ foo ~ 'a' }}`, `ERROR: 'foo' is undefined`},
		{`{{ foo.bar }}`, `ERROR: 'foo' is undefined`},
		{`{{ d.x.y }}`, `ERROR: 'dict object' has no attribute 'x'`},
		{`{{ l[5] }}`, `ERROR: list object has no element 5`},
		{`{{ s.nope }}`, `ERROR: 'str object' has no attribute 'nope'`},
		{`{{ d[5] }}`, `ERROR: dict object has no element 5`},
		{`{{ None.x }}`, `ERROR: 'None' has no attribute 'x'`},
		{`{{ foo is defined }} {{ foo is undefined }} {{ foo|default('d') }} {{ d.x is defined }} {{ d.x|default('z') }}`, `False True d False z`},
		{`{{ d.get('k') }} {{ 'k' in d }} {{ d.get('k', 3) }} {{ d.get('nope') }} {{ 'nope' in d }}`, `None True None None False`},
		{`{% set x = foo %}{{ x is defined }}`, `False`},
		{`{% set x = foo %}{{ x }}`, `ERROR: 'foo' is undefined`},
		{`{{ d.q is defined }} {{ d.q }} {{ d.q|default('x') }} {{ d.q|default('x', true) }} {{ d.q is none }}`, `True None None x True`},
		{`{{ d.x.y is defined }}`, `ERROR: 'dict object' has no attribute 'x'`},
		{`{% if foo is defined and foo %}y{% else %}n{% endif %}`, `n`},
		{`line1
{{ 'ok' }}
{{ missing_on_line_3 }}`, `ERROR: 'missing_on_line_3' is undefined`},
	}, undefinedContext)
}

func TestTemplateErrorLine(t *testing.T) {
	for _, c := range []struct {
		template string
		line     int
		message  string
	}{
		{"line1\n{{ 'ok' }}\n{{ missing }}", 3, "'missing' is undefined"},
		{"{% for x in [1] %}\n{% if x %}\n{{ d.nope }}\n{% endif %}\n{% endfor %}", 3, "'dict object' has no attribute 'nope'"},
		{"a\n{% set x = 1 // 0 %}", 2, "integer division or modulo by zero"},
		{"a\n\n{{ salt['cmd.run']() }}", 3, "invalid call to function 'salt['cmd.run']': refused"},
		{"a\n\n{{ salt.cmd.run() }}", 3, "invalid call to function 'salt.cmd.run': refused"},
	} {
		_, err := render(t, c.template, map[string]any{
			"d": map[string]any{},
			"salt": map[string]any{
				"cmd.run": func(*exec.VarArgs) (any, error) { return nil, exec.ErrInvalidCall(errors.New("refused")) },
				"cmd":     map[string]any{"run": func(*exec.VarArgs) (any, error) { return nil, exec.ErrInvalidCall(errors.New("refused")) }},
			},
		})
		var te *exec.TemplateError
		if !errors.As(err, &te) {
			t.Errorf("%q: error %v is no TemplateError", c.template, err)
			continue
		}
		if te.Line != c.line || te.Message != c.message {
			t.Errorf("%q: line %d %q, want line %d %q", c.template, te.Line, te.Message, c.line, c.message)
		}
		if strings.Contains(err.Error(), "github.com/") {
			t.Errorf("%q: the error names a Go symbol: %v", c.template, err)
		}
	}
}

func TestSyntaxErrorLine(t *testing.T) {
	for _, c := range []struct {
		template string
		line     int
		message  string
	}{
		// Jinja2: "Encountered unknown tag 'endload'."
		{"a\n{% set x = 1 %}\n{% endload %}", 3, "Encountered unknown tag 'endload'."},
		{"a\n{% if %}{% endif %}", 2, ""},
		{"a\n\n{% if x y %}{% endif %}", 3, ""},
	} {
		_, err := exec.NewTemplate("/tpl", config.New(), loaders.MustNewMemoryLoader(map[string]string{"/tpl": c.template}), &exec.Environment{
			Context:           exec.EmptyContext(),
			Filters:           builtins.Filters,
			Tests:             builtins.Tests,
			ControlStructures: builtins.ControlStructures,
			Methods:           builtins.Methods,
		})
		var se *parser.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v is no SyntaxError", c.template, err)
			continue
		}
		if se.Line != c.line || c.message != "" && se.Message != c.message {
			t.Errorf("%q: line %d %q, want line %d %q", c.template, se.Line, se.Message, c.line, c.message)
		}
	}
}

// Without StrictUndefined, an undefined name is nothing, as before.
func TestLenientUndefined(t *testing.T) {
	tpl, err := exec.NewTemplate("/tpl", config.New(), loaders.MustNewMemoryLoader(map[string]string{"/tpl": "[{{ foo }}{{ d.x }}]{{ foo is defined }}"}), &exec.Environment{
		Context: exec.EmptyContext(), Filters: builtins.Filters, Tests: builtins.Tests,
		ControlStructures: builtins.ControlStructures, Methods: builtins.Methods,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := tpl.ExecuteToString(exec.NewContext(map[string]any{"d": map[string]any{}}))
	if err != nil || out != "[]False" {
		t.Errorf("got %q, %v", out, err)
	}
}
