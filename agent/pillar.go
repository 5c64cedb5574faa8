package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/pillar"
	"github.com/brinehq/brine/state"
	"github.com/brinehq/brine/wire"
)

// Pillar returns the agent's pillar (modules.Env.Pillar). Only the
// master compiles pillar, for the id it authenticated, so refresh asks it
// (with the grains its top file targets match) and keeps the answer,
// which pillar.get reads until the next refresh. Without a master the
// pillar is the last one received, or empty. With file_client: local it
// is compiled here, from pillar_roots, on first use and at each refresh.
func (a *Agent) Pillar(ctx context.Context, refresh bool) (map[string]any, error) {
	cfg := a.config()
	if !refresh {
		if p := a.pillar.Load(); p != nil {
			return p.data, nil
		}
		if !cfg.Local() {
			return map[string]any{}, nil
		}
		// compiled on first use: a masterless salt-call compiles its
		// pillar as it starts
	}
	if cfg.Local() {
		return a.localPillar(ctx, cfg)
	}
	req := wire.PillarRequest{Grains: a.Grains()}
	if tree := cfg.Tree; tree != nil {
		var env struct {
			Saltenv   string `yaml:"saltenv"`
			Pillarenv string `yaml:"pillarenv"`
		}
		_ = tree.DecodeAll(&env)
		req.Saltenv, req.Pillarenv = env.Saltenv, env.Pillarenv
	}
	var raw json.RawMessage
	if err := (masterCaller{a}).Call(ctx, wire.MethodPillar, req, &raw); err != nil {
		return nil, err
	}
	p, err := decodePillar(raw)
	if err != nil {
		return nil, err
	}
	a.pillar.Store(p)
	return maps.Clone(p.data), nil
}

// localPillar compiles the pillar from the agent's own pillar_roots, as a
// masterless salt-minion does: the same compiler as the master's, with
// the agent's grains, opts and execution functions (Salt's __salt__ is
// the minion's there).
func (a *Agent) localPillar(ctx context.Context, cfg *Loaded) (map[string]any, error) {
	_, roots := cfg.LocalRoots()
	opts := a.Opts()
	groups, _ := opts["nodegroups"].(map[string]any)
	pillarenv, _ := opts["pillarenv"].(string)
	// salt['pillar.get'] reads the pillar kept from before, its
	// mappings in the order that was written
	salt := jinja.Salt(a.funcs.Names(), jinja.PillarOrdered(func(name string, args []any, kwargs map[string]any) (any, error) {
		return a.funcs.Call(ctx, name, args, kwargs, nil)
	}, a.PillarOrder()))
	data, order, errs := pillar.Compile(ctx, state.NewRenderer(), pillar.Request{ID: a.id, Grains: a.Grains(),
		Roots: state.Roots(roots), Pillarenv: pillarenv, Nodegroups: groups, Opts: opts, Salt: salt})
	if len(errs) > 0 {
		a.log.Error("pillar did not compile", "errors", len(errs), "first", errs[0])
		pillar.Errors(data, errs)
	}
	a.pillar.Store(&keptPillar{data: data, order: order})
	return maps.Clone(data), nil
}

// PillarOrder is the key order of the pillar Pillar last returned, as
// the master wrote it (modules.Env.PillarOrder); nil before the first.
func (a *Agent) PillarOrder() *keyorder.Order {
	if p := a.pillar.Load(); p != nil {
		return p.order
	}
	return nil
}

// keptPillar is the pillar the master last sent and its key order, kept
// together so that a refresh replaces both at once.
type keptPillar struct {
	data  map[string]any
	order *keyorder.Order
}

// decodePillar reads the master's answer keeping integers integers: a
// pillar's port: 8000 must render as 8000 in a template, as Salt's does,
// not as the 8000.0 a float64 gives. It reads it a second time for its
// objects' key order (the master writes them as the pillar's SLS did),
// which templates iterate in, as Salt's dicts keep it.
func decodePillar(raw []byte) (*keptPillar, error) {
	p := map[string]any{}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return &keptPillar{data: p}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("the master's pillar: %w", err)
	}
	bus.Numbers(p)
	order, err := keyorder.ReadJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("the master's pillar: %w", err)
	}
	return &keptPillar{data: p, order: order}, nil
}
