package reactor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/backoff"
	"github.com/brinehq/brine/jobs"
)

// Tags the reactor fires besides Salt's job events.
const (
	TagError   = "brine/reactor/error"
	TagLoop    = "brine/reactor/loop"
	TagSkipped = "brine/reactor/skipped"
	// Source is the default envelope source of events the reactor fires
	// (WithSource sets the master's own).
	Source = "brine://reactor"
)

// Status is how a reaction run ended.
type Status string

// Reaction outcomes.
const (
	Succeeded    Status = "succeeded"
	Failed       Status = "failed"        // did not succeed, and is not kept for redrive
	DeadLettered Status = "dead_lettered" // failed after every attempt, kept for redrive
	Skipped      Status = "skipped"       // require/onfail said not to run
)

// Result is the outcome of one reaction for one event.
type Result struct {
	Reaction *Reaction
	Status   Status
	JID      string
	Return   any
	Err      error
	// Reason says why a reaction was skipped.
	Reason   string
	Attempts int
	Duration time.Duration
	// From says what a redrive ran: FromFiles or AsRecorded.
	From string
}

// errInterrupted means the reactor is stopping: the event is left
// unacknowledged and will be redelivered.
var errInterrupted = errors.New("reactor stopping")

// execution is the reactions of one event being run.
type execution struct {
	r     *Reactor
	ev    *bus.Event
	pub   bus.Publisher
	dlq   DeadLetters
	retry Retry
}

// Execute runs reactions for ev, honouring require/onfail, with retries;
// events (job new/ret, event.send, errors) go to pub. It returns when every
// reaction has finished, in the order given. Without a bus, pub may print or
// collect events; dlq may be nil (nothing is kept).
func (r *Reactor) Execute(ctx context.Context, ev *bus.Event, reactions []*Reaction, pub bus.Publisher, dlq DeadLetters) []Result {
	x := &execution{r: r, ev: ev, pub: pub, dlq: dlq, retry: r.cfg.Load().Retry}
	return x.run(ctx, reactions)
}

type node struct {
	re      *Reaction
	require []int
	onfail  []int
	err     error // requisite resolution failed
	done    chan struct{}
	res     Result
}

func (x *execution) run(ctx context.Context, reactions []*Reaction) []Result {
	nodes := x.resolve(reactions)
	if len(nodes) == 1 && nodes[0].err == nil {
		nodes[0].res = x.runOne(ctx, nodes[0].re)
		return []Result{nodes[0].res}
	}
	for i := range nodes {
		go func(n *node) {
			defer close(n.done)
			n.res = x.decide(ctx, n, nodes)
		}(&nodes[i])
	}
	out := make([]Result, len(nodes))
	for i := range nodes {
		<-nodes[i].done
		out[i] = nodes[i].res
	}
	return out
}

// resolve finds each requisite among the event's reactions and rejects
// cycles, which would otherwise wait forever.
func (x *execution) resolve(reactions []*Reaction) []node {
	nodes := make([]node, len(reactions))
	for i, re := range reactions {
		nodes[i] = node{re: re, done: make(chan struct{})}
	}
	find := func(ref Ref) int {
		for j, re := range reactions {
			if re.ID == ref.ID && (ref.Kind == "" || ref.Kind == re.Kind) {
				return j
			}
		}
		return -1
	}
	for i := range nodes {
		n := &nodes[i]
		for _, set := range []struct {
			refs []Ref
			dst  *[]int
		}{{n.re.Require, &n.require}, {n.re.Onfail, &n.onfail}} {
			for _, ref := range set.refs {
				j := find(ref)
				if j < 0 || j == i {
					n.err = fmt.Errorf("%w: %s (no other reaction of this event has that id)", ErrRequisite, ref)
					break
				}
				*set.dst = append(*set.dst, j)
			}
		}
	}
	// A node in a cycle can never start: fail it.
	state := make([]int, len(nodes)) // 0 new, 1 visiting, 2 done
	var visit func(i int) bool
	visit = func(i int) bool {
		if state[i] == 1 {
			return true
		}
		if state[i] == 2 {
			return false
		}
		state[i] = 1
		cyclic := false
		for _, j := range append(append([]int{}, nodes[i].require...), nodes[i].onfail...) {
			if visit(j) {
				cyclic = true
			}
		}
		state[i] = 2
		if cyclic && nodes[i].err == nil {
			nodes[i].err = fmt.Errorf("%w: requisites form a cycle", ErrRequisite)
			nodes[i].require, nodes[i].onfail = nil, nil
		}
		return cyclic
	}
	for i := range nodes {
		visit(i)
	}
	return nodes
}

// decide waits for a node's requisites and runs or skips it.
func (x *execution) decide(ctx context.Context, n *node, nodes []node) Result {
	if n.err != nil {
		err := &Error{Stage: StageCompile, File: n.re.File, Line: n.re.Line, Rendered: n.re.RenderedLine, ID: n.re.ID, Err: n.err}
		x.r.fireError(ctx, x.pub, x.ev, err)
		x.r.stats.Failed.Add(1)
		return Result{Reaction: n.re, Status: Failed, Err: err}
	}
	for _, j := range append(append([]int{}, n.require...), n.onfail...) {
		select {
		case <-nodes[j].done:
		case <-ctx.Done():
			return Result{Reaction: n.re, Status: Failed, Err: errInterrupted}
		}
	}
	for _, j := range n.require {
		if st := nodes[j].res.Status; st != Succeeded {
			return x.skip(ctx, n.re, fmt.Sprintf("require: %s %s", refName(nodes[j].re), st))
		}
	}
	if len(n.onfail) > 0 {
		failed := false
		for _, j := range n.onfail {
			st := nodes[j].res.Status
			failed = failed || st == Failed || st == DeadLettered
		}
		if !failed {
			return x.skip(ctx, n.re, "onfail: no requisite failed")
		}
	}
	return x.runOne(ctx, n.re)
}

func refName(re *Reaction) string { return string(re.Kind) + ": " + re.ID }

func (x *execution) skip(ctx context.Context, re *Reaction, reason string) Result {
	x.r.stats.Skipped.Add(1)
	x.r.fire(ctx, x.pub, x.ev, TagSkipped, map[string]any{
		"id": re.ID, "file": re.File, "line": re.Line, "fun": re.Call(),
		"tag": x.ev.Tag, "event": x.ev.ID, "reason": reason,
	})
	return Result{Reaction: re, Status: Skipped, Reason: reason}
}

// Runnable says why this master cannot run re (ErrNoExecutor, or a wheel
// reaction naming no wheel function or with wrong arguments), or nil: what
// the live reactor reports when re's turn comes, and what `brine reactor
// test` reports without running anything.
func (r *Reactor) Runnable(re *Reaction) *Error {
	fail := func(err error) *Error {
		return &Error{Stage: StageRun, File: re.File, Line: re.Line, Rendered: re.RenderedLine, ID: re.ID, Err: err}
	}
	switch re.Kind {
	case Runner:
		return nil
	case Local, Caller:
		if err := r.localCheck(re); err != nil {
			return fail(err)
		}
		return nil
	case Wheel:
		// Runner reactions are checked when their file is compiled; a
		// wheel function's arguments are checked here, before it runs.
		if !r.funcs.Wheel(re.Fun) {
			if slices.Contains(r.funcs.Names(), re.Fun) {
				return fail(fmt.Errorf("%s: %s is not a wheel function (call it as runner.%s)", re.Call(), re.Fun, re.Fun))
			}
			return fail(fmt.Errorf("%s: no wheel function %s on this master (wheel functions: key.*)", re.Call(), re.Fun))
		}
		if err := r.funcs.Check(re.Fun, re.Args, re.Kwargs); err != nil {
			return fail(fmt.Errorf("%s: %w", re.Call(), err))
		}
		return nil
	}
	return fail(fmt.Errorf("%w for %s reactions: %s needs a minion transport, which this master does not have yet",
		ErrNoExecutor, re.Kind, re.Call()))
}

// runOne runs a reaction as a job, with retries, dead-lettering it when
// every attempt failed.
func (x *execution) runOne(ctx context.Context, re *Reaction) Result {
	if err := x.r.Runnable(re); err != nil {
		x.r.fireError(ctx, x.pub, x.ev, err)
		x.r.stats.Failed.Add(1)
		return Result{Reaction: re, Status: Failed, Err: err}
	}
	policy := x.retry.override(re.Retry)
	res := x.r.job(ctx, x.pub, x.ev, re, policy.Attempts, policy)
	switch {
	case errors.Is(res.Err, errInterrupted):
	case res.Status == Succeeded:
	default:
		err := &Error{Stage: StageRun, File: re.File, Line: re.Line, Rendered: re.RenderedLine, ID: re.ID,
			Err: fmt.Errorf("%s failed after %d attempts: %w", re.Call(), res.Attempts, res.Err)}
		x.r.fireError(ctx, x.pub, x.ev, err)
		res.Status = Failed
		if x.dlq != nil {
			dl := &DeadLetter{ID: res.JID, Time: time.Now().UTC(), Event: x.ev, Reaction: re,
				Error: res.Err.Error(), Attempts: res.Attempts}
			if perr := x.dlq.Put(ctx, dl); perr != nil {
				// Not kept: leave the event unacknowledged rather than lose it.
				x.r.log.Error("reactor: dead-letter failed", "jid", res.JID, "err", perr)
				res.Err = errors.Join(errInterrupted, perr)
				return res
			}
			res.Status = DeadLettered
			x.r.stats.DeadLettered.Add(1)
		}
	}
	return res
}

// job runs re as one job: salt/run/<jid>/new, up to attempts calls with
// backoff, salt/run/<jid>/ret (salt/wheel/<jid>/… for a wheel reaction).
// The new event is stored while the function runs and ret waits for it, so
// the two are in order and a fast reaction costs one durable write.
func (r *Reactor) job(ctx context.Context, pub bus.Publisher, cause *bus.Event, re *Reaction, attempts int, policy Retry) Result {
	if re.Kind == Local || re.Kind == Caller {
		return r.localJob(ctx, cause, re, attempts, policy)
	}
	run := jobs.NewRun(re.Fun, re.Args, re.Kwargs, jobs.ReactionUser(cause), bus.Origin{Source: r.source, Cause: cause})
	run.Extra = map[string]any{"cause": cause.ID, "reaction": re.ID, "file": re.File}
	if re.Kind == Wheel {
		run.Fun = re.Call()
		pub = jobs.WheelTags(pub, run.JID)
	}
	res := Result{Reaction: re, JID: run.JID}
	r.stats.Reactions.Add(1)
	newStored := make(chan error, 1)
	go func() { newStored <- run.Begin(ctx, pub) }()
	fire := run.Fire(pub)
	if !r.retry(ctx, re, &res, attempts, policy, func() bool {
		release, ok := r.acquire(ctx)
		if !ok {
			return false
		}
		res.Return, res.Err = r.call(ctx, re, fire)
		release()
		return true
	}) {
		return res
	}
	res.Duration = time.Since(run.Start)
	if err := <-newStored; err != nil {
		res.Err = errors.Join(errInterrupted, err)
		return res
	}
	if err := run.End(ctx, pub, res.Return, res.Err, map[string]any{"attempts": res.Attempts}); err != nil {
		res.Err = errors.Join(errInterrupted, err)
		return res
	}
	if res.Err == nil {
		res.Status = Succeeded
		r.stats.Succeeded.Add(1)
	} else {
		r.stats.Failed.Add(1)
	}
	return res
}

// WheelTag is the tag of a wheel job event (jobs.WheelTag).
func WheelTag(jid, what string) string { return jobs.WheelTag(jid, what) }

// retry runs try up to attempts times, waiting the policy's backoff after
// each failure; try sets res.Err and says whether another attempt could
// change the outcome. It returns false, with res.Err errInterrupted, when
// ctx ended first.
func (r *Reactor) retry(ctx context.Context, re *Reaction, res *Result, attempts int, policy Retry, try func() (again bool)) bool {
	for res.Attempts < attempts {
		if res.Attempts > 0 {
			r.stats.Retries.Add(1)
			if !backoff.Sleep(ctx, retryDelay(policy, res.Attempts)) {
				res.Err = errInterrupted
				return false
			}
		}
		res.Attempts++
		res.Err = nil
		again := try()
		if ctx.Err() != nil {
			res.Err = errInterrupted
			return false
		}
		if res.Err == nil {
			return true
		}
		r.log.Warn("reactor: reaction failed", "id", re.ID, "fun", re.Call(), "jid", res.JID,
			"attempt", res.Attempts, "of", attempts, "err", res.Err)
		if !again {
			return true
		}
	}
	return true
}

// call runs the reaction's function; a panic in it is a failed attempt,
// not a dead master.
func (r *Reactor) call(ctx context.Context, re *Reaction, fire func(context.Context, string, map[string]any) error) (ret any, err error) {
	defer func() {
		if p := recover(); p != nil {
			ret, err = nil, fmt.Errorf("%s panicked: %v", re.Call(), p)
		}
	}()
	return r.funcs.Call(ctx, re.Fun, re.Args, re.Kwargs, fire)
}

// retryDelay is the wait before attempt n+1: Interval doubled per failure,
// capped at MaxInterval, with jitter so retries of a burst spread out.
func retryDelay(p Retry, failures int) time.Duration {
	return backoff.Delay(p.Interval, p.MaxInterval, failures)
}

// publish fires an event caused by cause: depth and cause come from it.
func (r *Reactor) publish(ctx context.Context, pub bus.Publisher, cause *bus.Event, tag string, data map[string]any) error {
	_, err := bus.Fire(ctx, pub, tag, data, bus.Origin{Source: r.source, Cause: cause})
	return err
}

// fire publishes a reactor notice; a failure is logged, as there is nowhere
// else to report it.
func (r *Reactor) fire(ctx context.Context, pub bus.Publisher, cause *bus.Event, tag string, data map[string]any) {
	if err := r.publish(ctx, pub, cause, tag, data); err != nil && ctx.Err() == nil {
		r.log.Error("reactor: cannot fire event", "tag", tag, "err", err)
	}
}

// fireError reports err on the bus as brine/reactor/error and in the log.
func (r *Reactor) fireError(ctx context.Context, pub bus.Publisher, cause *bus.Event, err *Error) {
	r.stats.Errors.Add(1)
	// A failing call's message may quote its arguments: neither the log nor
	// the event carries a secret.
	full := jobs.RedactText(err.Error())
	r.log.Error("reactor: "+full, "tag", cause.Tag, "event", cause.ID)
	r.fire(ctx, pub, cause, TagError, map[string]any{
		"stage": string(err.Stage), "file": err.File, "line": err.Line, "rendered_line": err.Rendered, "id": err.ID,
		"tag": cause.Tag, "event": cause.ID, "message": jobs.RedactText(err.Err.Error()), "error": full,
	})
}
