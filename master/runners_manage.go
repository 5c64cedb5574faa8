package master

import (
	"context"
	"errors"
	"slices"

	"github.com/brinehq/brine/function"
)

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
