// Package state is Salt's state execution module: state.apply,
// state.sls, state.highstate and their kin run SLS files from the
// master's file_roots on this agent, with the pillar the master compiled
// for it, through the state engine (package state at the repository's
// root, imported here as sls).
package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	sls "github.com/brinehq/brine/state"
	"github.com/brinehq/brine/target"
)

// Retcodes Salt's state functions end with.
const (
	retcodeCompile = 1 // a render or compile error; another state run in the way
	retcodeFailed  = 2 // a state failed
	retcodePillar  = 5 // the pillar did not compile
)

// Module declares the state functions.
func Module(env *modules.Env) []function.Func {
	s := &system{env: env, renderer: sls.NewRenderer()}
	mods := function.Param{Name: "mods", Kind: function.Any}
	common := []function.Param{
		{Name: "test", Kind: function.Any},
		{Name: "saltenv", Kind: function.String},
		{Name: "pillar", Kind: function.Any},
		{Name: "exclude", Kind: function.Any},
		{Name: "queue", Kind: function.Bool, Default: false},
		{Name: "pillarenv", Kind: function.String},
		{Name: "state_events", Kind: function.Any},
	}
	with := func(ps ...function.Param) []function.Param { return append(ps, common...) }
	apply := func(kind string) function.Handler {
		return func(ctx context.Context, in *function.Input) (any, error) { return s.apply(ctx, in, kind) }
	}
	show := func(kind string) function.Handler {
		return func(ctx context.Context, in *function.Input) (any, error) { return s.show(ctx, in, kind) }
	}
	return []function.Func{
		{Name: "state.apply", Doc: "Apply the highstate, or the SLS named in mods (comma-separated or a list).",
			Params: with(mods), VarKwargs: true, Out: "highstate", Run: apply("apply")},
		{Name: "state.sls", Doc: "Apply the SLS named in mods (comma-separated or a list) from saltenv.",
			Params: with(function.Param{Name: "mods", Kind: function.Any, Required: true}), VarKwargs: true, Out: "highstate", Run: apply("sls")},
		{Name: "state.highstate", Doc: "Apply what the top files assign to this agent.",
			Params: common, VarKwargs: true, Out: "highstate", Run: apply("highstate")},
		{Name: "state.test", Doc: "state.apply with test=True: what would change, changing nothing.",
			Params: with(mods), VarKwargs: true, Out: "highstate", Run: apply("test")},
		{Name: "state.sls_id", Doc: "Apply the one id id_ of the SLS named in mods (its requisites are not run).",
			Params: with(function.Param{Name: "id_", Kind: function.String, Required: true, Aliases: []string{"id"}},
				function.Param{Name: "mods", Kind: function.Any, Required: true}), VarKwargs: true, Out: "highstate", Run: apply("sls_id")},
		{Name: "state.single", Doc: "Run one state function: fun (module.function) on name with the other keyword arguments.",
			Params: []function.Param{{Name: "fun", Kind: function.String, Required: true}, {Name: "name", Kind: function.String, Required: true},
				{Name: "test", Kind: function.Any}, {Name: "saltenv", Kind: function.String}, {Name: "pillar", Kind: function.Any},
				{Name: "queue", Kind: function.Bool, Default: false}},
			VarKwargs: true, Out: "highstate", Run: s.single},
		{Name: "state.show_sls", Doc: "The high data of the SLS named in mods, rendered, not run.", ReadOnly: true,
			Params: with(function.Param{Name: "mods", Kind: function.Any, Required: true}), VarKwargs: true, Run: show("sls")},
		{Name: "state.show_low_sls", Doc: "The low chunks of the SLS named in mods, in run order.", ReadOnly: true,
			Params: with(function.Param{Name: "mods", Kind: function.Any, Required: true}), VarKwargs: true, Run: show("low_sls")},
		{Name: "state.show_highstate", Doc: "The high data of the highstate, rendered, not run.", ReadOnly: true,
			Params: common, VarKwargs: true, Run: show("highstate")},
		{Name: "state.show_lowstate", Doc: "The low chunks of the highstate, in run order.", ReadOnly: true,
			Params: common, VarKwargs: true, Run: show("lowstate")},
		{Name: "state.show_top", Doc: "What the top files assign to this agent: {saltenv: [sls…]}.", ReadOnly: true,
			Params: common, VarKwargs: true, Run: show("top")},
		{Name: "state.show_state_usage", Doc: "For each saltenv, the SLS files the master has and those the highstate uses.", ReadOnly: true,
			Params: common, VarKwargs: true, Run: show("usage")},
		{Name: "state.running", Doc: "The state runs in progress on this agent, as Salt words them.", ReadOnly: true,
			VarKwargs: true, Run: func(ctx context.Context, in *function.Input) (any, error) { return s.running(jidOf(in)), nil }},
	}
}

// system is the state execution module's state: the renderer (shared by
// every run) and the one-run-at-a-time lock.
type system struct {
	env      *modules.Env
	renderer *sls.Renderer
	lock     sync.Mutex
}

func jidOf(in *function.Input) string { s, _ := in.ExtraKwargs["__pub_jid"].(string); return s }

// running is state.running: the other state runs of this agent.
func (s *system) running(self string) []any {
	out := []any{}
	if s.env.Jobs == nil {
		return out
	}
	for _, j := range s.env.Jobs.Running() {
		fun, _ := j["fun"].(string)
		jid, _ := j["jid"].(string)
		if jid == self || !strings.HasPrefix(fun, "state.") || !isRun(fun) {
			continue
		}
		out = append(out, fmt.Sprintf("The function %q is running as PID %v and was started at %v with jid %s", fun, j["pid"], j["start_time"], jid))
	}
	return out
}

// isRun says which state functions change the machine (one at a time).
func isRun(fun string) bool {
	switch strings.TrimPrefix(fun, "state.") {
	case "apply", "sls", "highstate", "test", "sls_id", "single":
		return true
	}
	return false
}

// run is one state run's settings.
type run struct {
	test    bool
	saltenv string
	pillar  map[string]any
	order   *keyorder.Order // pillar's key order, as the master sent it
	jid     string
	events  bool
	// opts and grains are read once per run (opts is the agent's whole
	// configuration, decoded anew each time it is asked for).
	opts, grains map[string]any
	c            *sls.Compiler
}

// prepare reads a run's kwargs, waits for or refuses another state run
// (queue), and compiles the pillar; errs is a return to give as is.
func (s *system) prepare(ctx context.Context, in *function.Input, exclusive bool) (r *run, release func(), errs []any, code int) {
	opts := map[string]any{}
	if s.env.Opts != nil {
		opts = s.env.Opts()
	}
	r = &run{saltenv: "base", jid: jidOf(in), opts: opts, grains: s.env.Grains()}
	if v, ok := opts["saltenv"].(string); ok && v != "" {
		r.saltenv = v
	}
	if v := in.String("saltenv"); v != "" {
		r.saltenv = v
	}
	r.test = sls.Flag(opts["test"])
	if in.Has("test") && in.Value("test") != nil {
		r.test = sls.Flag(in.Value("test"))
	}
	r.events = sls.Flag(opts["state_events"]) || sls.Flag(in.Value("state_events")) || sls.Flag(in.ExtraKwargs["state_events"])
	release = func() {}
	if !exclusive {
		// Showing reads only: it neither waits for nor blocks a run.
	} else if !s.lock.TryLock() {
		if !in.Bool("queue") {
			return nil, nil, append([]any{}, s.running(r.jid)...), retcodeCompile
		}
		for !s.lock.TryLock() {
			select {
			case <-ctx.Done():
				return nil, nil, []any{"Queued state run ended before it could start: " + context.Cause(ctx).Error()}, retcodeCompile
			case <-time.After(100 * time.Millisecond):
			}
		}
		release = s.lock.Unlock
	} else {
		release = s.lock.Unlock
	}
	base := map[string]any{}
	if s.env.Pillar != nil {
		p, err := s.env.Pillar(ctx, true)
		if err != nil {
			release()
			return nil, nil, []any{"Pillar failed to render with the following messages:", "Unable to get the pillar from the master: " + err.Error()}, retcodePillar
		}
		base = p
		if s.env.PillarOrder != nil {
			r.order = s.env.PillarOrder()
		}
	}
	if perrs, ok := base["_errors"].([]any); ok && len(perrs) > 0 {
		release()
		return nil, nil, append([]any{"Pillar failed to render with the following messages:"}, perrs...), retcodePillar
	}
	r.pillar = base
	if over := in.Value("pillar"); over != nil {
		m, ok := over.(map[string]any)
		if !ok {
			release()
			return nil, nil, []any{"Pillar data must be formatted as a dictionary, unless pillar_enc is specified."}, retcodeCompile
		}
		r.pillar, _ = sls.Merge(base, m).(map[string]any)
	}
	return r, release, nil, 0
}

// compiler is the state compiler for run r, made once: SLS files from
// the master, rendered with the agent's grains, the run's pillar, opts
// and salt.
func (s *system) compiler(ctx context.Context, r *run) *sls.Compiler {
	if r.c != nil {
		return r.c
	}
	pctx := modules.WithPillar(ctx, r.pillar)
	var names []string
	if s.env.Functions != nil {
		names = s.env.Functions.Names()
	}
	// templates iterate the pillar's mappings, and those pillar.get and
	// its kin return, in the order the pillar was written, as Salt's
	// dicts keep it
	salt := jinja.Salt(names, jinja.PillarOrdered(func(name string, args []any, kwargs map[string]any) (any, error) {
		return s.env.Functions.Call(pctx, name, args, kwargs, nil)
	}, r.order))
	pillar := jinja.OrderedBy(r.pillar, r.order)
	r.c = &sls.Compiler{Renderer: s.renderer, Source: source{s.env.Files}, Vars: func(saltenv string) map[string]any {
		return map[string]any{"grains": r.grains, "pillar": pillar, "opts": r.opts, "salt": salt, "saltenv": saltenv}
	}}
	return r.c
}

// matcher matches top file targets against this agent.
func (s *system) matcher(r *run) sls.Matcher {
	facts := target.Facts{ID: s.env.ID, Grains: r.grains, Pillar: r.pillar}
	groups, _ := r.opts["nodegroups"].(map[string]any)
	return func(tgt, tgtType string) (bool, error) {
		if tgtType == "" || tgtType == "glob" {
			tgtType = "glob"
		}
		t, err := target.ParseWith(tgt, tgtType, target.Options{Nodegroups: groups, Pillar: true})
		if err != nil {
			return false, err
		}
		return t.Match(facts), nil
	}
}

// high compiles what a run applies: the SLS named (kind sls, sls_id,
// apply/test with mods) or the highstate.
func (s *system) high(ctx context.Context, in *function.Input, r *run, kind string) (*sls.High, []string) {
	c := s.compiler(ctx, r)
	mods := sls.Mods(in.Value("mods"))
	var h *sls.High
	if kind == "highstate" || ((kind == "apply" || kind == "test" || kind == "lowstate") && len(mods) == 0) {
		saltenv := ""
		if in.String("saltenv") != "" {
			saltenv = r.saltenv
		}
		top := c.Top(ctx, saltenv, s.matcher(r))
		if len(top.Errors) > 0 {
			return nil, top.Errors
		}
		h = c.CompileEnvs(ctx, top.Mods, top.Envs)
	} else {
		if len(mods) == 0 {
			return nil, []string{"No SLS named: mods is empty"}
		}
		h = c.Compile(ctx, r.saltenv, mods)
	}
	if ex := in.Value("exclude"); ex != nil && kind != "show" {
		h.Exclude(ex)
	}
	return h, nil
}

// apply runs a state run and returns Salt's return: the results by state
// key, or a list of errors.
func (s *system) apply(ctx context.Context, in *function.Input, kind string) (any, error) {
	r, release, errs, code := s.prepare(ctx, in, true)
	if errs != nil {
		modules.SetRetcode(ctx, code)
		return errs, nil
	}
	defer release()
	if kind == "test" {
		r.test = true
	}
	h, errList := s.high(ctx, in, r, kind)
	if errList != nil {
		modules.SetRetcode(ctx, retcodeCompile)
		return py.List(errList), nil
	}
	chunks := h.Chunks()
	if len(h.Errors) > 0 {
		modules.SetRetcode(ctx, retcodeCompile)
		return py.List(h.Errors), nil
	}
	if kind == "sls_id" {
		id := in.String("id_")
		var keep []*sls.Chunk
		for _, c := range chunks {
			if c.ID == id {
				c.DropRequisites()
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			modules.SetRetcode(ctx, retcodeCompile)
			return []any{fmt.Sprintf("No matches for ID '%s' found in SLS '%s' within saltenv '%s'", id, strings.Join(sls.Mods(in.Value("mods")), ","), r.saltenv)}, nil
		}
		chunks = keep
	}
	return s.runChunks(ctx, r, chunks), nil
}

// single is state.single: one state function, run as a state.
func (s *system) single(ctx context.Context, in *function.Input) (any, error) {
	r, release, errs, code := s.prepare(ctx, in, true)
	if errs != nil {
		modules.SetRetcode(ctx, code)
		return errs, nil
	}
	defer release()
	mod, fun, ok := strings.Cut(in.String("fun"), ".")
	if !ok {
		modules.SetRetcode(ctx, retcodeCompile)
		return []any{fmt.Sprintf("Invalid function passed: %q is not module.function", in.String("fun"))}, nil
	}
	args := []sls.Arg{{Key: "name", Value: in.String("name")}}
	for k, v := range in.ExtraKwargs {
		switch k {
		case "state_events", "exclude", "pillarenv":
			// The run's options, as for state.apply: not the function's.
			continue
		}
		if !strings.HasPrefix(k, "__") {
			args = append(args, sls.Arg{Key: k, Value: v})
		}
	}
	h := sls.Single(&sls.Decl{Module: mod, Fun: fun, Args: args}, r.saltenv)
	chunks := h.Chunks()
	if len(h.Errors) > 0 {
		modules.SetRetcode(ctx, retcodeCompile)
		return py.List(h.Errors), nil
	}
	return s.runChunks(ctx, r, chunks), nil
}

func (s *system) runChunks(ctx context.Context, r *run, chunks []*sls.Chunk) map[string]any {
	pctx := modules.WithPillar(ctx, r.pillar)
	runner := &sls.Runner{
		Funcs: s.env.States, Test: r.test, Failhard: sls.Flag(r.opts["failhard"]),
		Exec: func(ctx context.Context, name string, args []any, kwargs map[string]any) (any, error) {
			return s.env.Functions.Call(modules.WithPillar(ctx, r.pillar), name, args, kwargs, nil)
		},
		Template: s.compiler(ctx, r).Template(r.saltenv),
	}
	if r.events && r.jid != "" && s.env.Master != nil {
		runner.Progress = func(tag string, res map[string]any, total int) {
			ret := map[string]any{tag: res}
			_ = s.env.Master.Progress(ctx, r.jid, ret, total)
		}
	}
	ret := runner.Run(pctx, chunks)
	if sls.AnyFailed(ret) {
		modules.SetRetcode(ctx, retcodeFailed)
	}
	return ret
}

// show is the show_* functions: compiled, not run.
func (s *system) show(ctx context.Context, in *function.Input, kind string) (any, error) {
	r, release, errs, code := s.prepare(ctx, in, false)
	if errs != nil {
		modules.SetRetcode(ctx, code)
		return errs, nil
	}
	defer release()
	switch kind {
	case "top", "usage":
		c := s.compiler(ctx, r)
		top := c.Top(ctx, "", s.matcher(r))
		if len(top.Errors) > 0 {
			modules.SetRetcode(ctx, retcodeCompile)
			return py.List(top.Errors), nil
		}
		out := map[string]any{}
		for env, mods := range top.Mods {
			out[env] = py.List(mods)
		}
		if kind == "top" {
			return out, nil
		}
		return s.usage(ctx, top)
	}
	hk := "show"
	if kind == "highstate" || kind == "lowstate" {
		hk = "highstate"
	}
	h, errList := s.high(ctx, in, r, hk)
	if errList != nil {
		modules.SetRetcode(ctx, retcodeCompile)
		return py.List(errList), nil
	}
	if len(h.Errors) > 0 {
		modules.SetRetcode(ctx, retcodeCompile)
		return py.List(h.Errors), nil
	}
	if kind == "sls" || kind == "highstate" {
		// Salt's show_sls and show_highstate: the high data as rendered,
		// __extend__ and __exclude__ not applied.
		return h.Show(), nil
	}
	var chunks []*sls.Chunk
	if kind == "low_sls" {
		// Salt's show_low_sls: compile_high_data of that high data
		// (extend, exclude and requisite_in not applied).
		chunks = h.LowChunks()
	} else {
		// show_lowstate: as a run compiles them.
		chunks = h.Chunks()
	}
	if len(h.Errors) > 0 {
		modules.SetRetcode(ctx, retcodeCompile)
		return py.List(h.Errors), nil
	}
	out := make([]any, len(chunks))
	for i, c := range chunks {
		out[i] = c.Low()
	}
	return out, nil
}

// usage is state.show_state_usage: per saltenv, the SLS the master has
// and which the highstate uses.
func (s *system) usage(ctx context.Context, top *sls.Top) (any, error) {
	out := map[string]any{}
	for _, env := range top.Envs {
		files, err := s.env.Files.List(ctx, env, "")
		if err != nil {
			return nil, err
		}
		var all []any
		for _, f := range files {
			if name, ok := strings.CutSuffix(f, ".sls"); ok && name != "top" {
				name = strings.TrimSuffix(name, "/init")
				all = append(all, strings.ReplaceAll(name, "/", "."))
			}
		}
		used := py.List(top.Mods[env])
		var unused []any
		for _, a := range all {
			found := false
			for _, u := range used {
				found = found || u == a
			}
			if !found {
				unused = append(unused, a)
			}
		}
		out[env] = map[string]any{"count_all": len(all), "count_used": len(used), "count_unused": len(unused),
			"used": used, "unused": unused}
	}
	return out, nil
}

// source reads SLS files through the master's file server, cached on the
// agent by hash.
type source struct{ files modules.Files }

func (s source) Read(ctx context.Context, saltenv, name string) ([]byte, error) {
	if s.files == nil {
		return nil, errors.New("no master to read salt:// files from")
	}
	p, err := s.files.Cache(ctx, name, saltenv)
	if errors.Is(err, modules.ErrNoFile) {
		return nil, fmt.Errorf("salt://%s: %w", name, sls.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

func (s source) Envs(ctx context.Context) ([]string, error) {
	if s.files == nil {
		return nil, errors.New("no master to read salt:// files from")
	}
	return s.files.Envs(ctx)
}
