package agent

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/state"
)

func TestDecodePillar(t *testing.T) {
	p, err := decodePillar([]byte(`{"app": {"port": 8000, "ratio": 0.5, "ports": [80, 443], "big": 9007199254740993}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"app": map[string]any{"port": int64(8000), "ratio": 0.5, "ports": []any{int64(80), int64(443)}, "big": int64(9007199254740993)}}
	if !reflect.DeepEqual(p.data, want) {
		t.Errorf("decodePillar = %#v, want %#v", p, want)
	}
	for _, empty := range []string{"", "null"} {
		if p, err := decodePillar([]byte(empty)); err != nil || p == nil || len(p.data) != 0 {
			t.Errorf("decodePillar(%q) = %#v, %v; want an empty pillar", empty, p, err)
		}
	}
	if _, err := decodePillar([]byte(`[1]`)); err == nil {
		t.Error("a pillar that is not a mapping was accepted")
	}
}

// TestPillarOrderSurvives: the pillar's key order as its SLS wrote it
// (a later SLS's keys merged after) survives the master's compile, its
// JSON answer and the agent's decoding, so that a template iterates the
// pillar, and what pillar.get returns, in that order, as Salt's does.
func TestPillarOrderSurvives(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"top.sls":    "base:\n  '*':\n    - first\n    - second\n",
		"first.sls":  "zeta: 1\nsnippets:\n  letsencrypt.conf: a\n  blacklist.conf: b\n",
		"second.sls": "alpha: 2\nsnippets:\n  acme.conf: c\n  letsencrypt.conf: d\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := state.NewRenderer()
	c := &state.Compiler{Renderer: r, Source: state.Roots{"base": {dir}}}
	pillar, order, errs := c.PillarOrdered(context.Background(), func(string, string) (bool, error) { return true, nil })
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	raw, err := keyorder.MarshalJSON(pillar, order) // the master's answer
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodePillar(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.data["snippets"], pillar["snippets"]) {
		t.Fatalf("decoded %v, compiled %v", p.data, pillar)
	}
	call := func(name string, args []any, _ map[string]any) (any, error) {
		return p.data[args[0].(string)], nil // pillar.get of a top key
	}
	vars := map[string]any{
		"pillar": jinja.OrderedBy(p.data, p.order),
		"salt":   jinja.Salt([]string{"pillar.get"}, jinja.PillarOrdered(call, p.order)),
	}
	tests := []struct{ name, src, want string }{
		{"pillar", "{% for k in pillar %}{{ k }} {% endfor %}", "zeta snippets alpha "},
		{"a merged mapping", "{% for k, v in pillar.snippets.items() %}{{ k }}={{ v }} {% endfor %}", "letsencrypt.conf=d blacklist.conf=b acme.conf=c "},
		{"pillar.get", "{{ salt['pillar.get']('snippets')|list }}", "['letsencrypt.conf', 'blacklist.conf', 'acme.conf']"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Jinja(context.Background(), state.Roots{"base": {dir}}, "base", "t.sls", []byte(tt.src), vars)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
