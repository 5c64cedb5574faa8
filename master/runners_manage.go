package master

import (
	"context"
	"errors"
	"slices"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/keys"
)

// manageFuncs are Salt's manage runner functions, answered from the
// agents' connections (Salt pings them with test.ping; a brine master knows).
func (r runners) manageFuncs() []function.Func {
	status := func(ctx context.Context) (up, down []string, err error) {
		l, err := r.m.keys.List(ctx, keys.Accepted)
		if err != nil {
			return nil, nil, err
		}
		conn := r.m.connected(ctx)
		for _, id := range l[keys.ListName(keys.Accepted)] {
			if slices.Contains(conn, id) {
				up = append(up, id)
			} else {
				down = append(down, id)
			}
		}
		return nonNil(up), nonNil(down), nil
	}
	return []function.Func{
		{Name: "manage.up", Doc: "Agents with an accepted key that are connected.", ReadOnly: true,
			Run: func(ctx context.Context, _ *function.Input) (any, error) { up, _, err := status(ctx); return up, err }},
		{
			Name: "manage.down", Doc: "Agents with an accepted key that are not connected; removekeys=True deletes their keys.",
			Params: []function.Param{{Name: "removekeys", Kind: function.Bool, Default: false}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				_, down, err := status(ctx)
				if err != nil || !in.Bool("removekeys") {
					return down, err
				}
				for _, id := range down {
					if _, err := r.m.keys.Delete(ctx, id); err != nil {
						return down, err
					}
				}
				return down, nil
			},
		},
		{Name: "manage.status", Doc: "{up: [...], down: [...]} of the agents with an accepted key.", ReadOnly: true,
			Run: func(ctx context.Context, _ *function.Input) (any, error) {
				up, down, err := status(ctx)
				return map[string]any{"up": up, "down": down}, err
			}},
		{Name: "manage.cluster", Doc: "The masters sharing this bus, the event stream's leader and replicas (lag), and the leases held.",
			ReadOnly: true, Run: func(ctx context.Context, _ *function.Input) (any, error) { return r.m.clusterStatus(ctx), nil }},
		{Name: "minions.connected", Doc: "The ids of the connected agents (Salt's wheel minions.connected).", ReadOnly: true, Wheel: true,
			Run: func(ctx context.Context, _ *function.Input) (any, error) { return nonNil(r.m.connected(ctx)), nil }},
		{Name: "config.values", Doc: "The master's configuration as its files set it, secrets masked (Salt's wheel config.values).",
			ReadOnly: true, Wheel: true, Run: r.configValues},
		{Name: "manage.present", Doc: "Connected agents (Salt's presence).", ReadOnly: true,
			Run: func(ctx context.Context, _ *function.Input) (any, error) { return nonNil(r.m.connected(ctx)), nil }},
		{Name: "manage.not_present", Doc: "Agents with an accepted key that are not connected.", ReadOnly: true,
			Run: func(ctx context.Context, _ *function.Input) (any, error) {
				_, down, err := status(ctx)
				return down, err
			}},
	}
}

// manageStateFuncs are Salt's manage runner's presence lists beyond
// manage.present and manage.not_present: list_state and list_not_state,
// and the names Salt gives the same two lists with ZeroMQ (joined,
// allowed, alived, reaped and their not_ forms), each limited to subset.
func (r runners) manageStateFuncs() []function.Func {
	params := []function.Param{{Name: "subset", Kind: function.List}, {Name: "show_ip", Kind: function.Bool, Default: false}}
	list := func(of string) function.Handler {
		return func(ctx context.Context, in *function.Input) (any, error) {
			if in.Bool("show_ip") {
				return nil, errors.New("show_ip: brine does not list agents by address here; `brine mine get ID ips` has them")
			}
			got, err := r.m.funcs.Call(ctx, of, nil, nil, nil)
			if err != nil {
				return nil, err
			}
			ids, _ := got.([]string)
			subset := in.List("subset")
			out := []any{}
			for _, id := range ids {
				if subset == nil || slices.Contains(subset, any(id)) {
					out = append(out, id)
				}
			}
			return out, nil
		}
	}
	var fs []function.Func
	for _, name := range []string{"list_state", "joined", "allowed", "alived", "reaped"} {
		fs = append(fs,
			function.Func{Name: "manage." + name, ReadOnly: true, Params: params, Run: list("manage.present"),
				Doc: "The connected agents (of subset), as manage.present."},
			function.Func{Name: "manage." + notName(name), ReadOnly: true, Params: params, Run: list("manage.not_present"),
				Doc: "The agents with an accepted key that are not connected (of subset), as manage.not_present."})
	}
	return fs
}

func notName(name string) string {
	if name == "list_state" {
		return "list_not_state"
	}
	return "not_" + name
}

// configValues is wheel config.values: the configuration in force, as
// its files set it (Salt returns its defaults too; SaltGUI reads its
// saltgui_* options and nodegroups there), passwords and keys masked.
func (r runners) configValues(context.Context, *function.Input) (any, error) {
	v := map[string]any{}
	if err := r.m.cfg.DecodeAll(&v); err != nil {
		return nil, err
	}
	return jobs.Redact(v), nil
}
