package reactor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/jobs"
)

// Minions runs the jobs of local.* (cmd.*) and caller.* reactions on
// agents; the master provides it.
type Minions interface {
	// RunJob publishes t and waits for every agent it reaches to return,
	// up to wait (extended while they report the job still running).
	RunJob(ctx context.Context, t jobs.Targeted, o bus.Origin, wait time.Duration) (jobs.Outcome, error)
	// PublishJob publishes t without waiting (async: True).
	PublishJob(ctx context.Context, t jobs.Targeted, o bus.Origin) (jobs.Published, error)
}

// WithMinions lets the reactor run local and caller reactions.
func WithMinions(m Minions) Option { return func(r *Reactor) { r.minions = m } }

// DefaultLocalTimeout is how long a local reaction waits for its agents'
// returns, in seconds, unless it sets `timeout`.
const DefaultLocalTimeout = 300

// localOptions are the cmd_async options a local reaction may set besides
// its target and arguments.
var localOptions = []string{"timeout", "async", "asynchronous", "metadata", "kill_after", "jid"}

// targeted builds a local or caller reaction's job.
func (r *Reactor) targeted(re *Reaction, cause *bus.Event) (t jobs.Targeted, wait time.Duration, async bool, err error) {
	t = jobs.Targeted{Fun: re.Fun, Arg: jobs.PackArgs(re.Args, re.Kwargs), Tgt: re.Tgt, TgtType: re.TgtType, Ret: re.Ret,
		User: jobs.ReactionUser(cause), Extra: map[string]any{"reaction": re.ID, "file": re.File, "cause": cause.ID}}
	if re.Kind == Caller {
		id := r.callerID()
		if id == "" {
			return t, 0, false, fmt.Errorf("%s: caller reactions run on the agent named by reactor_caller_id, which is not set", re.Call())
		}
		t.Tgt, t.TgtType = []any{id}, "list"
	}
	wait = DefaultLocalTimeout * time.Second
	for _, k := range slices.Sorted(maps.Keys(re.Extra)) {
		v := re.Extra[k]
		switch k {
		case "timeout":
			n, ok := py.Number(v)
			if !ok || n <= 0 {
				return t, 0, false, fmt.Errorf("%s: timeout: want a positive number of seconds, got %v", re.Call(), v)
			}
			wait = time.Duration(n * float64(time.Second))
		case "kill_after":
			n, ok := py.Number(v)
			if !ok || n < 0 {
				return t, 0, false, fmt.Errorf("%s: kill_after: want a number of seconds, got %v", re.Call(), v)
			}
			t.KillAfter = n
		case "async", "asynchronous":
			b, ok := v.(bool)
			if !ok {
				return t, 0, false, fmt.Errorf("%s: %s: want True or False, got %v", re.Call(), k, v)
			}
			async = b
		case "metadata":
			m, ok := v.(map[string]any)
			if !ok {
				return t, 0, false, fmt.Errorf("%s: metadata: want a mapping, got %v", re.Call(), v)
			}
			t.Metadata = m
		case "jid":
			// Salt lets a caller pick the jid; a reaction that runs more
			// than once cannot keep one, so it is assigned per job.
		default:
			return t, 0, false, fmt.Errorf("%s: unknown option %q (a local reaction takes tgt, tgt_type, ret, arg, kwarg, args, %s)",
				re.Call(), k, strings.Join(localOptions, ", "))
		}
	}
	return t, wait, async, nil
}

// callerID is the agent caller.* reactions run on.
func (r *Reactor) callerID() string {
	if c := r.cfg.Load(); c != nil {
		return c.CallerID
	}
	return ""
}

// localJob runs a local or caller reaction as jobs on agents: it succeeds
// when every agent the target selects returned success within the
// reaction's timeout. A retry publishes again to the agents that failed
// or did not answer, never to those that succeeded.
func (r *Reactor) localJob(ctx context.Context, cause *bus.Event, re *Reaction, attempts int, policy Retry) Result {
	res := Result{Reaction: re}
	r.stats.Reactions.Add(1)
	start := time.Now()
	t, wait, async, err := r.targeted(re, cause)
	if err != nil {
		res.Err = err
		res.Attempts = 1
		r.stats.Failed.Add(1)
		return res
	}
	o := bus.Origin{Source: r.source, Cause: cause}
	returns := map[string]any{}
	// failedReturns are agents that returned a failure; silent those that
	// have not answered yet.
	failedReturns, silent := map[string]string{}, map[string]string{}
	if !r.retry(ctx, re, &res, attempts, policy, func() bool {
		if async {
			var pub jobs.Published
			pub, err := r.minions.PublishJob(ctx, t, o)
			res.JID, res.Return, res.Err = pub.JID, pub, r.callerError(re, err)
			return true
		}
		out, err := r.minions.RunJob(ctx, t, o, wait)
		res.Err = r.callerError(re, err)
		if res.JID == "" {
			res.JID = out.JID
		}
		for id, rt := range out.Returns {
			returns[id] = rt.Return
		}
		res.Return = returns
		// Failures that returned stay failures whatever a retry of the
		// silent agents gives.
		for id, why := range out.Failures() {
			if _, answered := out.Returns[id]; answered {
				failedReturns[id] = why
			} else {
				silent[id] = why
			}
		}
		for id := range out.Returns {
			delete(silent, id)
		}
		if res.Err != nil || len(failedReturns)+len(silent) == 0 {
			return true
		}
		all := maps.Clone(failedReturns)
		maps.Copy(all, silent)
		ids := slices.Sorted(maps.Keys(all))
		why := make([]string, len(ids))
		for i, id := range ids {
			why[i] = id + ": " + all[id]
		}
		res.Err = fmt.Errorf("%d agents did not succeed (job %s): %s", len(ids), out.JID, strings.Join(why, "; "))
		// A returned failure is the function's answer: running it again
		// is not the reactor's call. Agents that did not answer are
		// asked again.
		t.Tgt, t.TgtType = slices.Sorted(maps.Keys(silent)), "list"
		return len(silent) > 0
	}) {
		return res
	}
	res.Duration = time.Since(start)
	if res.Err == nil {
		res.Status = Succeeded
		r.stats.Succeeded.Add(1)
	} else {
		r.stats.Failed.Add(1)
	}
	return res
}

// callerError words the error of a caller reaction whose agent has no
// accepted key.
func (r *Reactor) callerError(re *Reaction, err error) error {
	if re.Kind == Caller && errors.Is(err, ErrNoMinion) {
		return fmt.Errorf("caller reactions run on the agent beside the master (reactor_caller_id: %s), whose key is not accepted: %w",
			r.callerID(), err)
	}
	return err
}

// ErrNoMinion is how Minions reports a target that selects no agent.
var ErrNoMinion = errors.New("no agent matched the target")

// localCheck is Runnable's verdict on a local or caller reaction.
func (r *Reactor) localCheck(re *Reaction) error {
	if r.minions == nil {
		return fmt.Errorf("%w for %s reactions: %s needs agents, which this reactor has no way to reach", ErrNoExecutor, re.Kind, re.Call())
	}
	if !strings.Contains(re.Fun, ".") {
		return fmt.Errorf("%s: %q is not a module.function name", re.Call(), re.Fun)
	}
	_, _, _, err := r.targeted(re, &bus.Event{})
	return err
}

// dropOwn removes from reactions those that started the job ev announces:
// a reaction to salt/job/*/new that publishes a job (an audit script run
// with cmd.run) would otherwise react to its own job's new event, and to
// that job's, until reactor_max_depth cut the chain.
func (r *Reactor) dropOwn(ev *bus.Event, data map[string]any, reactions []*Reaction) []*Reaction {
	if ev.Source != r.source {
		return reactions
	}
	id, _ := data["reaction"].(string)
	file, _ := data["file"].(string)
	if id == "" {
		return reactions
	}
	return slices.DeleteFunc(reactions, func(re *Reaction) bool {
		own := re.ID == id && re.File == file
		if own {
			r.log.Debug("reactor: not reacting to the job a reaction started", "tag", ev.Tag, "id", id, "file", file)
		}
		return own
	})
}
