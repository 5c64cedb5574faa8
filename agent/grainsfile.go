package agent

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/internal/atomicfile"
)

// grainsFile is Salt's <config dir>/grains: grains set by grains.setval
// and grains.append, kept across restarts. Grains of the configuration's
// grains: key win over it, as in Salt.
const grainsFile = "grains"

// staticGrains are the grains file's grains under the configuration's.
func (a *Agent) staticGrains(cfg *Loaded) map[string]any {
	out := map[string]any{}
	if b, err := os.ReadFile(filepath.Join(cfg.Dir, grainsFile)); err == nil {
		if err := yaml.Unmarshal(b, &out); err != nil {
			a.log.Error("grains file ignored", "file", filepath.Join(cfg.Dir, grainsFile), "err", err)
			out = map[string]any{}
		}
	}
	maps.Copy(out, cfg.Grains)
	return out
}

// SetGrains writes grains to the grains file, gathers the grains again
// and sends them to the master when connected (so that targeting sees
// them at once); it returns the grains set.
func (a *Agent) SetGrains(ctx context.Context, set map[string]any) (map[string]any, error) {
	cfg := a.config()
	path := filepath.Join(cfg.Dir, grainsFile)
	cur := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := yaml.Unmarshal(b, &cur); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	maps.Copy(cur, set)
	b, err := yaml.Marshal(cur)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteBytes(path, b, 0o644); err != nil {
		return nil, err
	}
	for k := range set {
		if _, ok := cfg.Grains[k]; ok {
			a.log.Warn("grain set in the grains file but the configuration's grains: key sets it too, and wins", "grain", k)
		}
	}
	if a.grainsChanged() && a.cli.Load() != nil {
		if err := a.UpdateMine(ctx); err != nil {
			a.log.Warn("new grains not sent yet; they go with the next mine update", "err", err)
		}
	}
	return set, nil
}
