package state

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/internal/keyorder"
)

// Pillar compiles an agent's pillar from the pillar roots the compiler's
// Source reads: the pillar top files matched for the agent, each SLS
// rendered (with the pillar compiled so far) and merged over the one
// before, their includes first. Errors are returned beside what did
// compile, as Salt puts them under `_errors`.
func (c *Compiler) Pillar(ctx context.Context, match Matcher) (map[string]any, []string) {
	pillar, _, errs := c.PillarOrdered(ctx, match)
	return pillar, errs
}

// PillarOrdered is Pillar with the key order of what it compiled: each
// mapping's keys as its SLS wrote them, a key a later SLS merges in after
// those already there, as Salt's dicts keep them. Formulas generate
// states in the order they iterate pillar mappings, so the master sends
// the pillar in this order (keyorder.MarshalJSON).
func (c *Compiler) PillarOrdered(ctx context.Context, match Matcher) (map[string]any, *keyorder.Order, []string) {
	pillar := map[string]any{}
	order := &keyorder.Order{Keys: []string{}}
	top := c.Top(ctx, "", match)
	errs := top.Errors
	if len(top.Mods) == 0 {
		// An agent no pillar top file names has an empty pillar, which
		// is not an error.
		return pillar, order, nil
	}
	cc := *c
	cc.Source = newMemo(c.Source)
	vars := cc.Vars
	cc.Vars = func(saltenv string) map[string]any {
		m := map[string]any{}
		if vars != nil {
			for k, v := range vars(saltenv) {
				m[k] = v
			}
		}
		m["pillar"] = pillar
		return m
	}
	done := map[string]bool{}
	for _, env := range top.Envs {
		for _, sls := range top.Mods[env] {
			errs = append(errs, cc.pillarSLS(ctx, pillar, &order, env, sls, "", done)...)
		}
	}
	return pillar, order, errs
}

func (c *Compiler) pillarSLS(ctx context.Context, pillar map[string]any, order **keyorder.Order, env, sls, via string, done map[string]bool) []string {
	if done[env+":"+sls] {
		return nil
	}
	done[env+":"+sls] = true
	file, text, err := c.slsFile(ctx, env, sls)
	if errors.Is(err, ErrNotFound) {
		if via != "" {
			return []string{fmt.Sprintf("Specified SLS '%s' in environment '%s' was not found (included from %s)", sls, env, via)}
		}
		return []string{fmt.Sprintf("Specified SLS '%s' in environment '%s' is not available on the salt master", sls, env)}
	}
	if err != nil {
		return []string{fmt.Sprintf("Unable to read pillar SLS %s: %v", sls, err)}
	}
	vars := c.Vars(env)
	for k, v := range slsContext(file, sls) {
		vars[k] = v
	}
	vars["saltenv"] = env
	data, err := c.Renderer.RenderSLS(ctx, c.Source, env, file, text, vars)
	if err != nil {
		return []string{"Rendering pillar " + strings.TrimPrefix(err.Error(), "Rendering ")}
	}
	var errs []string
	for _, item := range data {
		if fmt.Sprint(item.Key) != "include" {
			continue
		}
		for _, inc := range asList(toPlain(item.Value)) {
			name := ""
			switch inc := inc.(type) {
			case string:
				name = inc
			case map[string]any:
				for k := range inc {
					name = k
				}
			}
			if strings.HasPrefix(name, ".") {
				name = relativeSLS(sls, name, strings.HasSuffix(file, "/init.sls"))
			}
			if name != "" {
				errs = append(errs, c.pillarSLS(ctx, pillar, order, env, name, sls, done)...)
			}
		}
	}
	written := make(yaml.MapSlice, 0, len(data))
	for _, item := range data {
		key := fmt.Sprint(item.Key)
		if key == "include" {
			continue
		}
		pillar[key] = Merge(pillar[key], toPlain(item.Value))
		written = append(written, item)
	}
	*order = keyorder.Merged(*order, keyorder.Of(written))
	return errs
}

// Merge is Salt's recursive dictionary update: a mapping merges into a
// mapping key by key; anything else replaces what was there.
func Merge(dst, src any) any {
	d, ok1 := dst.(map[string]any)
	s, ok2 := src.(map[string]any)
	if !ok1 || !ok2 {
		return src
	}
	out := make(map[string]any, len(d)+len(s))
	for k, v := range d {
		out[k] = v
	}
	for k, v := range s {
		out[k] = Merge(out[k], v)
	}
	return out
}
