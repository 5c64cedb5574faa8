package master

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/pillar"
	"github.com/brinehq/brine/state"
	"github.com/brinehq/brine/wire"
)

// PillarKeys are the master configuration keys pillar reads.
var PillarKeys = []string{"pillar_roots"}

// pillars compiles agents' pillar: Salt's pillar_roots, a top file
// matched against the asking agent, SLS rendered on the master. An
// agent's pillar is compiled for the id the gateway authenticated and
// sent only to it: no request can name another agent.
type pillars struct {
	renderer *state.Renderer
	log      *slog.Logger
	// nodegroups are the master's nodegroups in force (N@ in a top file).
	nodegroups func() map[string]any

	mu    sync.Mutex
	roots state.Roots
	// last is each agent's pillar as last compiled (agents ask at every
	// connection and state run), which pillar targets (-I, I@) match.
	last map[string]map[string]any
}

// of returns agent id's pillar as last compiled, nil when unknown.
func (p *pillars) of(id string) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last[id]
}

func newPillars(log *slog.Logger, nodegroups func() map[string]any) *pillars {
	return &pillars{renderer: state.NewRenderer(), log: log, nodegroups: nodegroups, last: map[string]map[string]any{}}
}

// configure reads pillar_roots (default: base /srv/pillar).
func (p *pillars) configure(c *config.Master) error {
	roots := map[string][]string{}
	if err := c.Decode("pillar_roots", &roots); err != nil {
		return err
	}
	if len(roots) == 0 {
		roots = map[string][]string{"base": {"/srv/pillar"}}
	}
	p.mu.Lock()
	p.roots = state.Roots(roots)
	p.mu.Unlock()
	return nil
}

// compile compiles id's pillar with the grains it reported and keeps it
// as that agent's (pillar targets match it). Errors are kept under
// _errors, as Salt does, and logged without the pillar.
//
// The key order of what compiled is returned beside it: the agent's
// templates iterate pillar mappings in the order they were written, as
// Salt's do.
func (p *pillars) compile(ctx context.Context, id string, req wire.PillarRequest) (map[string]any, *keyorder.Order) {
	pl, order, errs := p.compileFor(ctx, id, req.Grains, req.Pillarenv)
	if len(errs) > 0 {
		p.log.Error("pillar did not compile", "agent", id, "errors", len(errs), "first", errs[0])
		pillar.Errors(pl, errs)
	}
	p.mu.Lock()
	p.last[id] = pl
	p.mu.Unlock()
	return pl, order
}

// compileFor compiles id's pillar from pillar_roots with grains and the
// master's nodegroups, keeping nothing: an agent's (compile),
// pillar.show_pillar's and the master's own (ofMaster).
func (p *pillars) compileFor(ctx context.Context, id string, grains map[string]any, pillarenv string) (map[string]any, *keyorder.Order, []string) {
	p.mu.Lock()
	roots := p.roots
	p.mu.Unlock()
	return pillar.Compile(ctx, p.renderer, pillar.Request{ID: id, Grains: grains, Roots: roots, Pillarenv: pillarenv, Nodegroups: p.nodegroups()})
}

// ofMaster is the master's own pillar, pillar_roots compiled for id
// (<id>_master) with the grains {id}: what orchestrations and the
// master's pillar.* functions read; an error when it does not compile.
func (p *pillars) ofMaster(ctx context.Context, id string) (map[string]any, *keyorder.Order, error) {
	pl, order, errs := p.compileFor(ctx, id, map[string]any{"id": id}, "")
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("the master's pillar did not compile: %s", strings.Join(errs, "; "))
	}
	return pl, order, nil
}

// serve answers an agent's pillar request: compiled for the id its key
// was accepted under (no request can name another agent), sent to it
// alone.
func (p *pillars) serve(ctx context.Context, id string, body json.RawMessage) (any, error) {
	var req wire.PillarRequest
	if err := readBody("pillar request", body, &req); err != nil {
		return nil, err
	}
	// the same JSON as the map's, with each object's keys in the order
	// written: agents that read it into maps see no change, those that
	// look (keyorder.ReadJSON) keep Salt's order
	pillar, order := p.compile(ctx, id, req)
	b, err := keyorder.MarshalJSON(pillar, order)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}
