package master

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/modules"
	pillarmod "github.com/brinehq/brine/modules/pillar"
	"github.com/brinehq/brine/pillar"
	"github.com/brinehq/brine/target"
)

// runners are Salt runner functions an operator reaches for that read
// what the master keeps of its agents — cache.grains and cache.pillar,
// jobs.last_run, manage.versions, pillar.show_pillar, doc.* — and the
// pillar functions (pillar.get, items…) reading the master's own pillar,
// which orchestration templates call as Salt's master minion's.
type runners struct{ m *Master }

// versionsWait is how long manage.versions waits for test.version's
// returns: Salt's default timeout.
const versionsWait = 5 * time.Second

// Funcs implements provider.
func (r runners) Funcs() []function.Func {
	tgt := []function.Param{{Name: "tgt", Kind: function.Any}, {Name: "tgt_type", Kind: function.String, Default: "glob", Aliases: []string{"expr_form"}}}
	fs := []function.Func{
		{Name: "cache.grains", ReadOnly: true, VarKwargs: true,
			Doc:    "The grains the master holds of the agents tgt selects (as they last reported them): {id: grains}.",
			Params: []function.Param{{Name: "tgt", Kind: function.Any, Required: true}, tgt[1]}, Run: r.cacheGrains},
		{Name: "cache.pillar", ReadOnly: true, VarKwargs: true,
			Doc:    "The pillar this master last compiled for the agents tgt selects (all without tgt): {id: pillar}.",
			Params: tgt, Run: r.cachePillar},
		{Name: "cache.mine", ReadOnly: true, VarKwargs: true,
			Doc:    "The mine data of the hosts tgt selects (all without tgt): {id: {function: value}}.",
			Params: tgt, Run: r.cacheMine},
		{Name: "jobs.last_run", ReadOnly: true,
			Doc: "The newest job kept (of function, of target: globs), as jobs.print_job shows it; False when there is none.",
			Params: []function.Param{{Name: "ext_source", Kind: function.Any}, {Name: "outputter", Kind: function.Any},
				{Name: "metadata", Kind: function.Any}, {Name: "function", Kind: function.String}, {Name: "target", Kind: function.String},
				{Name: "display_progress", Kind: function.Bool, Default: false}},
			Run: r.lastRun},
		{Name: "manage.versions",
			Doc: "Runs test.version on every agent and sorts them against the master's version: {'Up to date': {id: version}, " +
				"'Minion requires update': …, 'Minion newer than master': …, 'Minion offline': {id: False}, 'Master': version}.",
			Run: r.versions},
		{Name: "pillar.show_pillar", ReadOnly: true, VarKwargs: true,
			Doc: "Compile the pillar of minion (default '*') on the master, with the grains it last reported; other keywords " +
				"(but saltenv and pillarenv) set grains.",
			Params: []function.Param{{Name: "minion", Kind: function.String, Default: "*"}}, Run: r.showPillar},
		{Name: "doc.runner", ReadOnly: true, Doc: "The documentation of the master's runner functions: {function: doc}.",
			Run: func(context.Context, *function.Input) (any, error) { return r.docs(false), nil }},
		{Name: "doc.wheel", ReadOnly: true, Doc: "The documentation of the master's wheel functions (key.*): {function: doc}.",
			Run: func(context.Context, *function.Input) (any, error) { return r.docs(true), nil }},
		{Name: "doc.execution", Doc: "The documentation of every execution function, as the agents' sys.doc gives it: {function: doc}.",
			Run: r.docExecution},
	}
	fs = append(fs, r.fileserverFuncs()...)
	fs = append(fs, r.manageFuncs()...)
	fs = append(fs, r.manageStateFuncs()...)
	// The master's pillar (pillar_roots compiled for <id>_master), which
	// orchestration SLS read with salt['pillar.get'] as Salt's do.
	env := &modules.Env{Pillar: func(ctx context.Context, _ bool) (map[string]any, error) { return r.masterPillar(ctx) }}
	for _, f := range pillarmod.Module(env) {
		f.Doc += " (Of the master's pillar: pillar_roots compiled for <id>_master.)"
		fs = append(fs, f)
	}
	return fs
}

// agentGrains are the grains an agent reported of itself: a record the
// cloud alone wrote has no id grain, and is no agent's.
func agentGrains(h *mine.Host) (map[string]any, bool) {
	if h == nil || h.Grains == nil {
		return nil, false
	}
	if _, ok := h.Grains["id"]; !ok {
		return nil, false
	}
	return h.Grains, true
}

func (r runners) cacheGrains(ctx context.Context, in *function.Input) (any, error) {
	hosts, err := r.m.mine.Select(ctx, in.Value("tgt"), in.String("tgt_type"))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, h := range hosts {
		if g, ok := agentGrains(h); ok {
			out[h.ID] = g
		}
	}
	return out, nil
}

func (r runners) cachePillar(ctx context.Context, in *function.Input) (any, error) {
	p := r.m.pillars
	p.mu.Lock()
	last := maps.Clone(p.last)
	p.mu.Unlock()
	tgt := in.Value("tgt")
	if tgt == nil {
		tgt = "*"
	}
	t, err := target.Parse(tgt, in.String("tgt_type"))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for id, pl := range last {
		facts := target.Facts{ID: id, Pillar: pl}
		if h, err := r.m.mine.Get(ctx, id); err == nil {
			facts.Grains = h.Grains
		}
		if t.Match(facts) {
			out[id] = pl
		}
	}
	return out, nil
}

func (r runners) cacheMine(ctx context.Context, in *function.Input) (any, error) {
	tgt := in.Value("tgt")
	if tgt == nil {
		tgt = "*"
	}
	hosts, err := r.m.mine.Select(ctx, tgt, in.String("tgt_type"))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, h := range hosts {
		data := map[string]any{}
		for _, fun := range []string{mine.FunIPAddrs, mine.FunIPAddrs6} {
			if v, ok := h.Value(fun); ok {
				data[fun] = v
			}
		}
		maps.Copy(data, h.Data)
		if len(data) > 0 {
			out[h.ID] = data
		}
	}
	return out, nil
}

func (r runners) lastRun(ctx context.Context, in *function.Input) (any, error) {
	if md := in.Value("metadata"); md != nil {
		if _, ok := md.(map[string]any); !ok {
			// Salt logs that metadata must be a dictionary and returns False.
			return false, nil
		}
		return nil, fmt.Errorf("jobs.last_run: metadata: brine's job store is not searched by metadata")
	}
	if in.Value("ext_source") != nil {
		return nil, fmt.Errorf("jobs.last_run: ext_source: brine keeps jobs in its own store, there is no returner to read")
	}
	list, err := r.m.jobs.List(ctx, jobs.Filter{Fun: in.String("function")})
	if err != nil {
		return nil, err
	}
	var tgt *fnmatch.Glob
	if t := in.String("target"); t != "" {
		tgt = fnmatch.Compile(t)
	}
	last := ""
	for _, j := range list {
		if tgt != nil && !tgt.Match(jobs.TargetText(j.Tgt)) {
			continue
		}
		if j.JID > last {
			last = j.JID
		}
	}
	if last == "" {
		return false, nil
	}
	return r.m.funcs.Call(ctx, "jobs.print_job", []any{last}, nil, nil)
}

// versionLabels are Salt's manage.versions keys, by comparison.
var versionLabels = map[int]string{-2: "Minion offline", -1: "Minion requires update", 0: "Up to date", 1: "Minion newer than master"}

func (r runners) versions(ctx context.Context, _ *function.Input) (any, error) {
	master := r.m.opts.Version
	user := "root"
	o := bus.Origin{Source: r.m.source}
	if run := jobs.RunOf(ctx); run != nil {
		o, user = run.Origin, run.User
	}
	t := jobs.Targeted{JID: jobs.NewJID(), Fun: "test.version", Arg: []any{}, Tgt: "*", TgtType: "glob", User: user}
	out, err := r.m.publisher.Run(ctx, t, o, versionsWait)
	if err != nil && !errors.Is(err, ErrNoMinions) {
		return nil, err
	}
	ret := map[string]any{"Master": master}
	for _, id := range out.Minions {
		res, ok := out.Returns[id]
		diff, v := -2, any(false)
		if s, isStr := res.Return.(string); ok && res.Retcode == 0 && isStr {
			diff, v = compareVersions(s, master), s
		}
		label := versionLabels[diff]
		group, _ := ret[label].(map[string]any)
		if group == nil {
			group = map[string]any{}
			ret[label] = group
		}
		group[id] = v
	}
	return ret, nil
}

// compareVersions compares an agent's version with the master's: numeric
// releases ("1.4.2", "v1.4.2") by their numbers; any other pair (builds
// named by a commit, "devel") is equal only when identical, and an agent
// that differs is one that requires an update — the master's version is
// the one wanted.
func compareVersions(agent, master string) int {
	a, aok := versionNumbers(agent)
	m, mok := versionNumbers(master)
	if !aok || !mok {
		if agent == master {
			return 0
		}
		return -1
	}
	return slices.Compare(a, m)
}

// versionNumbers reads a release as numbers: "1.4.2", "v1.4.2", or what
// `git describe --tags` stamps on a build (brine version, the agent's
// brineversion grain): "v1.4.2-3-gabc1234" is 3 commits after v1.4.2,
// newer than it and older than v1.4.3, so the commits after the tag are a
// last number; a "-dirty" tree orders as its commit.
func versionNumbers(v string) ([]int, bool) {
	v = strings.TrimSuffix(strings.TrimPrefix(v, "v"), "-dirty")
	after := 0
	if rel, rest, ok := strings.Cut(v, "-"); ok {
		n, hash, ok := strings.Cut(rest, "-g")
		c, err := strconv.Atoi(n)
		if !ok || err != nil || c < 0 || hash == "" || strings.Trim(hash, "0123456789abcdef") != "" {
			return nil, false
		}
		v, after = rel, c
	}
	if v == "" {
		return nil, false
	}
	var out []int
	for p := range strings.SplitSeq(v, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return append(out, after), true
}

// showPillar is Salt's pillar.show_pillar: the pillar compiled for minion
// with the grains it last reported ({"fqdn": minion} when none), keywords
// other than saltenv and pillarenv set as grains. It is not kept as the
// agent's pillar (what pillar targets match).
func (r runners) showPillar(ctx context.Context, in *function.Input) (any, error) {
	id := in.String("minion")
	var grains map[string]any
	h, err := r.m.mine.Get(ctx, id)
	switch {
	case err == nil:
		if g, ok := agentGrains(h); ok {
			grains = maps.Clone(g)
		} else {
			grains = map[string]any{"fqdn": id}
		}
	case errors.Is(err, mine.ErrNotFound) || errors.Is(err, mine.ErrInvalidID):
		grains = map[string]any{"fqdn": id}
	default:
		return nil, err
	}
	pillarenv := ""
	for k, v := range in.ExtraKwargs {
		switch {
		case strings.HasPrefix(k, "__"):
		case k == "saltenv":
		case k == "pillarenv":
			pillarenv = fmt.Sprint(v)
		default:
			grains[k] = v
		}
	}
	pl, _, errs := r.m.pillars.compileFor(ctx, id, grains, pillarenv)
	if len(errs) > 0 {
		pillar.Errors(pl, errs)
	}
	return pl, nil
}

// masterPillar is the master's own pillar (pillars.ofMaster).
func (r runners) masterPillar(ctx context.Context) (map[string]any, error) {
	pl, _, err := r.m.pillars.ofMaster(ctx, r.m.cfg.Settings.ID+"_master")
	return pl, err
}

// docs are the master's functions' documentation, the wheel ones or the
// others.
func (r runners) docs(wheel bool) map[string]any {
	out := map[string]any{}
	for _, n := range r.m.funcs.Names() {
		if r.m.funcs.Wheel(n) != wheel {
			continue
		}
		if f, ok := r.m.funcs.Lookup(n); ok {
			out[n] = f.Doc
		}
	}
	return out
}

// docExecution is Salt's doc.execution: sys.doc run on every agent, the
// returns merged.
func (r runners) docExecution(ctx context.Context, _ *function.Input) (any, error) {
	user := "root"
	o := bus.Origin{Source: r.m.source}
	if run := jobs.RunOf(ctx); run != nil {
		o, user = run.Origin, run.User
	}
	t := jobs.Targeted{JID: jobs.NewJID(), Fun: "sys.doc", Arg: []any{}, Tgt: "*", TgtType: "glob", User: user}
	out, err := r.m.publisher.Run(ctx, t, o, versionsWait)
	if err != nil && !errors.Is(err, ErrNoMinions) {
		return nil, err
	}
	docs := map[string]any{}
	for _, id := range slices.Sorted(maps.Keys(out.Returns)) {
		if d, ok := out.Returns[id].Return.(map[string]any); ok {
			maps.Copy(docs, d)
		}
	}
	return docs, nil
}
