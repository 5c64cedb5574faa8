package agent

import (
	"context"
	"maps"

	"github.com/brinehq/brine/agent/proto"
)

// Pillar returns the agent's pillar (modules.Env.Pillar). Only the
// master compiles pillar, for the id it authenticated, so refresh asks it
// (with the grains its top file targets match) and keeps the answer,
// which pillar.get reads until the next refresh. Without a master the
// pillar is the last one received, or empty.
func (a *Agent) Pillar(ctx context.Context, refresh bool) (map[string]any, error) {
	if !refresh {
		if p := a.pillar.Load(); p != nil {
			return *p, nil
		}
		return map[string]any{}, nil
	}
	cfg := a.config()
	req := proto.PillarRequest{Grains: a.Grains()}
	if tree := cfg.Tree; tree != nil {
		var env struct {
			Saltenv   string `yaml:"saltenv"`
			Pillarenv string `yaml:"pillarenv"`
		}
		_ = tree.DecodeAll(&env)
		req.Saltenv, req.Pillarenv = env.Saltenv, env.Pillarenv
	}
	var p map[string]any
	if err := (masterCaller{a}).Call(ctx, proto.MethodPillar, req, &p); err != nil {
		return nil, err
	}
	if p == nil {
		p = map[string]any{}
	}
	a.pillar.Store(&p)
	return maps.Clone(p), nil
}
