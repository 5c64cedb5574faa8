package pillar

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/state"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCompile(t *testing.T) {
	base := writeTree(t, map[string]string{
		"top.sls":    "base:\n  '*':\n    - common\n  'os:Debian':\n    - match: grain\n    - debian\n  web:\n    - match: nodegroup\n    - web\n",
		"common.sls": "id_seen: {{ grains['id'] }}\nrole: {{ salt['grains.get']('role', 'none') }}\nminion: {{ opts['id'] }}\n",
		"debian.sls": "pkg: apt\n",
		"web.sls":    "port: 80\n",
		"broken.sls": "x: {{ nope }}\n",
	})
	dev := writeTree(t, map[string]string{"top.sls": "dev:\n  '*':\n    - dev\n", "dev.sls": "env: dev\n"})
	roots := state.Roots{"base": {base}, "dev": {dev}}
	groups := map[string]any{"web": "web*"}
	// Without pillarenv every environment's top file counts, as in Salt.
	for _, tc := range []struct {
		name      string
		req       Request
		want      map[string]any
		wantOrder []string
	}{
		{"grain and nodegroup matches", Request{ID: "web1", Grains: map[string]any{"id": "web1", "os": "Debian", "role": "www"}, Roots: roots, Nodegroups: groups},
			map[string]any{"id_seen": "web1", "role": "www", "minion": "web1", "pkg": "apt", "port": uint64(80), "env": "dev"}, []string{"id_seen", "role", "minion", "pkg", "port", "env"}},
		{"no match, a default", Request{ID: "db1", Grains: map[string]any{"id": "db1", "os": "RedHat"}, Roots: roots, Nodegroups: groups},
			map[string]any{"id_seen": "db1", "role": "none", "minion": "db1", "env": "dev"}, []string{"id_seen", "role", "minion", "env"}},
		{"pillarenv reads one environment", Request{ID: "db1", Grains: map[string]any{"id": "db1"}, Roots: roots, Pillarenv: "dev"},
			map[string]any{"env": "dev"}, []string{"env"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, order, errs := Compile(context.Background(), state.NewRenderer(), tc.req)
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if !reflect.DeepEqual(normal(got), normal(tc.want)) {
				t.Errorf("pillar = %#v, want %#v", got, tc.want)
			}
			if !reflect.DeepEqual(order.Keys, tc.wantOrder) {
				t.Errorf("order = %v, want %v", order.Keys, tc.wantOrder)
			}
		})
	}
	t.Run("an SLS's context as Salt's generate_sls_context", func(t *testing.T) {
		// Salt 3006.6 renders these as "./x ./ " and "sub/x sub sub.deep".
		tree := writeTree(t, map[string]string{"top.sls": "base:\n  '*':\n    - root\n    - sub.deep\n",
			"root.sls":          "root: '{{ tpldir }}/x {{ tpldir }}/{{ slspath }} {{ tpldot }}'\n",
			"sub/deep/init.sls": "deep: '{{ tpldir.split(\"/\")[0] }}/x {{ slspath.split(\"/\")[0] }} {{ tpldot }}'\n"})
		got, _, errs := Compile(context.Background(), state.NewRenderer(), Request{ID: "m1", Roots: state.Roots{"base": {tree}}})
		if len(errs) > 0 {
			t.Fatalf("errors: %v", errs)
		}
		if want := map[string]any{"root": "./x ./ ", "deep": "sub/x sub sub.deep"}; !reflect.DeepEqual(got, want) {
			t.Errorf("pillar = %#v, want %#v", got, want)
		}
	})
	t.Run("errors under _errors", func(t *testing.T) {
		broken := writeTree(t, map[string]string{"top.sls": "base:\n  '*':\n    - ok\n    - broken\n", "ok.sls": "a: 1\n", "broken.sls": "x: {{ nope }}\n"})
		got, _, errs := Compile(context.Background(), state.NewRenderer(), Request{ID: "m1", Roots: state.Roots{"base": {broken}}})
		if len(errs) != 1 || !strings.Contains(errs[0], "nope") || !strings.Contains(errs[0], "broken") {
			t.Fatalf("errors = %q, want one naming broken.sls and nope", errs)
		}
		Errors(got, errs)
		if l, _ := got["_errors"].([]any); len(l) != 1 || got["a"] == nil {
			t.Errorf("pillar with errors = %v, want a and one _errors entry", got)
		}
	})
}

// normal makes numbers comparable whatever integer type decoding gave.
func normal(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch n := v.(type) {
		case int:
			v = uint64(n)
		case int64:
			v = uint64(n)
		}
		out[k] = v
	}
	return out
}
