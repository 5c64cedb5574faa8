// Package saltutil is Salt's saltutil execution module, the part of it that
// looks after the agent's own jobs: what runs (running, find_job,
// is_running) and ending a job (kill_job, term_job, signal_job). The
// master's `brine exec` asks agents whether a job still runs without a
// job of its own; these functions are the same answers for people. The
// sync_* functions answer as Salt's do when there is nothing to sync
// (sync.go).
package saltutil

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// Module declares the saltutil functions.
func Module(env *modules.Env) []function.Func {
	jid := []function.Param{{Name: "jid", Kind: function.String, Required: true}}
	find := func(id string) map[string]any {
		for _, j := range env.Jobs.Running() {
			if j["jid"] == id {
				return j
			}
		}
		return map[string]any{}
	}
	signal := func(kill bool) function.Handler {
		return func(_ context.Context, in *function.Input) (any, error) {
			id := in.String("jid")
			if !env.Jobs.Signal(id, kill) {
				return nil, fmt.Errorf("no job %s runs on %s", id, env.ID)
			}
			if kill {
				return fmt.Sprintf("Signal 9 sent to job %s", id), nil
			}
			return fmt.Sprintf("Signal 15 sent to job %s", id), nil
		}
	}
	return append([]function.Func{
		{Name: "saltutil.refresh_pillar", Doc: "Ask the master for this agent's pillar again and keep it (pillar.get reads it); True.",
			VarKwargs: true,
			Run: func(ctx context.Context, _ *function.Input) (any, error) {
				if env.Pillar == nil {
					return false, fmt.Errorf("no master to compile the pillar")
				}
				if _, err := env.Pillar(ctx, true); err != nil {
					return false, err
				}
				return true, nil
			}},
		{Name: "saltutil.refresh_grains", Doc: "Gather the core grains again now (the master gets them with the mine report sent at once); " +
			"refresh_pillar (default True) asks for the pillar again too, as Salt's. True.",
			Params: []function.Param{{Name: "refresh_pillar", Kind: function.Bool, Default: true},
				{Name: "clean_pillar_cache", Kind: function.Bool, Default: false}}, VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if env.RefreshGrains != nil {
					env.RefreshGrains(ctx)
				}
				// Salt answers True whatever the pillar refresh it asks
				// for does; so does brine, saying why it failed
				if in.Bool("refresh_pillar") && env.Pillar != nil {
					if _, err := env.Pillar(ctx, true); err != nil && env.Log != nil {
						env.Log.Warn("saltutil.refresh_grains: the pillar was not refreshed", "err", err)
					}
				}
				return true, nil
			}},
		{Name: "saltutil.running", Doc: "The other jobs running on this agent: their jid, fun, arg, pid, tgt, tgt_type and user.", ReadOnly: true,
			// Salt leaves out the job asking (its own process).
			VarKwargs: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				self, _ := in.ExtraKwargs["__pub_jid"].(string)
				out := []any{}
				for _, j := range env.Jobs.Running() {
					if j["jid"] != self {
						out = append(out, j)
					}
				}
				return out, nil
			}},
		{Name: "saltutil.find_job", Doc: "The data of job jid if it runs here, else {}.", Params: jid, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) { return find(in.String("jid")), nil }},
		{Name: "saltutil.is_running", Doc: "The running jobs whose function matches fun (a glob).", ReadOnly: true,
			Params: []function.Param{{Name: "fun", Kind: function.String, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				var out []any
				for _, j := range env.Jobs.Running() {
					if f, _ := j["fun"].(string); f != "" {
						if ok, err := path.Match(in.String("fun"), f); err == nil && ok {
							out = append(out, j)
						}
					}
				}
				if out == nil {
					out = []any{}
				}
				return out, nil
			}},
		{Name: "saltutil.kill_job", Doc: "Kill job jid: the function is cancelled, its commands get SIGTERM then SIGKILL 3 s later; its return says it was killed.", Params: jid, Run: signal(true)},
		{Name: "saltutil.term_job", Doc: "Terminate job jid: the function is cancelled, its commands get SIGTERM (SIGKILL 3 s later); its return says so.", Params: jid, Run: signal(false)},
		{
			Name: "saltutil.signal_job", Doc: "Send signal (9 or 15) to job jid.",
			Params: []function.Param{{Name: "jid", Kind: function.String, Required: true}, {Name: "sig", Kind: function.Int, Required: true}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				switch in.Int("sig") {
				case 9:
					return signal(true)(ctx, in)
				case 15:
					return signal(false)(ctx, in)
				}
				return nil, errors.New("sig: brine ends jobs with 9 (kill) or 15 (term)")
			},
		},
	}, syncFuncs(env)...)
}
