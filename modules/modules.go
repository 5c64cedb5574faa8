// Package modules is the home of the agent's execution modules, Salt's
// salt/modules: each subpackage is one module (network, grains, event,
// test, …) with the same shape, a Module that declares its functions
// against the agent's Env, and agent/modules.go lists them one line each.
//
// Execution functions are declared with the same function.Func as the
// master's runner functions, so arguments from a command line, a job or a
// reaction are bound and checked by one piece of code on both sides.
package modules

import (
	"context"
	"log/slog"

	"github.com/brinehq/brine/function"
)

// Module declares one execution module's functions for an agent.
type Module func(*Env) []function.Func

// Env is what execution functions may use of the agent running them. It is
// defined here, by its consumers, so that modules never import the agent.
type Env struct {
	// ID is the agent's id (Salt's opts['id']).
	ID string
	// Grains returns the agent's current grains (never nil).
	Grains func() map[string]any
	// FireMaster sends an event to the master (Salt's fire_master): the
	// master stamps it with the id it authenticated. The event is queued
	// on disk while the master is away, so an error means it was not kept.
	FireMaster func(ctx context.Context, tag string, data map[string]any) error
	// Version is the agent's version string.
	Version string
	// Log is the agent's logger.
	Log *slog.Logger
}

// Registry returns a function registry holding every function of mods.
func Registry(env *Env, mods ...Module) (*function.Registry, error) {
	reg := function.New()
	for _, m := range mods {
		if err := reg.RegisterAll(m(env)); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
