// Package event is Salt's event state module (salt/states/event.py): an
// SLS sends an event to the master while it runs (event.send), or when a
// watched state changed (event.wait and its mod_watch), so a reactor or an
// orchestration can follow a state run's progress. The sending itself is
// the event.send execution function's.
package event

import (
	"context"
	"maps"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// Module declares the event state functions.
func Module(env *modules.Env) []function.Func {
	sendParams := []function.Param{
		{Name: "name", Kind: function.String, Required: true},
		{Name: "data", Kind: function.Any},
		{Name: "preload", Kind: function.Map},
		{Name: "with_env", Kind: function.Any, Default: false},
		{Name: "with_grains", Kind: function.Any, Default: false},
		{Name: "with_pillar", Kind: function.Any, Default: false},
		{Name: "show_changed", Kind: function.Bool, Default: true},
	}
	send := func(ctx context.Context, in *function.Input) (any, error) { return sendEvent(ctx, env, in) }
	return []function.Func{
		{
			Name: "event.send", Doc: "Send an event tagged name to the master, with data and the extra keywords (as event.send).",
			Params: sendParams, VarKwargs: true, Run: send,
		},
		{
			Name: "event.fire_master", Doc: "Salt's alias of event.send.",
			Params: sendParams, VarKwargs: true, Run: send,
		},
		{
			Name: "event.wait", Doc: "Send the event only when a watched state changed (through event.mod_watch).",
			Params:    []function.Param{{Name: "name", Kind: function.String, Required: true}, {Name: "sfun", Kind: function.String}},
			VarKwargs: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return state.Succeeded(in.String("name"), "", nil), nil
			},
		},
		{
			Name: "event.mod_watch", Doc: "What a watch requisite runs: event.send with the state's arguments.",
			Params: sendParams, VarKwargs: true, Run: send,
		},
	}
}

// sendEvent is Salt's event.send state: the changes show the tag and data
// (unless show_changed is False), and the execution function sends it.
func sendEvent(ctx context.Context, env *modules.Env, in *function.Input) (state.Result, error) {
	name := in.String("name")
	var changes map[string]any
	if in.Bool("show_changed") {
		changes = map[string]any{"tag": name, "data": in.Value("data")}
	}
	if state.From(ctx).Test {
		return state.Pending(name, "Event would have been fired", changes), nil
	}
	// Only what the SLS set: the master's event.send (an orchestration's
	// step) takes tag and data alone.
	kwargs := map[string]any{"data": in.Value("data")}
	for _, k := range []string{"with_env", "with_grains", "with_pillar"} {
		if v := in.Value(k); v != nil && v != false {
			kwargs[k] = v
		}
	}
	if in.Has("preload") {
		kwargs["preload"] = in.Map("preload")
	}
	// The state system's own keys are not the event's.
	extra := maps.Clone(in.ExtraKwargs)
	delete(extra, "sfun")
	delete(extra, "__reqs__")
	maps.Copy(kwargs, extra)
	if env.Functions == nil {
		return state.Failed(name, "event.send is not available"), nil
	}
	ret, err := env.Functions.Call(ctx, "event.send", []any{name}, kwargs, nil)
	if err != nil {
		r := state.Failed(name, "%v", err)
		r.Changes = changes
		return r, nil
	}
	return state.Result{Name: name, Changes: changes, Result: state.Bool(py.Truth(ret)), Comment: "Event fired"}, nil
}
