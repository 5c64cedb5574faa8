package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
)

// startTimeLayout is Salt's StartTime in job listings: "2026, Nov 24 10:04:05.123456".
const startTimeLayout = "2006, Jan 02 15:04:05.000000"

// Funcs are Salt's jobs runner over the store, read-only: jobs.lookup_jid,
// jobs.list_job, jobs.list_jobs and jobs.active, so that `brine run` and
// reaction templates answer what `salt-run jobs.*` does.
func (s *Store) Funcs() []function.Func {
	jid := function.Param{Name: "jid", Kind: function.String, Required: true}
	return []function.Func{
		{
			Name:     "jobs.lookup_jid",
			Doc:      "Return a job's return: by minion id for a targeted job, as returned for a runner job.",
			Params:   []function.Param{jid, {Name: "missing", Kind: function.Bool, Default: false}},
			ReadOnly: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				j, err := s.Get(ctx, in.String("jid"))
				if err != nil {
					return nil, err
				}
				return j.Lookup(in.Bool("missing")), nil
			},
		},
		{
			Name:     "jobs.list_job",
			Doc:      "Return the whole record of a job: function, arguments, target, user, times and returns.",
			Params:   []function.Param{jid},
			ReadOnly: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.Get(ctx, in.String("jid"))
			},
		},
		{
			Name: "jobs.list_jobs",
			Doc:  "List kept jobs by JID, as Salt's jobs.list_jobs (search_function, search_target: globs; start_time, end_time).",
			Params: []function.Param{
				{Name: "search_function", Kind: function.String},
				{Name: "search_target", Kind: function.String},
				{Name: "start_time", Kind: function.String},
				{Name: "end_time", Kind: function.String},
			},
			ReadOnly: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				f := Filter{Fun: in.String("search_function")}
				start, err := timeArg(in, "start_time")
				if err != nil {
					return nil, err
				}
				end, err := timeArg(in, "end_time")
				if err != nil {
					return nil, err
				}
				f.Since = start
				list, err := s.List(ctx, f)
				if err != nil {
					return nil, err
				}
				var tgt *fnmatch.Glob
				if t := in.String("search_target"); t != "" {
					tgt = fnmatch.Compile(t)
				}
				out := map[string]any{}
				for _, j := range list {
					if !end.IsZero() && j.StartTime.After(end) || tgt != nil && !tgt.Match(TargetText(j.Tgt)) {
						continue
					}
					out[j.JID] = summary(j, false)
				}
				return out, nil
			},
		},
		{
			Name:     "jobs.print_job",
			Doc:      "Return a job as Salt's jobs.print_job: {jid: {Function, Arguments, Target, Target-type, User, StartTime, Minions, Result}}.",
			Params:   []function.Param{jid},
			ReadOnly: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				j, err := s.Get(ctx, in.String("jid"))
				if err != nil {
					return nil, err
				}
				result := map[string]any{}
				for id, r := range j.Returns {
					result[id] = map[string]any{"return": r.Return, "retcode": r.Retcode, "success": r.Success}
				}
				if j.Kind != KindJob {
					result["master"] = map[string]any{"return": j.Return}
				}
				out := summary(j, false)
				out["Minions"], out["Result"] = nonNil(j.Minions), result
				return map[string]any{j.JID: out}, nil
			},
		},
		{
			Name:     "jobs.exit_success",
			Doc:      "For each minion of a job, whether it returned success (retcode 0); one that did not return is false.",
			Params:   []function.Param{jid},
			ReadOnly: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				j, err := s.Get(ctx, in.String("jid"))
				if err != nil {
					return nil, err
				}
				out := map[string]any{}
				for _, id := range j.Minions {
					r, ok := j.Returns[id]
					out[id] = ok && r.Success && r.Retcode == 0
				}
				return out, nil
			},
		},
		{
			Name:     "jobs.active",
			Doc:      "List the jobs that have not finished, with the minions that returned and those still running.",
			ReadOnly: true,
			Run: func(ctx context.Context, _ *function.Input) (any, error) {
				list, err := s.List(ctx, Filter{Active: true})
				if err != nil {
					return nil, err
				}
				out := map[string]any{}
				for _, j := range list {
					out[j.JID] = summary(j, true)
				}
				return out, nil
			},
		},
	}
}

// summary is a job as Salt's job listings show it.
func summary(j *Job, progress bool) map[string]any {
	m := map[string]any{
		"Function": j.Fun, "Arguments": j.Arg, "Target": j.Tgt, "Target-type": j.TgtType,
		"User": j.User, "StartTime": j.StartTime.UTC().Format(startTimeLayout),
	}
	if m["Arguments"] == nil {
		m["Arguments"] = []any{}
	}
	if j.Tgt == nil {
		m["Target"] = ""
	}
	if progress {
		returned := []string{}
		for _, id := range j.Minions {
			if _, ok := j.Returns[id]; ok {
				returned = append(returned, id)
			}
		}
		running := j.Missing()
		if running == nil {
			running = []string{}
		}
		m["Returned"], m["Running"] = returned, running
	}
	return m
}

// timeArg reads a time argument (RFC 3339, 2006-01-02[ 15:04:05], or a
// duration back from now); zero when absent.
func timeArg(in *function.Input, name string) (time.Time, error) {
	v := in.String(name)
	if v == "" {
		return time.Time{}, nil
	}
	s, err := bus.ParseSince(v)
	if err != nil || s.Time.IsZero() {
		return time.Time{}, &function.ArgError{Func: in.Func, Arg: name,
			Err: fmt.Errorf("%w: %q: want an RFC 3339 time or a duration like 2h", function.ErrArgumentType, v)}
	}
	return s.Time, nil
}

// nonNil makes a nil list an empty one, so that JSON says [] rather than
// null.
func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}
