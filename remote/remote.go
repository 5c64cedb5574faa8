// Package remote is the client side of remote execution, Salt's
// LocalClient: it publishes a job through a master, follows the job's
// returns from just before publishing it (so none is missed), asks the
// agents that stay silent whether they still run it, and runs batches.
// It prints nothing: `brine exec` (salt) turns what it reports into
// Salt's output, and other tools can do their own.
package remote

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/wire"
)

// Conn is what the client needs of its connection to the master
// (*gateway.Client is one).
type Conn interface {
	Call(ctx context.Context, method string, in, out any) error
	Watch(ctx context.Context, pubAddr, pattern string, since bus.Since, fn func(*bus.Event) error) error
}

// Client publishes jobs and follows them through one master.
type Client struct {
	Conn Conn
	// PubAddr is the master's publish endpoint, where returns are watched.
	PubAddr string
	// CallTimeout bounds each request to the master (default 10 s).
	CallTimeout time.Duration
}

// NoMatchError is a target that selects no agent; Missing are names a list
// target gave that have no accepted key.
type NoMatchError struct{ Missing []string }

func (e *NoMatchError) Error() string {
	if len(e.Missing) > 0 {
		return "no agent matched the target (no accepted key for " + strings.Join(e.Missing, ", ") + ")"
	}
	return "no agent matched the target"
}

// Kind is what a Report tells.
type Kind int

// What Run reports, as it happens.
const (
	// Published: a job was published (once per batch start); JID, IDs the
	// agents it was sent to, Missing the names without an accepted key.
	Published Kind = iota
	// NotConnected: agent ID was selected but not connected, and was not
	// sent the job.
	NotConnected
	// Returned: agent ID returned; Data is the return event's data.
	Returned
	// StillRunning: agent ID, silent past the wait, says it still runs
	// the job; the wait starts again.
	StillRunning
	// NoResponse: agent ID did not answer.
	NoResponse
)

// Report is one thing that happened to a job.
type Report struct {
	Kind    Kind
	JID     string
	ID      string
	IDs     []string
	Missing []string
	Data    map[string]any
}

// Options tune Run.
type Options struct {
	// Wait is how long to wait for returns after the last sign of life
	// (Salt's -t); agents that say they still run the job extend it.
	Wait time.Duration
	// Batch runs the job on that many agents at a time, "N" or "N%" of
	// those selected ("": all at once), the next starting as each
	// returns, after BatchWait.
	Batch     string
	BatchWait time.Duration
}

func (c *Client) call(ctx context.Context, method string, in, out any) error {
	d := c.CallTimeout
	if d <= 0 {
		d = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return c.Conn.Call(ctx, method, in, out)
}

// Targets lists the agents a target selects and which of them are
// connected.
func (c *Client) Targets(ctx context.Context, tgt any, tgtType string) (rpc.TargetReply, error) {
	var rep rpc.TargetReply
	err := c.call(ctx, rpc.ExecTargets, rpc.TargetRequest{Tgt: tgt, TgtType: tgtType}, &rep)
	return rep, err
}

// Publish publishes job without following it (Salt's --async).
func (c *Client) Publish(ctx context.Context, job jobs.Targeted) (jobs.Published, error) {
	var pub jobs.Published
	if err := c.call(ctx, rpc.ExecPublish, job, &pub); err != nil {
		return pub, err
	}
	if len(pub.Minions) == 0 {
		return pub, &NoMatchError{Missing: pub.Missing}
	}
	return pub, nil
}

// returnEvent is one agent's return as the watch delivers it.
type returnEvent struct {
	jid, id string
	data    map[string]any
}

// follow is one Run's state: the returns watched, the agents awaited.
type follow struct {
	c      *Client
	o      Options
	report func(Report)
	rets   chan returnEvent
	errc   chan error
	// pending are the agents awaited, with the jid each was sent.
	pending map[string]string
}

// Run publishes job to the agents its target selects and reports what
// happens until every agent it reached has returned or stayed silent for
// Options.Wait. It returns a *NoMatchError when the target selects nobody.
func (c *Client) Run(ctx context.Context, job jobs.Targeted, o Options, report func(Report)) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	f := &follow{c: c, o: o, report: report, rets: make(chan returnEvent, 1024), errc: make(chan error, 1),
		pending: map[string]string{}}
	if o.Batch == "" {
		if err := f.start(ctx, job); err != nil {
			return err
		}
		return f.collect(ctx, nil)
	}
	rep, err := c.Targets(ctx, job.Tgt, job.TgtType)
	if err != nil {
		return err
	}
	if len(rep.Minions) == 0 {
		return &NoMatchError{Missing: rep.Missing}
	}
	size, err := jobs.BatchSize(o.Batch, len(rep.Minions))
	if err != nil {
		return err
	}
	var queue []string
	for _, id := range rep.Minions {
		if slices.Contains(rep.Connected, id) {
			queue = append(queue, id)
		} else {
			report(Report{Kind: NotConnected, ID: id})
		}
	}
	// A rolling window, as Salt's batches: the first Batch agents at
	// once, then one more as each returns, each start a job of its own.
	next := func(n int) error {
		n = min(n, len(queue))
		if n == 0 {
			return nil
		}
		sub := job
		sub.Tgt, sub.TgtType = queue[:n], "list"
		queue = queue[n:]
		return f.start(ctx, sub)
	}
	if err := next(size); err != nil {
		return err
	}
	return f.collect(ctx, func() error {
		if len(queue) > 0 && o.BatchWait > 0 {
			select {
			case <-time.After(o.BatchWait):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return next(1)
	})
}

// start publishes job under a jid of its own, its returns watched from
// just before, and awaits the agents it reached.
func (f *follow) start(ctx context.Context, job jobs.Targeted) error {
	job.JID = jobs.NewJID()
	go f.watch(ctx, job.JID, time.Now().Add(-2*time.Second))
	pub, err := f.c.Publish(ctx, job)
	if err != nil {
		return err
	}
	f.report(Report{Kind: Published, JID: pub.JID, IDs: pub.Minions, Missing: pub.Missing})
	for _, id := range pub.Minions {
		if slices.Contains(pub.NotConnected, id) {
			f.report(Report{Kind: NotConnected, JID: pub.JID, ID: id})
		} else {
			f.pending[id] = pub.JID
		}
	}
	return nil
}

// watch follows the returns of jid from since: the catch-up from before
// the job was published closes the gap a live subscription would leave.
func (f *follow) watch(ctx context.Context, jid string, since time.Time) {
	err := f.c.Conn.Watch(ctx, f.c.PubAddr, "salt/job/"+jid+"/ret/*", bus.Since{Time: since}, func(ev *bus.Event) error {
		data, err := ev.DataMap()
		if err != nil {
			return nil
		}
		select {
		case f.rets <- returnEvent{jid: jid, id: ev.Tag[strings.LastIndexByte(ev.Tag, '/')+1:], data: data}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if ctx.Err() == nil && err != nil {
		select {
		case f.errc <- err:
		default:
		}
	}
}

// collect reports returns as they arrive until no agent is awaited; Wait
// after the last sign of life, it asks the silent ones whether they still
// run the job and waits on for those that do. next, when set, runs after
// each return (a batch starts the next agent).
func (f *follow) collect(ctx context.Context, next func() error) error {
	// finished are agents that said they finished the job without its
	// return having arrived: it is on its way, and waited for once more.
	finished := map[string]bool{}
	timer := time.NewTimer(f.o.Wait)
	defer timer.Stop()
	for len(f.pending) > 0 {
		select {
		case ev := <-f.rets:
			if f.pending[ev.id] != ev.jid {
				continue // a copy, or another job's
			}
			delete(f.pending, ev.id)
			f.report(Report{Kind: Returned, JID: ev.jid, ID: ev.id, Data: ev.data})
			if next != nil {
				if err := next(); err != nil {
					return err
				}
			}
			timer.Reset(f.o.Wait)
		case err := <-f.errc:
			return fmt.Errorf("watching the returns: %w", err)
		case <-timer.C:
			running, err := f.stillRunning(ctx, finished)
			if err != nil {
				return err
			}
			if running {
				timer.Reset(f.o.Wait)
				continue
			}
			for _, id := range slices.Sorted(maps.Keys(f.pending)) {
				f.report(Report{Kind: NoResponse, JID: f.pending[id], ID: id})
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// stillRunning asks the awaited agents about their jobs (Salt's find_job)
// and reports whether any still runs one or has just finished it.
func (f *follow) stillRunning(ctx context.Context, finished map[string]bool) (bool, error) {
	byJID := map[string][]string{}
	for id, jid := range f.pending {
		byJID[jid] = append(byJID[jid], id)
	}
	running := false
	for jid, ids := range byJID {
		var st map[string]wire.JobState
		if err := f.c.call(ctx, rpc.ExecFindJob, rpc.FindJobRequest{JID: jid, Minions: ids}, &st); err != nil {
			return false, err
		}
		for id, s := range st {
			if s.Running || s.Done && !finished[id] {
				running = true
			}
			finished[id] = finished[id] || s.Done
			if s.Running {
				f.report(Report{Kind: StillRunning, JID: jid, ID: id})
			}
		}
	}
	return running, nil
}
