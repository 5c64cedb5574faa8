// Package event is Salt's event execution module on the agent: send and
// fire_master deliver an event to the master, which stamps it with the
// agent's authenticated id (Salt's `_minion_event`).
package event

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// Module declares the event functions.
func Module(env *modules.Env) []function.Func {
	return []function.Func{
		{
			Name: "event.send",
			Doc: "Send an event to the master: data (a mapping) plus with_grains (True or a list of grains), " +
				"with_env (True or a list of variables), with_env_opts and extra keywords, as Salt's event.send.",
			Params: []function.Param{
				{Name: "tag", Kind: function.String, Required: true},
				{Name: "data", Kind: function.Any},
				{Name: "preload", Kind: function.Map},
				{Name: "with_env", Kind: function.Any, Default: false},
				{Name: "with_grains", Kind: function.Any, Default: false},
				{Name: "with_pillar", Kind: function.Any, Default: false},
				{Name: "with_env_opts", Kind: function.Bool, Default: false},
			},
			VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				data, err := Payload(ctx, env, in)
				if err != nil {
					return nil, err
				}
				return fire(ctx, env, in.String("tag"), data)
			},
		},
		{
			// Salt's event.fire goes to the minion's own bus; a brine
			// agent has none, and its reactions are the master's, so it
			// goes where they can see it.
			Name: "event.fire",
			Doc:  "Fire data (a mapping) under tag; brine's agents have no bus of their own, so it goes to the master's.",
			Params: []function.Param{
				{Name: "data", Kind: function.Map, Required: true},
				{Name: "tag", Kind: function.String, Required: true},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				data := in.Map("data")
				if data == nil {
					data = map[string]any{}
				}
				return fire(ctx, env, in.String("tag"), data)
			},
		},
		{
			Name: "event.fire_master",
			Doc:  "Send data (a mapping) to the master under tag.",
			Params: []function.Param{
				{Name: "data", Kind: function.Map, Required: true},
				{Name: "tag", Kind: function.String, Required: true},
				{Name: "preload", Kind: function.Map},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				data := maps.Clone(in.Map("preload"))
				if data == nil {
					data = map[string]any{}
				}
				maps.Copy(data, in.Map("data"))
				return fire(ctx, env, in.String("tag"), data)
			},
		},
	}
}

// Payload builds event.send's data as Salt does: the environment, grains
// and options asked for, then the extra keywords (which include the
// caller's __pub_* keys), then data, which wins.
func Payload(ctx context.Context, env *modules.Env, in *function.Input) (map[string]any, error) {
	out := map[string]any{}
	if v, err := selection("with_env", in.Value("with_env"), environ()); err != nil {
		return nil, err
	} else if v != nil {
		out["environ"] = v
	}
	if v, err := selection("with_grains", in.Value("with_grains"), env.Grains()); err != nil {
		return nil, err
	} else if v != nil {
		out["grains"] = v
	}
	own, err := modules.PillarOf(ctx, env)
	if err != nil {
		return nil, err
	}
	if v, err := selection("with_pillar", in.Value("with_pillar"), own); err != nil {
		return nil, err
	} else if v != nil {
		out["pillar"] = v
	}
	if in.Bool("with_env_opts") {
		out["saltenv"] = "base"
		out["pillarenv"] = nil
	}
	maps.Copy(out, in.ExtraKwargs)
	switch d := in.Value("data").(type) {
	case nil:
	case map[string]any:
		maps.Copy(out, d)
	case string:
		if strings.TrimSpace(d) != "" {
			return nil, fmt.Errorf("event.send: data must be a mapping, got the string %q (quote JSON as one argument: '{\"key\": \"value\"}')", d)
		}
	default:
		return nil, fmt.Errorf("event.send: data must be a mapping, got %T", d)
	}
	return out, nil
}

// environ is the process environment as a mapping.
func environ() map[string]any {
	out := map[string]any{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// selection reads a with_* argument: true is all of from, a list is the
// named keys of it, false or absent is nothing (nil).
func selection(name string, v any, from map[string]any) (map[string]any, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if !t {
			return nil, nil
		}
		return maps.Clone(from), nil
	case []any:
		out := map[string]any{}
		for _, k := range t {
			key, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("event.send: %s: names must be strings, got %T", name, k)
			}
			if val, ok := from[key]; ok {
				out[key] = val
			}
		}
		return out, nil
	}
	return nil, errors.New("event.send: " + name + " must be True, False or a list of names")
}

// fire sends an event to the master: True once it is queued, False in a
// masterless run, as Salt's event.send and fire_master answer there (with
// a warning saying the event was not sent).
func fire(ctx context.Context, env *modules.Env, tag string, data map[string]any) (any, error) {
	err := env.FireMaster(ctx, tag, data)
	if errors.Is(err, modules.ErrMasterless) {
		if env.Log != nil {
			env.Log.Warn("Local mode detected. Event will NOT be sent.", "tag", tag)
		}
		return false, nil
	}
	if err != nil {
		return nil, err
	}
	return true, nil
}
