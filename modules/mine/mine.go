// Package mine is Salt's mine execution module on the agent: mine.update
// runs the mine functions now, mine.send stores one function's return,
// mine.get asks the master for other agents' data and mine.delete removes
// a function's data. The agent owns what its record holds; the master
// answers mine.get from every record, as Salt's.
package mine

import (
	"context"
	"errors"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// Module declares the mine functions.
func Module(env *modules.Env) []function.Func {
	u := env.Mine
	return []function.Func{
		{Name: "mine.update", Doc: "Run the mine functions now and send their returns to the master.",
			Params: []function.Param{{Name: "clear", Kind: function.Bool, Default: false}},
			Run: func(ctx context.Context, _ *function.Input) (any, error) {
				return true, u.UpdateMine(ctx)
			}},
		{
			Name: "mine.send", Doc: "Run func with its arguments and store its return in the mine under func (or mine_function=… under the name given).",
			Params:  []function.Param{{Name: "name", Kind: function.String, Required: true, Aliases: []string{"func"}}},
			VarArgs: true, VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				name, fun := in.String("name"), in.String("name")
				kw := map[string]any{}
				for k, v := range in.ExtraKwargs {
					if strings.HasPrefix(k, "__pub_") {
						continue
					}
					kw[k] = v
				}
				if f, ok := kw["mine_function"].(string); ok {
					fun = f
					delete(kw, "mine_function")
				}
				v, err := env.Functions.Call(ctx, fun, in.Extra, kw, nil)
				if err != nil {
					return nil, err
				}
				return true, u.SendMine(ctx, name, v)
			},
		},
		{
			Name: "mine.get", Doc: "The mine data of fun on the agents tgt selects, from the master: {id: value}.", ReadOnly: true,
			Params: []function.Param{
				{Name: "tgt", Kind: function.String, Required: true},
				{Name: "fun", Kind: function.String, Required: true},
				{Name: "tgt_type", Kind: function.String, Default: "glob", Aliases: []string{"expr_form"}},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if masterless(env) {
					// Salt's masterless mine.get (file_client: local) answers
					// from the minion's own mine cache, which mine.update and
					// mine.send fill there; brine's mine is kept on the
					// master only, so a masterless agent's holds nothing: {}.
					return map[string]any{}, nil
				}
				if env.Master == nil {
					return nil, errors.New("mine.get needs a master")
				}
				return env.Master.MineGet(ctx, in.String("tgt"), in.String("fun"), in.String("tgt_type"))
			},
		},
		{Name: "mine.delete", Doc: "Remove fun's data from this agent's mine record.",
			Params: []function.Param{{Name: "fun", Kind: function.String, Required: true}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return true, u.SendMine(ctx, in.String("fun"), nil)
			}},
	}
}

// masterless says whether the agent is configured as Salt's masterless
// minion (file_client: local).
func masterless(env *modules.Env) bool {
	if env.Opts == nil {
		return false
	}
	fc, _ := env.Opts()["file_client"].(string)
	return fc == "local"
}
