// Package saltmod is Salt's salt state module (salt/states/saltmod.py):
// the steps of an orchestration, run by the master's state system —
// salt.function and salt.state publish jobs to agents and wait for their
// returns, salt.runner and salt.wheel call the master's own functions.
// Results, changes and comments are Salt's, so an orchestration's return
// reads as Salt's does.
package saltmod

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/output"
	"github.com/brinehq/brine/state"
)

// Minions publishes a job to the agents a target selects and waits for
// their returns (the master's publisher). wait is how long to wait for
// returns, extended while agents say the job still runs.
type Minions interface {
	RunJob(ctx context.Context, t jobs.Targeted, o bus.Origin, wait time.Duration) (jobs.Outcome, error)
	// Targets lists the agents a target selects (for batches).
	Targets(ctx context.Context, tgt any, tgtType string) ([]string, error)
}

// defaultTimeout is how long a step waits for returns when it says
// nothing: Salt's master timeout, extended while agents run the job.
const defaultTimeout = 5 * time.Second

// New returns the salt state module for a master whose agents m reaches.
func New(m Minions) modules.Module {
	return func(env *modules.Env) []function.Func {
		s := &steps{m: m, env: env}
		target := []function.Param{
			{Name: "tgt", Kind: function.Any, Required: true},
			{Name: "tgt_type", Kind: function.String, Default: "glob", Aliases: []string{"expr_form"}},
			{Name: "ret", Kind: function.String, Default: ""},
			{Name: "timeout", Kind: function.Number},
			{Name: "batch", Kind: function.Any},
			{Name: "expect_minions", Kind: function.Bool, Default: true},
			{Name: "fail_minions", Kind: function.Any},
			{Name: "kill_after", Kind: function.Number},
		}
		return []function.Func{
			{
				Name: "salt.function", Doc: "Run the execution function name on the agents tgt selects and wait for their returns.",
				Params: append([]function.Param{
					{Name: "name", Kind: function.String, Required: true},
					{Name: "arg", Kind: function.Any},
					{Name: "kwarg", Kind: function.Map},
					{Name: "fail_function", Kind: function.String},
				}, target...),
				Run: s.function,
			},
			{
				Name: "salt.state", Doc: "Apply sls (a name or list), the highstate (highstate: True) or top on the agents tgt selects.",
				Params: append([]function.Param{
					{Name: "name", Kind: function.String, Required: true},
					{Name: "sls", Kind: function.Any},
					{Name: "highstate", Kind: function.Bool, Default: false},
					{Name: "top", Kind: function.String},
					{Name: "pillar", Kind: function.Map},
					{Name: "pillarenv", Kind: function.String},
					{Name: "saltenv", Kind: function.String},
					{Name: "test", Kind: function.Any},
					{Name: "exclude", Kind: function.Any},
					{Name: "queue", Kind: function.Bool, Default: false},
					{Name: "concurrent", Kind: function.Bool, Default: false},
					{Name: "allow_fail", Kind: function.Int, Default: int64(0)},
				}, target...),
				Run: s.state,
			},
			{
				Name: "salt.runner", Doc: "Run the master's function name (a runner) with the other keywords as its arguments.",
				Params: []function.Param{{Name: "name", Kind: function.String, Required: true}}, VarKwargs: true,
				Run: s.master("Runner"),
			},
			{
				Name: "salt.wheel", Doc: "Run the master's wheel function name (key.accept…) with the other keywords as its arguments.",
				Params: []function.Param{{Name: "name", Kind: function.String, Required: true}}, VarKwargs: true,
				Run: s.master("Wheel"),
			},
		}
	}
}

type steps struct {
	m   Minions
	env *modules.Env
}

// origin is the origin of a step's job: the orchestration's job, whose
// new event is the cause.
func origin(ctx context.Context) (bus.Origin, string) {
	if r := jobs.RunOf(ctx); r != nil {
		return r.Origin, r.User
	}
	return bus.Origin{Source: "brine://orchestrate"}, "orchestrate"
}

// publish runs one job on the target of in and gives its outcome, by
// batches when batch is set (each batch waits for the one before).
func (s *steps) publish(ctx context.Context, in *function.Input, fun string, arg []any) (jobs.Outcome, error) {
	o, user := origin(ctx)
	wait := defaultTimeout
	if in.Has("timeout") {
		wait = time.Duration(in.Float("timeout") * float64(time.Second))
	}
	t := jobs.Targeted{JID: jobs.NewJID(), Fun: fun, Arg: arg, Tgt: in.Value("tgt"), TgtType: in.String("tgt_type"),
		User: user, Ret: in.String("ret"), KillAfter: in.Float("kill_after")}
	if r := jobs.RunOf(ctx); r != nil {
		t.Metadata = map[string]any{"orchestration_jid": r.JID}
	}
	if s.env.Log != nil {
		s.env.Log.Debug("orchestration step publishes a job", "jid", t.JID, "fun", fun, "tgt", jobs.TargetText(t.Tgt), "tgt_type", t.TgtType)
	}
	batch := fmt.Sprint(in.Value("batch"))
	if in.Value("batch") == nil || batch == "" {
		return s.m.RunJob(ctx, t, o, wait)
	}
	// A batch is a job on the next N agents, started when the one before
	// ended (Salt rolls: it starts one as each returns).
	ids, err := s.m.Targets(ctx, t.Tgt, t.TgtType)
	if err != nil {
		return jobs.Outcome{}, err
	}
	size, err := jobs.BatchSize(batch, len(ids))
	if err != nil {
		return jobs.Outcome{}, err
	}
	all := jobs.Outcome{Returns: map[string]jobs.Return{}}
	for start := 0; start < len(ids); start += size {
		part := ids[start:min(start+size, len(ids))]
		bt := t
		bt.JID, bt.Tgt, bt.TgtType = jobs.NewJID(), py.List(part), "list"
		out, err := s.m.RunJob(ctx, bt, o, wait)
		all.Minions = append(all.Minions, out.Minions...)
		all.NotConnected = append(all.NotConnected, out.NotConnected...)
		all.NoResponse = append(all.NoResponse, out.NoResponse...)
		maps.Copy(all.Returns, out.Returns)
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

// failMinions reads fail_minions: ids whose failure does not fail the
// step (a list or a comma-separated string).
func failMinions(v any) []string {
	var out []string
	switch v := v.(type) {
	case string:
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	case []any:
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

func (s *steps) function(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	tgt := jobs.TargetText(in.Value("tgt"))
	if state.From(ctx).Test {
		return state.Result{Name: name, Comment: fmt.Sprintf("Function %s would be executed on target %s", name, tgt)}, nil
	}
	args := listArg(in.Value("arg"))
	out, err := s.publish(ctx, in, name, jobs.PackArgs(args, in.Map("kwarg")))
	if err != nil {
		return state.Failed(name, "Running function %s on target %s failed: %v", name, tgt, err), nil
	}
	if len(out.Minions) == 0 {
		return state.Failed(name, "No minions matched the target. No command was sent, no jid was assigned."), nil
	}
	ignore := failMinions(in.Value("fail_minions"))
	changes := map[string]any{}
	failures := map[string]any{}
	var failed []string
	for _, id := range out.Minions {
		r, returned := out.Returns[id]
		ok := returned && r.Success && r.Retcode == 0 && r.Return != false
		if ok && in.String("fail_function") != "" {
			v, err := s.env.Functions.Call(ctx, in.String("fail_function"), []any{r.Return}, nil, nil)
			ok = err == nil && v == true
		}
		if !returned && !in.Bool("expect_minions") {
			continue
		}
		if !ok {
			if !slices.Contains(ignore, id) {
				failed = append(failed, id)
			}
			if returned {
				failures[id] = r.Return
			} else {
				failures[id] = "Minion did not respond"
			}
			continue
		}
		changes[id] = r.Return
	}
	res := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{}}
	if len(changes) > 0 {
		res.Changes["ret"] = changes
	}
	if len(failed) > 0 {
		res.Result = state.Bool(false)
		res.Comment = fmt.Sprintf("Running function %s failed on minions: %s", name, strings.Join(failed, ", "))
	} else {
		res.Comment = "Function ran successfully."
	}
	if len(changes) > 0 {
		res.Comment += fmt.Sprintf(" Function %s ran on %s.", name, strings.Join(slices.Sorted(maps.Keys(changes)), ", "))
	}
	if len(failures) > 0 {
		res.Comment += "\nFailures:"
		for _, id := range slices.Sorted(maps.Keys(failures)) {
			res.Comment += fmt.Sprintf("\n    %s: %v", id, failures[id])
		}
	}
	return res, nil
}

func (s *steps) state(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	fun, arg := "state.highstate", []any{}
	switch {
	case in.Value("sls") != nil:
		fun = "state.sls"
		arg = append(arg, strings.Join(state.Mods(in.Value("sls")), ","))
	case in.String("top") != "":
		return state.Failed(name, "top: is not supported (brine applies sls or the highstate)"), nil
	case !in.Bool("highstate"):
		return state.Failed(name, "No highstate or sls specified, no execution made"), nil
	}
	kwarg := map[string]any{}
	for _, k := range []string{"pillar", "pillarenv", "saltenv", "exclude"} {
		if v := in.Value(k); v != nil && v != "" {
			kwarg[k] = v
		}
	}
	if in.Bool("queue") {
		kwarg["queue"] = true
	}
	test := state.From(ctx).Test || state.Flag(in.Value("test"))
	if test {
		kwarg["test"] = true
	}
	out, err := s.publish(ctx, in, fun, jobs.PackArgs(arg, kwarg))
	if err != nil {
		return state.Failed(name, "Running %s on target %s failed: %v", fun, jobs.TargetText(in.Value("tgt")), err), nil
	}
	if len(out.Minions) == 0 {
		return state.Failed(name, "No minions matched the target. No command was sent, no jid was assigned."), nil
	}
	ignore := failMinions(in.Value("fail_minions"))
	changes := map[string]any{}
	failures := map[string]any{}
	var failed, unchanged []string
	for _, id := range out.Minions {
		r, returned := out.Returns[id]
		if !returned && !in.Bool("expect_minions") {
			continue
		}
		ret, isStates := r.Return.(map[string]any)
		if !returned || !isStates || state.AnyFailed(ret) || r.Retcode != 0 && r.Retcode != 2 {
			if !slices.Contains(ignore, id) {
				failed = append(failed, id)
			}
			switch {
			case !returned:
				failures[id] = "Minion did not respond"
			default:
				failures[id] = r.Return
			}
			continue
		}
		if stateChanges(ret) {
			changes[id] = ret
		} else {
			unchanged = append(unchanged, id)
		}
	}
	res := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{}}
	if len(changes) > 0 {
		res.Changes = map[string]any{"out": "highstate", "ret": changes}
	}
	if len(failed) > int(in.Int("allow_fail")) {
		res.Result = state.Bool(false)
		res.Comment = "Run failed on minions: " + strings.Join(failed, ", ")
	} else {
		res.Comment = "States ran successfully."
		if len(changes) > 0 {
			res.Comment += " Updating " + strings.Join(slices.Sorted(maps.Keys(changes)), ", ") + "."
		}
		if len(unchanged) > 0 {
			res.Comment += " No changes made to " + strings.Join(unchanged, ", ") + "."
		}
	}
	if len(failures) > 0 {
		res.Comment += "\nFailures:\n"
		for _, id := range slices.Sorted(maps.Keys(failures)) {
			var rets output.Returns
			rets.Add(id, failures[id])
			var b strings.Builder
			if err := output.Write(&b, "highstate", rets, output.Options{StateOutput: "terse"}); err == nil {
				for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
					res.Comment += "    " + l + "\n"
				}
			}
		}
	}
	if test && res.Result != nil && *res.Result && len(changes) > 0 {
		res.Result = nil
	}
	return res, nil
}

// stateChanges says whether a state return changed anything.
func stateChanges(ret map[string]any) bool {
	for _, v := range ret {
		if m, ok := v.(map[string]any); ok {
			if c, ok := m["changes"].(map[string]any); ok && len(c) > 0 {
				return true
			}
		}
	}
	return false
}

// master runs a master function (salt.runner, salt.wheel) as a step.
func (s *steps) master(kind string) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		name := in.String("name")
		if kind == "Wheel" && !s.env.Functions.Wheel(name) {
			return state.Failed(name, "Wheel function '%s' is not available (brine's wheel functions are key.*)", name), nil
		}
		if state.From(ctx).Test {
			return state.Result{Name: name, Comment: fmt.Sprintf("%s function '%s' would be executed.", kind, name)}, nil
		}
		kwargs := map[string]any{}
		for k, v := range in.ExtraKwargs {
			if !strings.HasPrefix(k, "__") {
				kwargs[k] = v
			}
		}
		var args []any
		if a, ok := kwargs["arg"]; ok {
			args = listArg(a)
			delete(kwargs, "arg")
		}
		if kw, ok := kwargs["kwarg"].(map[string]any); ok {
			delete(kwargs, "kwarg")
			maps.Copy(kwargs, kw)
		}
		// The function is a job of its own, not part of the
		// orchestration's (a nested state.orchestrate keeps its own steps).
		ret, err := s.env.Functions.Call(jobs.WithoutRun(ctx), name, args, kwargs, nil)
		if err != nil {
			r := state.Failed(name, "%s function '%s' failed.", kind, name)
			r.Changes = map[string]any{"return": err.Error()}
			return r, nil
		}
		return state.Succeeded(name, fmt.Sprintf("%s function '%s' executed.", kind, name), map[string]any{"return": ret}), nil
	}
}

func listArg(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	return []any{v}
}
