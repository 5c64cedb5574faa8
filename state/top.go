package state

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/goccy/go-yaml"
)

// Matcher says whether the agent the top file is compiled for is one
// tgt of type tgtType (glob, grain, pcre, list, compound, pillar,
// nodegroup, ipcidr…) names.
type Matcher func(tgt, tgtType string) (bool, error)

// Top is a compiled top file: the SLS names an agent applies, by
// environment, and the environments in the order they run.
type Top struct {
	Envs   []string
	Mods   map[string][]string
	Errors []string
}

// Top renders top.sls of every environment (base first, as Salt's merge
// strategy) and keeps the SLS names whose targets match. saltenv, when
// not empty, limits the highstate to that environment.
func (c *Compiler) Top(ctx context.Context, saltenv string, match Matcher) *Top {
	t := &Top{Mods: map[string][]string{}}
	envs, err := c.Source.Envs(ctx)
	if err != nil {
		t.Errors = append(t.Errors, "Unable to list the environments: "+err.Error())
		return t
	}
	if i := slices.Index(envs, "base"); i > 0 {
		envs = append([]string{"base"}, slices.Delete(slices.Clone(envs), i, i+1)...)
	}
	found := false
	for _, env := range envs {
		text, err := c.Source.Read(ctx, env, "top.sls")
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			t.Errors = append(t.Errors, fmt.Sprintf("Unable to read top.sls of saltenv %s: %v", env, err))
			continue
		}
		found = true
		vars := map[string]any{}
		if c.Vars != nil {
			for k, v := range c.Vars(env) {
				vars[k] = v
			}
		}
		vars["saltenv"] = env
		data, err := c.Renderer.RenderSLS(ctx, c.Source, env, "top.sls", text, vars)
		if err != nil {
			t.Errors = append(t.Errors, err.Error())
			continue
		}
		for _, envItem := range data {
			tenv := fmt.Sprint(envItem.Key)
			if saltenv != "" && tenv != saltenv {
				continue
			}
			targets, ok := envItem.Value.(yaml.MapSlice)
			if !ok {
				t.Errors = append(t.Errors, fmt.Sprintf("Top file of saltenv %s: environment %s is not a dictionary of targets", env, tenv))
				continue
			}
			for _, tgtItem := range targets {
				tgt := fmt.Sprint(tgtItem.Key)
				list, ok := tgtItem.Value.([]any)
				if !ok {
					t.Errors = append(t.Errors, fmt.Sprintf("Top file of saltenv %s: target %q of environment %s is not a list of SLS names", env, tgt, tenv))
					continue
				}
				tgtType := "glob"
				var mods []string
				for _, x := range list {
					switch x := toPlain(x).(type) {
					case string:
						mods = append(mods, x)
					case map[string]any:
						if m, ok := x["match"].(string); ok {
							tgtType = m
						}
					}
				}
				ok, err := match(tgt, tgtType)
				if err != nil {
					t.Errors = append(t.Errors, fmt.Sprintf("Top file of saltenv %s: target %q (match: %s): %v", env, tgt, tgtType, err))
					continue
				}
				if !ok {
					continue
				}
				if _, seen := t.Mods[tenv]; !seen {
					t.Envs = append(t.Envs, tenv)
				}
				for _, m := range mods {
					if !slices.Contains(t.Mods[tenv], m) {
						t.Mods[tenv] = append(t.Mods[tenv], m)
					}
				}
			}
		}
	}
	if !found || (len(t.Mods) == 0 && len(t.Errors) == 0) {
		t.Errors = append(t.Errors, "No Top file or master_tops data matches found. Please see master log for details.")
	}
	return t
}
