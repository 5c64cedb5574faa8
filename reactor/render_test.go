package reactor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPythonStringMethods renders the string methods Salt reaction files
// use, with Python's optional arguments.
func TestPythonStringMethods(t *testing.T) {
	cases := map[string]string{
		`{{ data['id'].replace('-', '_') }}`:    "web_asg_01",
		`{{ data['id'].replace('-', '_', 1) }}`: "web_asg-01",
		`{{ data['id'].replace('', 'x') }}`:     "web-asg-01",
		`{{ data['id'].startswith('web-') }}`:   "True",
		`{{ data['id'].split('-')[-1] }}`:       "01",
		`{{ data['id'].upper() }}`:              "WEB-ASG-01",
		`{{ data['id'][:3] }}`:                  "web",
		`{{ data.get('missing', 'dflt') }}`:     "dflt",
	}
	r := New(Config{}, testFuncs(t))
	dir := t.TempDir()
	i := 0
	for tmpl, want := range cases {
		i++
		path := filepath.Join(dir, fmt.Sprintf("t%d.sls", i))
		if err := os.WriteFile(path, []byte(tmpl), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := r.Render(context.Background(), path, "salt/test", map[string]any{"id": "web-asg-01"})
		if err != nil || string(out) != want {
			t.Errorf("%s = %q, %v; want %q", tmpl, out, err, want)
		}
	}
}

// TestJinjaErrorsInPlainWords checks that Jinja runtime errors name the
// line, the column in the file and the name at fault, without gonja's
// syntax tree or brine's own rewrite in them.
func TestJinjaErrorsInPlainWords(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		src, want string
	}{
		{"a:\n  runner.test.arg:\n    - arg: [{{ data['x'] | nosuchfilter }}]\n", `x.sls:3:28: render: unknown filter "nosuchfilter"`},
		{"a:\n  runner.test.arg:\n    - arg: [{{ undefined_fn(1) }}]\n", `x.sls:3: render: 'undefined_fn' is undefined`}, // Jinja2's words, as Salt reports them
		{"{{ data['x'].nosuchmethod() }}\n", `x.sls:1: render: 'str object' has no attribute 'nosuchmethod'`},            // Jinja2's words
		{"a: {{ 1 if data['x'] is nosuchtest else 2 }}\n", `unknown test "nosuchtest"`},
		// gonja panics on a division by zero: Plan recovers, naming it.
		{"{% set n = 1 % 0 %}a: {{ n }}\n", `x.sls:1: render: integer division or modulo by zero`}, // Python's
	} {
		path := filepath.Join(dir, "x.sls")
		writeFile(t, path, tc.src)
		r := New(Config{Mapping: []MapEntry{{Glob: "*", Files: []string{path}}}}, testFuncs(t))
		p := r.Plan(context.Background(), "t", map[string]any{"x": "v"})
		if len(p.Errors) != 1 {
			t.Fatalf("%q: errors %v", tc.src, p.Errors)
		}
		msg := p.Errors[0].Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, "Token[") || strings.Contains(msg, scalarFilter) {
			t.Errorf("%q: error %q, want %q in plain words", tc.src, msg, tc.want)
		}
	}
}
