package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/brinehq/brine/state"
)

// memSource is an in-memory Source of one environment.
type memSource map[string]string

func (m memSource) Read(_ context.Context, _, name string) ([]byte, error) {
	if s, ok := m[name]; ok {
		return []byte(s), nil
	}
	return nil, state.ErrNotFound
}

func (m memSource) Envs(context.Context) ([]string, error) { return []string{"base"}, nil }

// FuzzCompile renders any text as an SLS file (Jinja, then YAML) and
// compiles it to low chunks: errors are fine, a panic or a hang is not.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		"a:\n  pkg.installed:\n    - name: x\n    - require:\n      - file: b\n",
		"include:\n  - .rel\nextend:\n  a:\n    pkg:\n      - name: y\n",
		"{% set x = {'a': [1, 2,],} %}{% for k in x %}{{ k }}:\n  test.nop\n{% endfor %}",
		"#!jinja|yaml\n{% import_yaml 'map.yaml' as m %}a:\n  test.nop:\n    - name: {{ m.k }}\n",
		"{% from 'map.sls' import v with context %}a:\n  cmd.run:\n    - names: [{{ v }}, z]\n",
		"a: {b: [c, {d: e}]}\nexclude:\n  - id: a\n",
		"#!yaml|gpg\n",
		"a:\n  test:\n    - nop\n    - order: last\n    - watch_in:\n      - test: a\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		src := memSource{"main.sls": text, "rel.sls": "r:\n  test.nop\n", "map.yaml": "k: v\n", "map.sls": "{% set v = 'w' %}"}
		c := &state.Compiler{Renderer: state.NewRenderer(), Source: src, Vars: func(string) map[string]any {
			return map[string]any{"grains": map[string]any{"id": "x"}, "pillar": map[string]any{}}
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h := c.Compile(ctx, "base", []string{"main"})
		h.Chunks()
		_ = h.Show()
	})
}
