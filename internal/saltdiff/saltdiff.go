// Package saltdiff holds brine's differential tests against Salt: cases
// (templates, SLS trees) that Salt itself rendered, its outputs saved under
// testdata/salt, and the rules by which brine's output counts as Salt's.
// `make test` compares with the saved outputs; `make interop` first
// regenerates them with a real Salt (scripts/salt-oracle.py) from
// ../shared/peers, so that a saved output cannot drift from Salt's.
//
// A case brine renders differently is a bug unless it is listed, with the
// reason, in the suite's known.yaml (and named in docs/coming-from-salt.md
// when the difference is meant). A listed case that now renders as Salt
// does fails the suite too, so the list only ever says what is true.
package saltdiff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/state"
)

// Case is one template rendered by both.
type Case struct {
	Name     string `yaml:"name"`
	Template string `yaml:"template"`
	// Context are the template's variables besides opts, saltenv, salt,
	// grains and pillar (which the harness gives; a context's pillar
	// replaces the empty one).
	Context map[string]any `yaml:"context"`
	// Files are other templates by name, for include, import and
	// import_yaml; Main, when set, names the one rendered instead of
	// Template.
	Files map[string]string `yaml:"files"`
	Main  string            `yaml:"main"`
	// ExpectError: Salt's test expects the render to fail.
	ExpectError bool `yaml:"expect_error"`
	// Nondeterministic: the output depends on the time, chance or the
	// machine; only success or failure is compared.
	Nondeterministic bool `yaml:"nondeterministic"`
}

// Outcome is what one side made of a case: its output, or its error.
type Outcome struct {
	Out   *string `json:"out,omitempty"`
	Error string  `json:"error,omitempty"`
}

// Oracle is the file scripts/salt-oracle.py writes.
type Oracle struct {
	Salt  string             `json:"salt"`
	Cases map[string]Outcome `json:"cases"`
}

// LoadCases reads a cases.yaml.
func LoadCases(file string) ([]Case, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var cs []Case
	if err := yaml.Unmarshal(b, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	seen := map[string]bool{}
	for i, c := range cs {
		if c.Name == "" || seen[c.Name] {
			return nil, fmt.Errorf("%s: case %d: a unique name is required (got %q)", file, i+1, c.Name)
		}
		seen[c.Name] = true
		if c.Main != "" {
			if _, ok := c.Files[c.Main]; !ok {
				return nil, fmt.Errorf("%s: case %s: main %q is not among its files", file, c.Name, c.Main)
			}
		}
	}
	return cs, nil
}

// LoadOracle reads Salt's outputs.
func LoadOracle(file string) (*Oracle, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var o Oracle
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &o, nil
}

// LoadKnown reads a known.yaml: case name to the reason it differs.
func LoadKnown(file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	known := map[string]string{}
	if err := yaml.Unmarshal(b, &known); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return known, nil
}

// Same reports whether brine's outcome is Salt's, and if not, how they
// differ. Two failures are the same outcome (the messages are each
// engine's own); a nondeterministic case compares success only.
func Same(c Case, salt, brine Outcome) (bool, string) {
	switch {
	case salt.Out == nil && brine.Out == nil:
		return true, ""
	case salt.Out == nil:
		return false, fmt.Sprintf("Salt fails (%s), brine renders %q", salt.Error, *brine.Out)
	case brine.Out == nil:
		return false, fmt.Sprintf("Salt renders %q, brine fails (%s)", *salt.Out, brine.Error)
	case c.Nondeterministic || *salt.Out == *brine.Out:
		return true, ""
	}
	return false, fmt.Sprintf("Salt renders %q, brine %q", *salt.Out, *brine.Out)
}

// Files is a state.Source over a case's files, all in saltenv base.
type Files map[string]string

// Read implements state.Source.
func (f Files) Read(_ context.Context, saltenv, name string) ([]byte, error) {
	if text, ok := f[strings.TrimPrefix(path.Clean(name), "/")]; ok && saltenv == "base" {
		return []byte(text), nil
	}
	return nil, fmt.Errorf("salt://%s: %w", name, state.ErrNotFound)
}

// Envs implements state.Source.
func (Files) Envs(context.Context) ([]string, error) { return []string{"base"}, nil }

// Render renders c with brine's renderer, with base's variables (grains,
// opts, salt…) under the case's own.
func Render(ctx context.Context, r *state.Renderer, c Case, base map[string]any) Outcome {
	vars := make(map[string]any, len(base)+len(c.Context))
	for k, v := range base {
		vars[k] = v
	}
	for k, v := range c.Context {
		vars[k] = v
	}
	name, text := "case.sls", c.Template
	if c.Main != "" {
		name, text = c.Main, c.Files[c.Main]
	}
	out, err := r.Jinja(ctx, Files(c.Files), "base", name, []byte(text), vars)
	if err != nil {
		return Outcome{Error: err.Error()}
	}
	s := string(out)
	return Outcome{Out: &s}
}

// truncate shortens s to n runes for a message.
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
