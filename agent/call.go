package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/brinehq/brine/agent/proto"
	"github.com/brinehq/brine/jobs"
)

// CallResult is what a local call (`brine call`, Salt's salt-call)
// returned.
type CallResult struct {
	JID     string
	Return  any
	Retcode int
	Success bool
	Err     error
}

// Call runs an execution function on this agent, as salt-call does: the
// function gets Salt's __pub_* keywords (when it takes **kwargs), and its
// return is queued for the master as salt/job/<jid>/ret/<id>.
func (a *Agent) Call(ctx context.Context, fun string, args []any, kwargs map[string]any) (CallResult, error) {
	jid := jobs.NewJID()
	kw := map[string]any{}
	for k, v := range kwargs {
		kw[k] = v
	}
	if f, ok := a.funcs.Lookup(fun); ok && f.VarKwargs {
		kw["__pub_fun"], kw["__pub_jid"], kw["__pub_pid"], kw["__pub_tgt"] = fun, jid, os.Getpid(), "salt-call"
	}
	res := CallResult{JID: jid, Success: true}
	ret, err := a.funcs.Call(ctx, fun, args, kw, nil)
	if err != nil {
		res.Err, res.Success, res.Retcode = err, false, 1
		ret = err.Error()
	}
	res.Return = ret
	funArgs := append([]any{}, args...)
	if len(kwargs) > 0 {
		funArgs = append(funArgs, kwargsMarker(kwargs))
	}
	r := proto.Return{JID: jid, Fun: fun, FunArgs: funArgs, Return: ret, Retcode: res.Retcode, Success: res.Success,
		Time: time.Now().UTC()}
	it, err := returnItem(r)
	if err != nil {
		return res, err
	}
	if err := a.outbox.Put(it); err != nil {
		return res, err
	}
	return res, nil
}

func returnItem(r proto.Return) (Item, error) {
	id, err := newID()
	if err != nil {
		return Item{}, err
	}
	r.ID = id
	return encodeItem(r.ID, "return", "salt/job/"+r.JID+"/ret", r)
}

// ErrPending is returned by Deliver when the master has not accepted this
// agent's key: what was queued stays queued.
var ErrPending = errors.New("the master has not accepted this agent's key yet")

// Deliver connects to the master, authenticates once and delivers the
// outbox: what `brine call` does after running its function. What cannot
// be delivered stays queued for the agent daemon.
func (a *Agent) Deliver(ctx context.Context) error {
	cfg := a.config()
	var errs []error
	for _, addr := range cfg.Addrs() {
		cli, err := a.dial(ctx, cfg, addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defer cli.Close()
		var rep proto.HelloReply
		hello := proto.Hello{ID: a.id, Version: a.opts.Version, AutosignGrains: a.grainsNamed(cfg.AutosignGrains)}
		if err := cli.Call(ctx, proto.MethodHello, hello, &rep); err != nil {
			return fmt.Errorf("authentication: %w", err)
		}
		switch rep.State {
		case proto.StateAccepted:
			dropped, err := a.drain(ctx, cli)
			return errors.Join(append(dropped, err)...)
		case proto.StatePending:
			return ErrPending
		default:
			return fmt.Errorf("the master refuses this agent's key (%s): %s", rep.State, rep.Reason)
		}
	}
	return errors.Join(errs...)
}

// Queued is the number of messages waiting for the master.
func (a *Agent) Queued() int { return a.outbox.Len() }
