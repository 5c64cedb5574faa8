package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
)

// Users that Salt and brine put in a job's `user` field when no person
// started it.
const (
	// UserReactor marks jobs run by the reactor, as Salt's __user__.
	UserReactor = "Reactor"
	// HookUserPrefix prefixes the hook path for jobs started by a webhook
	// (`hook:<path>`).
	HookUserPrefix = "hook:"
)

// hookTagPrefix is the tag prefix of events fired by the HTTP API's webhooks.
const hookTagPrefix = "salt/netapi/hook/"

// ReactionUser is the user of a job the reactor runs for the event cause:
// hook:<path> when a webhook fired it, UserReactor otherwise, so the audit
// trail tells which outside system started a change.
func ReactionUser(cause *bus.Event) string {
	if cause != nil && strings.HasPrefix(cause.Tag, hookTagPrefix) {
		return HookUserPrefix + strings.TrimPrefix(cause.Tag, hookTagPrefix)
	}
	return UserReactor
}

// Caller runs a named function with Salt-style arguments; fire lets the
// function fire events caused by the job. *function.Registry is one.
type Caller interface {
	Call(ctx context.Context, name string, args []any, kwargs map[string]any,
		fire func(ctx context.Context, tag string, data map[string]any) error) (any, error)
}

// Run is one runner job: something that changes the world, announced on the
// bus as salt/run/<jid>/new when it starts and salt/run/<jid>/ret when it
// ends, with Salt's payload (fun, fun_args, jid, user; the ret adds return
// and success). Whoever runs a function as a job — `brine run`, the reactor,
// a `brine cloud` run — builds a Run, so every job reads the same on the bus,
// in the job store and in Slack.
type Run struct {
	// JID is the job id (NewJID).
	JID string
	// Fun is the job's function as Salt's runner events name it:
	// "runner.<module>.<function>".
	Fun string
	// FunArgs is Salt's fun_args: positional arguments, then the keyword
	// arguments as one mapping when there are any; secrets (by argument
	// name or look) are masked, as events must not carry them.
	FunArgs []any
	// User started the job: an OS user for the CLI, UserReactor, or
	// HookUserPrefix+path.
	User string
	// Extra is added to both events (the reactor adds cause, reaction, file).
	Extra map[string]any
	// Origin is the source and cause of the job's events; depth follows the
	// cause, which is what loop protection relies on.
	Origin bus.Origin
	// Start is when the job started (set by NewRun).
	Start time.Time
}

// NewRun prepares a runner job of the registry function name (without the
// "runner." prefix) with a fresh JID.
func NewRun(name string, args []any, kwargs map[string]any, user string, o bus.Origin) *Run {
	return &Run{
		JID:     NewJID(),
		Fun:     "runner." + strings.TrimPrefix(name, "runner."),
		FunArgs: Redact(FunArgs(args, kwargs)).([]any),
		User:    user,
		Origin:  o,
		Start:   time.Now(),
	}
}

// FunArgs is Salt's fun_args of a runner job: the positional arguments, then
// the keyword arguments as one mapping when there are any.
func FunArgs(args []any, kwargs map[string]any) []any {
	out := make([]any, 0, len(args)+1)
	out = append(out, args...)
	if len(kwargs) > 0 {
		out = append(out, kwargs)
	}
	return out
}

// RunTag is the tag of a runner job event: salt/run/<jid>/<what>.
func RunTag(jid, what string) string { return "salt/run/" + jid + "/" + what }

func (r *Run) payload() map[string]any {
	d := make(map[string]any, len(r.Extra)+6)
	for k, v := range r.Extra {
		d[k] = v
	}
	d["fun"] = r.Fun
	d["fun_args"] = r.FunArgs
	d["jid"] = r.JID
	d["user"] = r.User
	return d
}

// retData is the payload of the job's salt/run/<jid>/ret event for the
// outcome ret, err: success is err == nil, and a failed job's return is
// Salt's exception text. extra keys (e.g. attempts) are added; duration is
// the time since Start.
func (r *Run) retData(ret any, err error, extra map[string]any) map[string]any {
	d := r.payload()
	for k, v := range extra {
		d[k] = v
	}
	d["success"] = err == nil && !FailedReturn(ret)
	d["return"] = Redact(ret)
	if err != nil {
		d["return"] = RedactText(fmt.Sprintf("Exception occurred in runner %s: %v", strings.TrimPrefix(r.Fun, "runner."), err))
	}
	d["duration"] = time.Since(r.Start).Seconds()
	return d
}

// Begin publishes the new event.
func (r *Run) Begin(ctx context.Context, pub bus.Publisher) error {
	if _, err := bus.Fire(ctx, pub, RunTag(r.JID, "new"), r.payload(), r.Origin); err != nil {
		return fmt.Errorf("job %s: new event: %w", r.JID, err)
	}
	return nil
}

// End publishes the ret event for the outcome ret, err.
func (r *Run) End(ctx context.Context, pub bus.Publisher, ret any, err error, extra map[string]any) error {
	if _, perr := bus.Fire(ctx, pub, RunTag(r.JID, "ret"), r.retData(ret, err, extra), r.Origin); perr != nil {
		return fmt.Errorf("job %s: ret event: %w", r.JID, perr)
	}
	return nil
}

// Fire publishes an event fired by the job's function, with the job's origin
// (so its depth follows the job's cause).
func (r *Run) Fire(pub bus.Publisher) func(ctx context.Context, tag string, data map[string]any) error {
	return func(ctx context.Context, tag string, data map[string]any) error {
		_, err := bus.Fire(ctx, pub, tag, data, r.Origin)
		return err
	}
}

// FailedReturn says whether a runner function's return reports a failure
// itself: {data, outputter, retcode} with a non-zero retcode, as
// state.orchestrate returns when a step failed. Salt's runner client
// counts such a job as unsuccessful (success false), and so does brine.
func FailedReturn(ret any) bool {
	m, ok := ret.(map[string]any)
	if !ok || m["data"] == nil {
		return false
	}
	switch rc := m["retcode"].(type) {
	case int:
		return rc != 0
	case int64:
		return rc != 0
	case float64:
		return rc != 0
	}
	return false
}

// Result is a finished job.
type Result struct {
	JID      string        `json:"jid"`
	Fun      string        `json:"fun"`
	Return   any           `json:"return"`
	Success  bool          `json:"success"`
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"-"`
}

// ErrNotAnnounced wraps a failure to store a job's events: the function may
// have run, but the bus does not know it.
var ErrNotAnnounced = errors.New("job events not stored")

// Call runs the registry function name as a job: the new event is stored
// while the function runs, the ret event after it, so the two are in order
// and a fast function costs one durable write before its result. The error
// is the function's failure (also in Result) or ErrNotAnnounced.
func Call(ctx context.Context, c Caller, pub bus.Publisher, name string, args []any, kwargs map[string]any, user string, o bus.Origin) (Result, error) {
	r := NewRun(name, args, kwargs, user, o)
	return r.Call(ctx, c, pub, name, args, kwargs)
}

type runKey struct{}

// RunOf returns the runner job a function is called for (its JID, user
// and origin), nil outside one: orchestration keys its progress by it.
func RunOf(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// WithoutRun returns ctx outside any runner job: what a job calls as a
// part of its work (an orchestration's salt.runner step) is not the job.
func WithoutRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, runKey{}, (*Run)(nil))
}

// Call runs the registry function name as the job r (see Call).
func (r *Run) Call(ctx context.Context, c Caller, pub bus.Publisher, name string, args []any, kwargs map[string]any) (Result, error) {
	stored := make(chan error, 1)
	go func() { stored <- r.Begin(ctx, pub) }()
	return r.finish(ctx, c, pub, name, args, kwargs, stored)
}

// Resume runs again, as the same job, a job an earlier run of the master
// began and did not end (its new event is stored already): the function
// finds what the job did before through RunOf (an orchestration's
// steps), and the job ends with one ret event.
func (r *Run) Resume(ctx context.Context, c Caller, pub bus.Publisher, name string, args []any, kwargs map[string]any) (Result, error) {
	stored := make(chan error, 1)
	stored <- nil
	return r.finish(ctx, c, pub, name, args, kwargs, stored)
}

func (r *Run) finish(ctx context.Context, c Caller, pub bus.Publisher, name string, args []any, kwargs map[string]any, stored chan error) (Result, error) {
	ctx = context.WithValue(ctx, runKey{}, r)
	ret, err := c.Call(ctx, name, args, kwargs, r.Fire(pub))
	res := Result{JID: r.JID, Fun: r.Fun, Return: Redact(ret), Success: err == nil && !FailedReturn(ret), Duration: time.Since(r.Start)}
	if err != nil {
		res.Error = RedactText(err.Error())
	}
	if serr := <-stored; serr != nil {
		return res, errors.Join(fmt.Errorf("%w: %w", ErrNotAnnounced, serr), err)
	}
	if serr := r.End(ctx, pub, ret, err, nil); serr != nil {
		return res, errors.Join(fmt.Errorf("%w: %w", ErrNotAnnounced, serr), err)
	}
	return res, err
}

// WheelTag is the tag of a wheel job event, salt/wheel/<jid>/<what>: Salt's
// wheel client (a wheel.* reaction, salt-api's wheel client) announces its
// jobs there rather than under salt/run/.
func WheelTag(jid, what string) string { return "salt/wheel/" + jid + "/" + what }

// WheelTags publishes a wheel job's events (built as a runner job's, jid
// its Run's) under WheelTag; every other event passes as it is.
func WheelTags(pub bus.Publisher, jid string) bus.Publisher {
	return wheelTags{Publisher: pub, jid: jid}
}

type wheelTags struct {
	bus.Publisher
	jid string
}

// Publish implements bus.Publisher.
func (w wheelTags) Publish(ctx context.Context, ev *bus.Event) error {
	for _, what := range []string{"new", "ret"} {
		if ev.Tag == RunTag(w.jid, what) {
			ev.Tag = WheelTag(w.jid, what)
		}
	}
	return w.Publisher.Publish(ctx, ev)
}
