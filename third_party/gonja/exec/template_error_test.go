package exec_test

import (
	"errors"
	"testing"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// TestTemplateErrorNamesFileAndLine: an error in a macro's body is said
// at the body's line, in the file the macro is written in, with the
// macro's name and Jinja's message, not the statements it went through.
// The lines and messages are Python Jinja2's (its traceback's innermost
// frame: lib(4), 'list object' has no attribute 'extend2').
func TestTemplateErrorNamesFileAndLine(t *testing.T) {
	lib := "{%- macro m(x) %}\n{%-   set l = [] %}\n{%-   for i in x %}\n{%-     do l.extend2(i) %}\n{%-   endfor %}\n{{- l }}\n{%- endmacro %}\n"
	for _, tc := range []struct {
		name, src   string
		file, macro string
		line        int
		message     string
	}{
		{"imported macro", "{% from '/lib' import m %}\n\n{% set v = m([1]) %}", "/lib", "m", 4, "'list object' has no attribute 'extend2'"},
		{"macro of the template", lib + "{{ m([1]) }}", "/tpl", "m", 4, "'list object' has no attribute 'extend2'"},
		{"no macro", "a\n{% for i in [1] %}{% if true %}\n{{ i.nope.x }}{% endif %}{% endfor %}", "", "", 3, "'int object' has no attribute 'nope'"},
		{"function's error", "\n{{ f(1) }}", "", "", 2, "boom"},
		{"not callable", "{{ (1)() }}", "", "", 1, "'int' object is not callable"},
		{"undefined callee", "{{ d['x']() }}", "", "", 1, "'dict object' has no attribute 'x'"},
		{"no filter", "\n{{ 1|nofilter }}", "", "", 2, "No filter named 'nofilter'."},
	} {
		cfg := config.New()
		cfg.StrictUndefined = true
		env := &exec.Environment{
			Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables),
			Filters:           builtins.Filters,
			Tests:             builtins.Tests,
			ControlStructures: builtins.ControlStructures,
			Methods:           builtins.Methods,
		}
		loader := loaders.MustNewMemoryLoader(map[string]string{"/tpl": tc.src, "/lib": lib})
		var err error
		tpl, err := exec.NewTemplate("/tpl", cfg, loader, env)
		if err == nil {
			_, err = tpl.ExecuteToString(exec.NewContext(map[string]any{
				"d": map[string]any{},
				"f": func(*exec.VarArgs) (any, error) { return nil, errors.New("boom") },
			}))
		}
		var te *exec.TemplateError
		if !errors.As(err, &te) {
			t.Errorf("%s: %v is not a TemplateError", tc.name, err)
			continue
		}
		if te.File != tc.file || te.Macro != tc.macro || te.Line != tc.line || te.Message != tc.message {
			t.Errorf("%s: file %q macro %q line %d: %q; want %q %q %d: %q", tc.name, te.File, te.Macro, te.Line, te.Message, tc.file, tc.macro, tc.line, tc.message)
		}
	}
}
