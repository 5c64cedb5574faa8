package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/wire"
)

// wireFleet are agents reduced to the protocol: each has a key pair of its
// own, a CURVE connection and a session (hello, accepted by auto_accept),
// and answers every job it is pushed with a return of True, delivered one
// at a time as an agent's outbox delivers them — but with no function, no
// files and no fsync. The real agents' side of a job costs this process
// far more than the master's (their outbox fsyncs a return before the job
// is done); with these the master alone sets the pace, so the stream run
// against them is the master's own ceiling on the same machine.
type wireFleet struct {
	agents []*wireAgent
	ids    []string
	// dropped counts jobs a full queue refused, failed the returns the
	// master did not acknowledge.
	dropped atomic.Int64
	failed  atomic.Int64
	wg      sync.WaitGroup
}

type wireAgent struct {
	id      string
	cli     *gateway.Client
	jobs    chan wire.Job
	pending atomic.Int64 // jobs received and not yet acknowledged
}

func wireID(i int) string { return fmt.Sprintf("bench-wire-%04d", i) }

// startWire connects n protocol agents to the master at addr, each
// accepted before it returns.
func startWire(ctx context.Context, addr string, n int) (*wireFleet, error) {
	mk, err := gateway.MasterKey(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("wire agents: %w", err)
	}
	wf := &wireFleet{agents: make([]*wireAgent, n), ids: make([]string, n)}
	var (
		mu    sync.Mutex
		first error
		next  atomic.Int64
		wg    sync.WaitGroup
	)
	// A few at a time: what is measured is the stream, not their arrival.
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				a, err := wf.dial(ctx, addr, mk, wireID(i))
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				wf.agents[i], wf.ids[i] = a, a.id
			}
		})
	}
	wg.Wait()
	if first != nil {
		wf.close()
		return nil, first
	}
	return wf, nil
}

func (wf *wireFleet) dial(ctx context.Context, addr string, mk curve.Key, id string) (*wireAgent, error) {
	kp, err := curve.GenerateKeyPair()
	if err != nil {
		return nil, fmt.Errorf("wire agent %s: %w", id, err)
	}
	// Jobs wait here for their return's turn; far more than a stream
	// publishes to one agent.
	a := &wireAgent{id: id, jobs: make(chan wire.Job, 4096)}
	onPush := func(method string, body []byte) {
		if method != wire.PushJob {
			return
		}
		job, err := wire.DecodeJob(body)
		if err != nil {
			wf.dropped.Add(1)
			return
		}
		a.pending.Add(1)
		select {
		case a.jobs <- job:
		default:
			a.pending.Add(-1)
			wf.dropped.Add(1)
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	a.cli, err = gateway.DialAgent(dctx, addr, gateway.AgentDial{Keys: kp, MasterKey: mk, OnPush: onPush})
	if err != nil {
		return nil, fmt.Errorf("wire agent %s: %w", id, err)
	}
	var rep wire.HelloReply
	if err := a.cli.Call(dctx, wire.MethodHello, wire.Hello{ID: id, Version: "bench-wire"}, &rep); err != nil {
		a.cli.Close()
		return nil, fmt.Errorf("wire agent %s: hello: %w", id, err)
	}
	if rep.State != wire.StateAccepted {
		a.cli.Close()
		return nil, fmt.Errorf("wire agent %s: the master says %q (auto_accept is on)", id, rep.State)
	}
	wf.wg.Go(func() { wf.deliver(a) })
	return a, nil
}

// deliver returns each job in turn until the connection closes.
func (wf *wireFleet) deliver(a *wireAgent) {
	for {
		var job wire.Job
		select {
		case <-a.cli.Done():
			return
		case job = <-a.jobs:
		}
		args := job.Arg
		if args == nil {
			args = []any{}
		}
		ret := wire.Return{ID: uuid.Must(uuid.NewV7()).String(), JID: job.JID, Fun: job.Fun, FunArgs: args,
			Return: true, Success: true, Out: "nested", Time: time.Now().UTC()}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := a.cli.Call(ctx, wire.MethodReturn, ret, nil); err != nil {
			wf.failed.Add(1)
		}
		cancel()
		a.pending.Add(-1)
	}
}

// quiet waits until every job received was returned.
func (wf *wireFleet) quiet(ctx context.Context, timeout time.Duration) error {
	pending := func() int64 {
		var n int64
		for _, a := range wf.agents {
			n += a.pending.Load()
		}
		return n
	}
	if err := masterproc.Poll(ctx, timeout, 50*time.Millisecond, func() bool { return pending() == 0 }); err != nil {
		return fmt.Errorf("wire agents: %d jobs not returned: %w", pending(), err)
	}
	return nil
}

func (wf *wireFleet) close() {
	for _, a := range wf.agents {
		if a != nil && a.cli != nil {
			a.cli.Close()
		}
	}
	wf.wg.Wait()
}
