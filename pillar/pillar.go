// Package pillar compiles one minion's pillar as Salt does: the pillar top
// files of pillar_roots matched against the minion (its id, grains and the
// nodegroups), each SLS they name rendered with grains, opts and salt, and
// merged in order. The master compiles its agents' pillar with it, for the
// id their key authenticated; an agent that runs masterless (file_client:
// local, `brine call --local`) compiles its own from its own pillar_roots,
// as salt-call --local does. One compiler for both is what keeps a
// masterless run (a Packer image, a CI job) and a mastered one of the same
// tree the same.
package pillar

import (
	"context"
	"fmt"

	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/state"
	"github.com/brinehq/brine/target"
)

// Request is what one compilation needs.
type Request struct {
	// ID is the minion's id, as its key was accepted (or its own, masterless).
	ID string
	// Grains are the minion's grains; top file targets match them.
	Grains map[string]any
	// Roots are pillar_roots; Pillarenv, when it names one of them, is
	// the only environment read (Salt's pillarenv).
	Roots     state.Roots
	Pillarenv string
	// Nodegroups are the nodegroups top file targets may name (N@).
	Nodegroups map[string]any
	// Opts is the templates' opts (default: {"id": ID}).
	Opts map[string]any
	// Salt is the templates' salt (default: grains.get over Grains, all a
	// master knows of a minion's functions).
	Salt map[string]any
}

// Compile compiles the pillar req describes. Errors are returned beside
// what did compile (Salt puts them under `_errors`), with the key order of
// the pillar as its SLS files wrote it (templates iterate it in that order).
func Compile(ctx context.Context, r *state.Renderer, req Request) (map[string]any, *keyorder.Order, []string) {
	roots := req.Roots
	if req.Pillarenv != "" {
		if dirs, ok := roots[req.Pillarenv]; ok {
			roots = state.Roots{req.Pillarenv: dirs}
		}
	}
	grains := req.Grains
	if grains == nil {
		grains = map[string]any{}
	}
	facts := target.Facts{ID: req.ID, Grains: grains}
	match := func(tgt, tgtType string) (bool, error) {
		t, err := target.ParseWith(tgt, tgtType, target.Options{Nodegroups: req.Nodegroups})
		if err != nil {
			return false, err
		}
		return t.Match(facts), nil
	}
	opts := req.Opts
	if opts == nil {
		opts = map[string]any{"id": req.ID}
	}
	salt := req.Salt
	if salt == nil {
		salt = grainsGet(grains)
	}
	c := &state.Compiler{Renderer: r, Source: roots, Vars: func(saltenv string) map[string]any {
		return map[string]any{"grains": grains, "opts": opts, "salt": salt, "saltenv": saltenv}
	}}
	return c.PillarOrdered(ctx, match)
}

// grainsGet is a templates' salt holding grains.get over grains only: what
// the master can answer for a minion while compiling its pillar.
func grainsGet(grains map[string]any) map[string]any {
	return jinja.Salt([]string{"grains.get"}, func(_ string, args []any, _ map[string]any) (any, error) {
		if len(args) == 0 {
			return nil, fmt.Errorf("grains.get needs a key")
		}
		if v, ok := target.Traverse(grains, fmt.Sprint(args[0]), ":"); ok {
			return v, nil
		}
		if len(args) > 1 {
			return args[1], nil
		}
		return "", nil
	})
}

// Errors puts compile errors under `_errors`, as Salt's pillar does; the
// state functions refuse to run with them.
func Errors(p map[string]any, errs []string) {
	if len(errs) == 0 {
		return
	}
	list := make([]any, len(errs))
	for i, e := range errs {
		list[i] = e
	}
	p["_errors"] = list
}
