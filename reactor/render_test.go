package reactor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
