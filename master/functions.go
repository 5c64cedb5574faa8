package master

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/keys"
	"github.com/brinehq/brine/mine"
)

// provider is a part of the master that provides runner functions.
type provider interface {
	Funcs() []function.Func
}

// providers lists every part that provides runner functions besides the
// built-in ones: the one list both the master and DryRunFunctions use.
func (m *Master) providers() []provider {
	ps := []provider{m.mine, m.jobs, m.keys, m.cloud, m.orch, runners{m}}
	for _, in := range m.integrations {
		ps = append(ps, in)
	}
	return ps
}

// registerFunctions registers the functions of every provider.
func (m *Master) registerFunctions(context.Context) error {
	for _, p := range m.providers() {
		fs := p.Funcs()
		if p == provider(m.cloud) {
			fs = m.cloudLeased(fs)
		}
		if err := m.funcs.RegisterAll(fs); err != nil {
			return err
		}
	}
	return nil
}

// cloudLease is the lease of the cloud runner: among several masters, the
// functions that create and destroy VMs run on one at a time (a reaction
// redelivered to another master while the first still creates the VM
// waits for it, or takes over once it is gone).
const cloudLease = "cloud"

// cloudLeased runs the cloud functions that change something under the
// cloud lease, waiting for it while another master holds it.
func (m *Master) cloudLeased(fs []function.Func) []function.Func {
	for i, f := range fs {
		if f.ReadOnly {
			continue
		}
		run := f.Run
		fs[i].Run = func(ctx context.Context, in *function.Input) (any, error) {
			return m.underLease(ctx, cloudLease, true, func(ctx context.Context) (any, error) { return run(ctx, in) })
		}
	}
	return fs
}

// ErrNeedsMaster is what a function of an integration, the mine, jobs, keys
// or the cloud answers in a dry run: it is known and its arguments were
// checked, but it acts on the world through the master's connections.
var ErrNeedsMaster = errors.New("runs only on the master (brine reactor test has no DNS, mine, Slack or agent connection)")

// DryRunFunctions is the registry `brine reactor test` checks reactions
// against: the built-in functions run; every other function of the master
// is declared by the same code as on the master, by parts that are not
// started, and answers ErrNeedsMaster. A reaction file is therefore checked
// exactly as the master would check it.
func DryRunFunctions() (*function.Registry, error) {
	parts := &Master{mine: mine.New(nil), jobs: jobs.NewStore(nil, nil), keys: keys.New(nil, bus.Emitter{}), cloud: &cloud.Functions{},
		orch: &orchestrator{}, integrations: Integrations()}
	reg := function.NewWithBuiltins()
	for _, p := range parts.providers() {
		for _, f := range p.Funcs() {
			name := f.Name
			f.Run = func(context.Context, *function.Input) (any, error) {
				return nil, fmt.Errorf("%s: %w", name, ErrNeedsMaster)
			}
			if err := reg.Register(f); err != nil {
				return nil, err
			}
		}
	}
	return reg, nil
}

// DryRunMinions is what `brine reactor test` runs local and caller
// reactions with: they are checked (target options, arguments) like the
// live reactor checks them, and with --execute they fail with
// ErrNeedsMaster, since the agents are reached only through a master.
type DryRunMinions struct{}

// RunJob implements reactor.Minions.
func (DryRunMinions) RunJob(_ context.Context, t jobs.Targeted, _ bus.Origin, _ time.Duration) (jobs.Outcome, error) {
	return jobs.Outcome{}, fmt.Errorf("%s on %s: %w", t.Fun, jobs.TargetText(t.Tgt), ErrNeedsMaster)
}

// PublishJob implements reactor.Minions.
func (DryRunMinions) PublishJob(_ context.Context, t jobs.Targeted, _ bus.Origin) (jobs.Published, error) {
	return jobs.Published{}, fmt.Errorf("%s on %s: %w", t.Fun, jobs.TargetText(t.Tgt), ErrNeedsMaster)
}
