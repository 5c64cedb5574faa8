package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/wire"
)

// Call runs an execution function on this agent, as salt-call does: the
// same execution as a published job (Salt's __pub_* keywords, retcodes,
// error returns), and its return is queued for the master, which stores it
// as salt/job/<jid>/ret/<id> under a jid of its own (wire.RequestJID), as
// Salt's master does salt-call's.
func (a *Agent) Call(ctx context.Context, fun string, args []any, kwargs map[string]any) (wire.Return, error) {
	// salt-call's __pub_* keywords are fun, jid, pid and tgt "salt-call"
	// (seed 003 shows them in event.send's data); a published job's add
	// the rest of its load.
	job := wire.Job{JID: jobs.NewJID(), Fun: fun, Arg: jobs.PackArgs(args, kwargs), Tgt: "salt-call"}
	ret := a.execute(ctx, job)
	if a.opts.Masterless {
		// salt-call --local returns to no master
		return ret, nil
	}
	up := ret
	up.JID = wire.RequestJID
	return ret, a.queueReturn(up, "")
}

func returnItem(r wire.Return) (Item, error) {
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

// Connect connects to the master and authenticates once, for brine call:
// its function may fetch salt:// files or ask the master, and Deliver
// then uses the same connection. The returned func closes it.
func (a *Agent) Connect(ctx context.Context) (func(), error) {
	cfg := a.config()
	timeout := dialTimeout
	if len(cfg.Master) > 1 {
		timeout = failoverDialTimeout
	}
	var errs []error
	for _, addr := range cfg.Addrs() {
		cli, err := a.dial(ctx, cfg, addr, timeout, func(method string, body []byte) { a.push(nil, addr, nil, method, body) })
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var rep wire.HelloReply
		hello := wire.Hello{ID: a.id, Version: a.opts.Version, AutosignGrains: a.grainsNamed(cfg.AutosignGrains)}
		if err := cli.Call(ctx, wire.MethodHello, hello, &rep); err != nil {
			cli.Close()
			return nil, fmt.Errorf("authentication: %w", err)
		}
		switch rep.State {
		case wire.StateAccepted:
			a.cli.Store(cli)
			return func() { a.cli.CompareAndSwap(cli, nil); cli.Close() }, nil
		case wire.StatePending:
			cli.Close()
			return nil, ErrPending
		default:
			cli.Close()
			return nil, fmt.Errorf("the master refuses this agent's key (%s): %s", rep.State, rep.Reason)
		}
	}
	return nil, errors.Join(errs...)
}

// Deliver delivers the outbox to the master, over the connection Connect
// made or a new one: what `brine call` does after running its function.
// What cannot be delivered stays queued for the agent daemon.
func (a *Agent) Deliver(ctx context.Context) error {
	cli := a.cli.Load()
	if cli == nil {
		done, err := a.Connect(ctx)
		if err != nil {
			return err
		}
		defer done()
		cli = a.cli.Load()
	}
	dropped, err := a.drain(ctx, func(Item) *gateway.Client { return cli })
	return errors.Join(append(dropped, err)...)
}

// Queued is the number of messages waiting for the master.
func (a *Agent) Queued() int { return a.outbox.Len() }
