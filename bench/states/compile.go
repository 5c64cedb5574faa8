package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/brinehq/brine/agent"
	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
	"github.com/brinehq/brine/target"
)

// engine compiles the tree with the state engine alone, in this process:
// the SLS files read from the file roots directly (state.Roots), the
// Jinja context the agent's state module gives (its grains, pillar, opts
// and salt functions), no master, no network.
type engine struct {
	compiler *state.Compiler
	match    state.Matcher
}

// newEngine builds the compiler as modules/state builds it for a state
// run, with the agent's own grains, opts and functions and its pillar
// (compiled by the master, in the key order it sent). The renderer is shared by every compile, as
// the agent's is by every run.
func newEngine(ctx context.Context, a *agent.Agent, fileRoot string, pillar map[string]any) *engine {
	grains, opts := a.Grains(), a.Opts()
	pctx := modules.WithPillar(ctx, pillar)
	order := a.PillarOrder()
	salt := jinja.Salt(a.Functions().Names(), jinja.PillarOrdered(func(name string, args []any, kwargs map[string]any) (any, error) {
		return a.Functions().Call(pctx, name, args, kwargs, nil)
	}, order))
	tpillar := jinja.OrderedBy(pillar, order)
	c := &state.Compiler{Renderer: state.NewRenderer(), Source: state.Roots{"base": {fileRoot}},
		Vars: func(saltenv string) map[string]any {
			return map[string]any{"grains": grains, "pillar": tpillar, "opts": opts, "salt": salt, "saltenv": saltenv}
		}}
	facts := target.Facts{ID: a.ID(), Grains: grains, Pillar: pillar}
	match := func(tgt, tgtType string) (bool, error) {
		if tgtType == "" {
			tgtType = "glob"
		}
		t, err := target.ParseWith(tgt, tgtType, target.Options{Pillar: true})
		if err != nil {
			return false, err
		}
		return t.Match(facts), nil
	}
	return &engine{compiler: c, match: match}
}

// engineRun is one compile of the highstate, timed by step.
type engineRun struct {
	// TopMs renders top.sls and matches its targets; RenderMs renders
	// and parses the SLS files into high data (CompileEnvs); ChunksMs
	// makes the ordered low chunks with their requisites resolved
	// (High.Chunks). TotalMs is the three.
	TopMs    float64 `json:"top_ms"`
	RenderMs float64 `json:"render_ms"`
	ChunksMs float64 `json:"chunks_ms"`
	TotalMs  float64 `json:"total_ms"`
	Chunks   int     `json:"chunks"`
}

// compile runs the highstate's compile once: what state.show_lowstate
// and state.highstate do before running anything.
func (e *engine) compile(ctx context.Context) (engineRun, error) {
	var r engineRun
	t0 := time.Now()
	top := e.compiler.Top(ctx, "", e.match)
	t1 := time.Now()
	if len(top.Errors) > 0 {
		return r, fmt.Errorf("top: %s", strings.Join(top.Errors, "; "))
	}
	h := e.compiler.CompileEnvs(ctx, top.Mods, top.Envs)
	t2 := time.Now()
	chunks := h.Chunks()
	t3 := time.Now()
	if len(h.Errors) > 0 {
		return r, fmt.Errorf("compile: %s", strings.Join(h.Errors, "; "))
	}
	r = engineRun{TopMs: ms(t1.Sub(t0)), RenderMs: ms(t2.Sub(t1)), ChunksMs: ms(t3.Sub(t2)), TotalMs: ms(t3.Sub(t0)), Chunks: len(chunks)}
	return r, nil
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return report.Round(float64(d)/float64(time.Millisecond), 3) }
