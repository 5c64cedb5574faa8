package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/brinehq/brine/agent/proto"
	"github.com/brinehq/brine/jobs"
)

// Call runs an execution function on this agent, as salt-call does: the
// same execution as a published job (Salt's __pub_* keywords, retcodes,
// error returns), and its return is queued for the master as
// salt/job/<jid>/ret/<id>.
func (a *Agent) Call(ctx context.Context, fun string, args []any, kwargs map[string]any) (proto.Return, error) {
	// salt-call's __pub_* keywords are fun, jid, pid and tgt "salt-call"
	// (seed 003 shows them in event.send's data); a published job's add
	// the rest of its load.
	job := proto.Job{JID: jobs.NewJID(), Fun: fun, Arg: jobs.PackArgs(args, kwargs), Tgt: "salt-call"}
	ret := a.execute(ctx, job)
	return ret, a.queueReturn(ret)
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
