package reactor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemplatesStayInTheirRoots checks that a reaction file can include and
// import templates from its own directory and from file_roots, and nothing
// else: not an absolute path elsewhere, not `..`, not a link out.
func TestTemplatesStayInTheirRoots(t *testing.T) {
	base := t.TempDir()
	reactors, roots, secret := filepath.Join(base, "reactor"), filepath.Join(base, "srv"), filepath.Join(base, "secret")
	for path, text := range map[string]string{
		filepath.Join(secret, "passwd"):           "root:x:0:0:SECRET",
		filepath.Join(roots, "apache", "map.sls"): "{% macro pkg() %}apache2{% endmacro %}",
		filepath.Join(reactors, "common.jinja"):   "common:\n  runner.test.arg:\n    - arg: [{{ data['id'] }}]",
	} {
		writeFile(t, path, text)
	}
	if err := os.Symlink(filepath.Join(secret, "passwd"), filepath.Join(reactors, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, src string
		want      string // in the error, or in the rendered text when ok
		ok        bool
	}{
		{"import from file_roots", "{% from 'apache/map.sls' import pkg %}\nx:\n  runner.test.arg:\n    - arg: [{{ pkg() }}]\n", "apache2", true},
		{"salt:// import", "{% from 'salt://apache/map.sls' import pkg %}\nx:\n  runner.test.arg:\n    - arg: [{{ pkg() }}]\n", "apache2", true},
		{"include beside the file", "{% include 'common.jinja' %}\n", "arg: [web1]", true},
		{"absolute path", "{% include '" + filepath.Join(secret, "passwd") + "' %}\n", "outside the allowed directories", false},
		{"etc passwd", "{% include '/etc/passwd' %}\n", "outside the allowed directories", false},
		{"dot dot", "{% include '../secret/passwd' %}\n", "outside the allowed directories", false},
		{"salt dot dot", "{% include 'salt://../secret/passwd' %}\n", "outside the allowed directories", false},
		{"link out", "{% include 'link' %}\n", "outside the allowed directories", false},
		{"missing", "{% include 'nope.jinja' %}\n", "not found", false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(reactors, "r"+string(rune('a'+i))+".sls")
			writeFile(t, path, tc.src)
			r := New(Config{Mapping: []MapEntry{{Glob: "*", Files: []string{path}}}, FileRoots: map[string][]string{"base": {roots}}}, testFuncs(t))
			p := r.Plan(context.Background(), "salt/test", map[string]any{"id": "web1"})
			text := string(p.Files[0].Rendered)
			if tc.ok {
				if len(p.Errors) > 0 || !strings.Contains(text, tc.want) {
					t.Fatalf("errors %v, rendered %q; want %q", p.Errors, text, tc.want)
				}
				return
			}
			if len(p.Errors) != 1 || !strings.Contains(p.Errors[0].Error(), tc.want) {
				t.Fatalf("errors %v, want one saying %q", p.Errors, tc.want)
			}
			if strings.Contains(p.Errors[0].Error(), "SECRET") || strings.Contains(text, "SECRET") {
				t.Fatalf("the secret file was read: %v %q", p.Errors, text)
			}
		})
	}
}
