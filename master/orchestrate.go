package master

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/fileserver"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/keys"
	"github.com/brinehq/brine/lease"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
	"github.com/brinehq/brine/states/event"
	"github.com/brinehq/brine/states/module"
	"github.com/brinehq/brine/states/saltmod"
	"github.com/brinehq/brine/states/test"
)

// orchestrator is Salt's orchestrate runner: SLS files from file_roots,
// rendered and run by the same state engine as agents' states, on the
// master, whose steps (salt.function, salt.state, salt.runner,
// salt.wheel) publish jobs to agents and call the master's functions.
type orchestrator struct {
	// id is the orchestration's minion id in its return: Salt's
	// <master id>_master.
	id       string
	renderer *state.Renderer
	log      *slog.Logger
	// funcs are the master's functions, which steps call.
	funcs *function.Registry
	// roots are the file_roots in force, where orchestration SLS are.
	roots func() (fileserver.Roots, error)
	// pillar is the master's own pillar (pillar_roots compiled for id).
	pillar func(ctx context.Context, id string) (map[string]any, *keyorder.Order, error)
	// jobs keep each step's result in the job's record, so that a
	// resumed orchestration skips what it finished.
	jobs orchJobs
	// bus is where step events are fired.
	bus bus.Publisher
	// minions run salt.function and salt.state steps on agents.
	minions saltmod.Minions
	// underLease runs an orchestration under its job's lease.
	underLease func(ctx context.Context, name string, wait bool, fn func(context.Context) (any, error)) (any, error)
}

// orchJobs are the job records an orchestration reads and writes.
type orchJobs interface {
	Get(ctx context.Context, jid string) (*jobs.Job, error)
	RecordStep(ctx context.Context, jid, tag string, ret map[string]any) error
}

// masterStates are the state modules an orchestration may use, one line
// each: the salt.* steps, and those of the agents' that make sense on
// the master (test.*, event.send, module.run of the master's functions).
func (o *orchestrator) masterStates() []modules.Module {
	return []modules.Module{
		saltmod.New(o.minions),
		test.Module,
		event.Module,
		module.Module,
	}
}

// Funcs implements provider.
func (o *orchestrator) Funcs() []function.Func {
	run := []function.Param{
		{Name: "mods", Kind: function.Any, Required: true},
		{Name: "saltenv", Kind: function.String, Default: "base"},
		{Name: "test", Kind: function.Any},
		{Name: "exclude", Kind: function.Any},
		{Name: "pillar", Kind: function.Map},
		{Name: "pillarenv", Kind: function.String},
		{Name: "orchestration_jid", Kind: function.String},
	}
	orch := function.Func{
		Name: "state.orchestrate", Out: "highstate",
		Doc: "Run the orchestration SLS named in mods (from file_roots) on the master: its steps publish jobs to " +
			"agents (salt.function, salt.state) and call the master's functions (salt.runner, salt.wheel).",
		Params: run,
		Run:    o.leased(o.orchestrate),
	}
	alias := orch
	alias.Name, alias.Doc = "state.orch", "The same as state.orchestrate."
	return []function.Func{orch, alias,
		{
			Name: "state.orchestrate_single", Out: "highstate",
			Doc: "Run one orchestration step: fun (salt.function, salt.state…) with name and the other keywords.",
			Params: []function.Param{
				{Name: "fun", Kind: function.String, Required: true},
				{Name: "name", Kind: function.String, Required: true},
				{Name: "test", Kind: function.Any},
				{Name: "pillar", Kind: function.Map},
			},
			VarKwargs: true,
			Run:       o.leased(o.single),
		},
		{
			Name: "state.orchestrate_high", Out: "highstate",
			Doc: "Run high data given as data ({id: {module.function: [arguments]}}) as an orchestration.",
			Params: []function.Param{
				{Name: "data", Kind: function.Map, Required: true},
				{Name: "test", Kind: function.Any},
				{Name: "pillar", Kind: function.Map},
			},
			Run: o.leased(o.high),
		},
		{
			Name: "state.orch_show_sls", ReadOnly: true,
			Doc:    "The high data of the orchestration SLS named in mods, rendered, not run.",
			Params: run,
			Run:    o.show,
		},
		{
			Name: "state.orchestrate_show_sls", ReadOnly: true,
			Doc:    "The high data of the orchestration SLS named in mods, rendered, not run (state.orch_show_sls).",
			Params: run,
			Run:    o.show,
		},
	}
}

// env is the Env the master's state modules run with: the master's
// functions, its events.
func (o *orchestrator) env(ctx context.Context) (*modules.Env, error) {
	env := &modules.Env{
		ID:        o.id,
		Grains:    func() map[string]any { return map[string]any{"id": o.id} },
		Opts:      func() map[string]any { return map[string]any{"id": o.id, "__role": "master"} },
		Log:       o.log,
		Functions: o.funcs,
	}
	env.States = function.New()
	for _, mod := range o.masterStates() {
		if err := env.States.RegisterAll(mod(env)); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// compiler renders orchestration SLS files from file_roots with the
// master's pillar (pillar_roots for <id>_master) and pillar= merged over
// it.
func (o *orchestrator) compiler(ctx context.Context, in *function.Input) (*state.Compiler, map[string]any, error) {
	roots, err := o.roots()
	if err != nil {
		return nil, nil, err
	}
	pillar, order, err := o.pillar(ctx, o.id)
	if err != nil {
		return nil, nil, err
	}
	if over := in.Map("pillar"); over != nil {
		pillar, _ = state.Merge(pillar, over).(map[string]any)
	}
	names := o.funcs.Names()
	// salt['pillar.get'] in the SLS reads the run's pillar, pillar= included,
	// its mappings in the order the pillar was written
	pctx := modules.WithPillar(ctx, pillar)
	salt := jinja.Salt(names, jinja.PillarOrdered(func(name string, args []any, kwargs map[string]any) (any, error) {
		return o.funcs.Call(pctx, name, args, kwargs, nil)
	}, order))
	grains := map[string]any{"id": o.id}
	opts := map[string]any{"id": o.id}
	// the template's pillar iterates in the order it was written
	tpillar := jinja.OrderedBy(pillar, order)
	return &state.Compiler{Renderer: o.renderer, Source: state.Roots(roots), Vars: func(saltenv string) map[string]any {
		return map[string]any{"grains": grains, "pillar": tpillar, "opts": opts, "salt": salt, "saltenv": saltenv}
	}}, pillar, nil
}

// orchestrate is state.orchestrate: Salt's return
// {data: {<id>_master: results}, outputter: highstate, retcode}.
func (o *orchestrator) orchestrate(ctx context.Context, in *function.Input) (any, error) {
	c, pillar, err := o.compiler(ctx, in)
	if err != nil {
		return nil, err
	}
	h := c.Compile(ctx, in.String("saltenv"), state.Mods(in.Value("mods")))
	if ex := in.Value("exclude"); ex != nil {
		h.Exclude(ex)
	}
	chunks := h.Chunks()
	if len(h.Errors) > 0 {
		return o.reply(py.List(h.Errors), 1), nil
	}
	if log := o.log; log.Enabled(ctx, slog.LevelDebug) {
		for _, c := range chunks {
			log.Debug("orchestration step compiled", "mods", in.Value("mods"), "step", c.Tag, "order", c.Order, "args", jobs.Redact(c.Args))
		}
	}
	return o.runChunks(ctx, in, c, pillar, chunks)
}

func (o *orchestrator) runChunks(ctx context.Context, in *function.Input, c *state.Compiler, pillar map[string]any, chunks []*state.Chunk) (any, error) {
	env, err := o.env(ctx)
	if err != nil {
		return nil, err
	}
	saltenv := in.String("saltenv")
	if saltenv == "" {
		saltenv = "base"
	}
	r := &state.Runner{
		Funcs: env.States,
		Test:  state.Flag(in.Value("test")),
		Exec: func(ctx context.Context, name string, args []any, kwargs map[string]any) (any, error) {
			return o.funcs.Call(ctx, name, args, kwargs, nil)
		},
		Template: c.Template(saltenv),
	}
	run := jobs.RunOf(ctx)
	if run != nil {
		// A job the master resumes has the steps it finished before.
		if j, err := o.jobs.Get(ctx, run.JID); err == nil && len(j.Steps) > 0 {
			r.Done = map[string]map[string]any{}
			for tag, res := range j.Steps {
				if m, ok := res.(map[string]any); ok {
					r.Done[tag] = m
				}
			}
			o.log.Info("resuming the orchestration", "jid", run.JID, "finished_steps", len(r.Done))
		}
		fire := run.Fire(o.bus)
		ctx = function.WithFire(ctx, fire)
		// A step's start is an event too, so that a person watching sees
		// it begin: salt/run/<jid>/step/<n> (not a step result). It is
		// stored while the step runs, and before the step's end is fired.
		var started atomic.Int64
		var mu sync.Mutex
		starts := map[string]chan struct{}{}
		r.Starting = func(tag string) {
			n := started.Add(1) - 1
			done := make(chan struct{})
			mu.Lock()
			starts[tag] = done
			mu.Unlock()
			go func() {
				defer close(done)
				data := map[string]any{"tag": tag, "phase": "start", "jid": run.JID}
				if err := fire(ctx, jobs.RunTag(run.JID, fmt.Sprintf("step/%d", n)), data); err != nil {
					o.log.Error("orchestrate: step start event", "jid", run.JID, "err", err)
				}
			}()
		}
		r.Progress = func(tag string, res map[string]any, total int) {
			// The step is kept in the job's record, and its end fired,
			// before the next step starts: a master killed now resumes
			// after this step. The two writes go together.
			recorded := make(chan struct{})
			go func() {
				defer close(recorded)
				if err := o.jobs.RecordStep(ctx, run.JID, tag, res); err != nil {
					o.log.Error("orchestrate: recording a step", "jid", run.JID, "step", tag, "err", err)
				}
			}()
			mu.Lock()
			start := starts[tag]
			delete(starts, tag)
			mu.Unlock()
			if start != nil {
				<-start
			}
			n := fmt.Sprint(res["__run_num__"])
			data := map[string]any{"tag": tag, "ret": jobs.Redact(res), "len": total, "jid": run.JID}
			if err := fire(ctx, jobs.RunTag(run.JID, "prog/"+n), data); err != nil {
				o.log.Error("orchestrate: progress event", "jid", run.JID, "err", err)
			}
			<-recorded
		}
	}
	ctx = modules.WithPillar(ctx, pillar)
	ret := r.Run(ctx, chunks)
	code := 0
	if state.AnyFailed(ret) {
		code = 1
	}
	return o.reply(ret, code), nil
}

// reply is Salt's orchestrate return.
func (o *orchestrator) reply(data any, retcode int) map[string]any {
	return map[string]any{"data": map[string]any{o.id: data}, "outputter": "highstate", "retcode": retcode}
}

// single is state.orchestrate_single.
func (o *orchestrator) single(ctx context.Context, in *function.Input) (any, error) {
	c, pillar, err := o.compiler(ctx, in)
	if err != nil {
		return nil, err
	}
	mod, fun, ok := strings.Cut(in.String("fun"), ".")
	if !ok {
		return nil, fmt.Errorf("fun %q is not module.function", in.String("fun"))
	}
	args := []state.Arg{{Key: "name", Value: in.String("name")}}
	for k, v := range in.ExtraKwargs {
		if !strings.HasPrefix(k, "__") {
			args = append(args, state.Arg{Key: k, Value: v})
		}
	}
	h := state.Single(&state.Decl{Module: mod, Fun: fun, Args: args}, "base")
	chunks := h.Chunks()
	if len(h.Errors) > 0 {
		return o.reply(py.List(h.Errors), 1), nil
	}
	return o.runChunks(ctx, in, c, pillar, chunks)
}

// highName is the SLS name state.orchestrate_high's data is compiled as.
const highName = "__orchestrate_high__"

// high is state.orchestrate_high: the data compiled as one SLS file of its
// own (same engine, same checks), beside file_roots for what it includes.
func (o *orchestrator) high(ctx context.Context, in *function.Input) (any, error) {
	c, pillar, err := o.compiler(ctx, in)
	if err != nil {
		return nil, err
	}
	text, err := yaml.Marshal(in.Map("data"))
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	c.Source = overlay{Source: c.Source, name: highName + ".sls", text: text}
	h := c.Compile(ctx, "base", []string{highName})
	chunks := h.Chunks()
	if len(h.Errors) > 0 {
		return o.reply(py.List(h.Errors), 1), nil
	}
	return o.runChunks(ctx, in, c, pillar, chunks)
}

// overlay is a Source with one more file.
type overlay struct {
	state.Source
	name string
	text []byte
}

func (s overlay) Read(ctx context.Context, saltenv, name string) ([]byte, error) {
	if name == s.name {
		return s.text, nil
	}
	return s.Source.Read(ctx, saltenv, name)
}

// show is state.orch_show_sls.
func (o *orchestrator) show(ctx context.Context, in *function.Input) (any, error) {
	c, _, err := o.compiler(ctx, in)
	if err != nil {
		return nil, err
	}
	h := c.Compile(ctx, in.String("saltenv"), state.Mods(in.Value("mods")))
	if len(h.Errors) > 0 {
		return py.List(h.Errors), nil
	}
	return h.Show(), nil
}

// orchMinions is how orchestration steps reach agents: a target that
// selects nobody is an outcome with no minions (Salt's step comment says
// so), not an error.
type orchMinions struct{ p *publisher }

// RunJob implements saltmod.Minions.
func (x orchMinions) RunJob(ctx context.Context, t jobs.Targeted, o bus.Origin, wait time.Duration) (jobs.Outcome, error) {
	out, err := x.p.Run(ctx, t, o, wait)
	if errors.Is(err, ErrNoMinions) {
		return out, nil
	}
	return out, err
}

// Targets implements saltmod.Minions.
func (x orchMinions) Targets(ctx context.Context, tgt any, tgtType string) ([]string, error) {
	ids, _, err := x.p.Targets(ctx, tgt, tgtType)
	return ids, err
}

// isOrchestration says whether a runner job's function is one this
// master resumes (Salt's names, as runner events carry them).
func isOrchestration(fun string) bool {
	switch strings.TrimPrefix(fun, "runner.") {
	case "state.orchestrate", "state.orch":
		return true
	}
	return false
}

// resumeOrchestrations runs again, as the same jobs, the orchestrations an
// earlier run of this master began and did not end: the steps they
// finished are kept, the others run.
func (m *Master) resumeOrchestrations() {
	for _, j := range m.resume {
		m.resumeOrchestration(m.ctx, j)
	}
	m.resume = nil
}

// resumeOrphanOrchestrations resumes the unfinished orchestrations of
// masters that are gone, each on the master that wins its lease.
func (m *Master) resumeOrphanOrchestrations(ctx context.Context) {
	list, err := m.jobs.List(ctx, jobs.Filter{Active: true})
	if err != nil {
		m.component("orchestrate").Error("listing the orchestrations of a dead master", "err", err)
		return
	}
	for _, j := range list {
		owner, _, _ := strings.Cut(strings.TrimPrefix(j.Source, "brine://"), "/")
		if j.Kind == jobs.KindRun && isOrchestration(j.Fun) && !m.cluster.alive(owner) {
			m.resumeOrchestration(ctx, j)
		}
	}
}

// resumeOrchestration resumes an orchestration from its first unfinished
// step, under its lease: if another master holds it, that master runs it;
// if a master that is gone holds it, it is resumed once that lease expires.
func (m *Master) resumeOrchestration(ctx context.Context, j *jobs.Job) {
	l, err := m.cluster.leases.Acquire(ctx, orchLease(j.JID))
	var held *lease.ErrHeld
	switch {
	case err == nil:
		m.runResumed(j, l)
	case errors.As(err, &held) && !m.cluster.alive(held.Holder.Master):
		// The dead master renewed the orchestration's lease apart from its
		// own, so the one may outlive the other by a renewal period.
		m.grp.Go(func() error { m.resumeWhenFree(j.JID); return nil })
	default:
		m.component("orchestrate").Info("not resuming an orchestration another master runs", "jid", j.JID, "err", err)
	}
}

// resumeWhenFree waits (two lease times at most) for the lease of
// orchestration jid that a dead master held to expire, and resumes it
// unless another survivor won the lease and finished the job meanwhile.
func (m *Master) resumeWhenFree(jid string) {
	ctx, cancel := context.WithTimeout(m.ctx, 2*m.cluster.leases.TTL())
	defer cancel()
	l, err := m.cluster.leases.Wait(ctx, orchLease(jid))
	if err != nil {
		m.component("orchestrate").Info("not resuming an orchestration another master runs", "jid", jid, "err", err)
		return
	}
	j, err := m.jobs.Get(m.ctx, jid)
	if err != nil || !j.Active() {
		l.Release()
		return
	}
	m.runResumed(j, l)
}

// runResumed runs orchestration j again under its lease l, which it
// releases when done.
func (m *Master) runResumed(j *jobs.Job, l *lease.Lease) {
	log := m.component("orchestrate")
	args, kwargs := splitFunArgs(j.Arg)
	name := strings.TrimPrefix(j.Fun, "runner.")
	r := &jobs.Run{JID: j.JID, Fun: j.Fun, FunArgs: j.Arg, User: j.User, Origin: bus.Origin{Source: j.Source}, Start: j.StartTime}
	log.Warn("resuming an orchestration its master did not finish", "jid", j.JID, "source", j.Source, "finished_steps", len(j.Steps))
	m.grp.Go(func() error {
		defer l.Release()
		lctx, cancel := context.WithCancel(m.ctx)
		defer cancel()
		defer context.AfterFunc(l.Context(), cancel)()
		m.agentsBack(lctx, resumeWait)
		if _, err := r.Resume(lctx, m.funcs, m.bus, name, args, kwargs); err != nil && lctx.Err() == nil {
			log.Error("resumed orchestration", "jid", j.JID, "err", err)
		}
		return nil
	})
}

// orchLease is the lease of the orchestration jid: the master that runs
// it holds it, and another resumes it when that one is gone.
func orchLease(jid string) string { return "orch." + jid }

// leased runs an orchestration function under its job's lease (the
// shared lease is taken again, within this master, by a resumption).
func (o *orchestrator) leased(fn function.Handler) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		r := jobs.RunOf(ctx)
		if r == nil {
			return fn(ctx, in)
		}
		return o.underLease(ctx, orchLease(r.JID), false, func(ctx context.Context) (any, error) { return fn(ctx, in) })
	}
}

// splitFunArgs reads Salt's fun_args: positional arguments, then the
// keyword arguments as one mapping.
func splitFunArgs(funArgs []any) ([]any, map[string]any) {
	if n := len(funArgs); n > 0 {
		if kw, ok := funArgs[n-1].(map[string]any); ok {
			return funArgs[:n-1], kw
		}
	}
	return funArgs, nil
}

// resumeWait bounds how long a resumed orchestration waits for the agents
// to reconnect to the restarted master before its next step.
const resumeWait = 20 * time.Second

// agentsBack waits until every agent with an accepted key is connected
// again, or max: a step published before would find them away.
func (m *Master) agentsBack(ctx context.Context, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		l, err := m.keys.List(ctx, keys.Accepted)
		if err == nil && len(m.connected(ctx)) >= len(l[keys.ListName(keys.Accepted)]) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
