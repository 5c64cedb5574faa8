package state_test

import (
	"context"
	"strings"
	"testing"

	"github.com/brinehq/brine/state"
)

// TestRenderErrorsNameFileAndLine: every render error names the file and
// line that failed and what was wrong in Jinja's words, with no statement
// of gonja's in it. The file, line and message are Salt 3006.6's for the
// same tree (state.show_sls; Salt names the innermost frame's file,
// lib.jinja(4), for an error in an imported macro); "via" is brine's way
// there.
func TestRenderErrorsNameFileAndLine(t *testing.T) {
	src := memSource{
		"errt/lib.jinja":  "{%- macro m(x) %}\n{%-   set l = [] %}\n{%-   for i in x %}\n{%-     do l.extend2(i) %}\n{%-   endfor %}\n{{- l }}\n{%- endmacro %}\n",
		"errt/map.jinja":  "{%- from \"errt/lib.jinja\" import m %}\n\n{%- set v = m([1]) %}\n",
		"errt/bad.yaml":   "a: [\n",
		"errt/deep.jinja": "{%- import_yaml \"errt/bad.yaml\" as b %}\n",
	}
	for _, tc := range []struct{ src, want string }{
		{"{%- from \"errt/map.jinja\" import v %}\na: {{ v }}\n",
			"Rendering SLS errt/lib.jinja:4 (in macro 'm', imported by errt/map.jinja, imported by t.sls) failed: 'list object' has no attribute 'extend2'"},
		{"{% macro m() %}\n{{ [].nope() }}\n{% endmacro %}\na: {{ m() }}\n",
			"Rendering SLS t.sls:2 (in macro 'm') failed: 'list object' has no attribute 'nope'"},
		{"{% for i in [1] %}\n{%   if true %}\n{{ i.nope.x }}\n{%   endif %}\n{% endfor %}\n",
			"Rendering SLS t.sls:3 failed: 'int object' has no attribute 'nope'"},
		{"a:\n  test.nop:\n    - name: {{ 1/0 }}\n", "Rendering SLS t.sls:3 failed: division by zero"},
		{"a:\n  test.nop:\n    - name: {{ \"a\" + 1 }}\n", "Rendering SLS t.sls:3 failed: can only concatenate str (not \"int\") to str"},
		{"{% set d = {} %}a: {{ d[\"k\"] }}\n", "Rendering SLS t.sls:1 failed: 'dict object' has no attribute 'k'"},
		{"a: {{ nope() }}\n", "Rendering SLS t.sls:1 failed: 'nope' is undefined"},
		{"a: {{ salt['pillar.get']('x') }}\n", "Rendering SLS t.sls:1 failed: 'salt' is undefined"},
		{"a: {{ [1]|nofilter }}\n", "Rendering SLS t.sls:1 failed: No filter named 'nofilter'."},
		{"\n{% from \"errt/missing.jinja\" import x %}\n", "Rendering SLS t.sls:2 failed: template \"errt/missing.jinja\" in saltenv \"base\": not found"},
		{"{%- from \"errt/deep.jinja\" import b %}\n", "Rendering SLS errt/bad.yaml:1 (imported by errt/deep.jinja, imported by t.sls) failed: YAML: sequence end token ']' not found"},
	} {
		_, err := state.NewRenderer().Jinja(context.Background(), src, "base", "t.sls", []byte(tc.src), nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "ControlStructure") || strings.Contains(err.Error(), "invalid call")) {
			t.Errorf("%q: gonja's statements in %v", tc.src, err)
		}
	}
}
