// Package reactor runs Salt reaction files on brine's bus.
//
// A mapping (Salt's `reactor:` list) sends events whose tag matches a glob to
// reaction files; each file is Jinja rendered with the event (`tag`, `data`,
// and `salt` for read-only look-ups), parsed as YAML in any of Salt's
// formats, and compiled into calls. Where Salt's reactor is weak, this one
// is not: every event is read from a durable consumer and acknowledged only
// when its reactions finished or were dead-lettered; each reaction run is a
// job with salt/run/<jid>/new and ret events (salt/wheel/<jid>/… for wheel
// reactions, as Salt's wheel client); failures retry with backoff;
// `require` and `onfail` are honoured; errors are fired as
// brine/reactor/error events with file and line; and causal depth cuts loops.
//
// The package depends on the bus and on the Functions interface, never on
// the integrations that provide functions.
package reactor

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/brinehq/brine/internal/jinja"
)

// Functions is the function registry as the reactor uses it;
// *function.Registry implements it. Call's fire argument lets a function
// fire events that the reactor links to the event being reacted to.
type Functions interface {
	Call(ctx context.Context, name string, args []any, kwargs map[string]any,
		fire func(ctx context.Context, tag string, data map[string]any) error) (any, error)
	Check(name string, args []any, kwargs map[string]any) error
	Accepts(name, param string) bool
	ReadOnly(name string) bool
	// Wheel reports whether name may run as a wheel.<name> reaction.
	Wheel(name string) bool
	Names() []string
}

// Reactor maps events to reaction files and runs them. Plan and Execute work
// without a bus (`brine reactor test`); Run attaches to one.
type Reactor struct {
	funcs Functions
	// minions runs local and caller reactions (nil: they fail clearly).
	minions Minions
	render  *renderer
	log     *slog.Logger
	source  string

	cfg  atomic.Pointer[Config]
	mapv atomic.Pointer[mapping]
	// lookups are the read-only functions templates may call, listed at
	// New and Reload.
	lookups atomic.Pointer[[]string]
	stats   Stats
	// loaded is the fingerprint of the files the mapping in force was
	// built from; Watch reloads when the disk no longer matches it.
	loaded atomic.Pointer[[]string]
	// remapped tells Run that the mapping changed (its bus filter may too);
	// generation counts the changes and applied is the last one Run has
	// subscribed for, so Reload can wait until the bus filter follows.
	remapped   chan struct{}
	generation atomic.Uint64
	applied    applied

	// Set by Run.
	runtime atomic.Pointer[runtime]
}

// Option configures a Reactor.
type Option func(*Reactor)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(r *Reactor) { r.log = l } }

// WithSource sets the source of the events and jobs the reactor fires
// (default Source): brine://<master>/reactor tells which master ran a job.
func WithSource(s string) Option { return func(r *Reactor) { r.source = s } }

// New builds a reactor for cfg, resolving the mapping's files.
func New(cfg Config, funcs Functions, opts ...Option) *Reactor {
	r := &Reactor{funcs: funcs, render: newRenderer(), log: slog.Default(), source: Source, remapped: make(chan struct{}, 1)}
	for _, o := range opts {
		o(r)
	}
	if err := r.Reload(cfg); err != nil {
		r.log.Error("reactor: mapping not loaded; reacting to nothing until it is fixed", "err", err)
	}
	return r
}

// Reload swaps in a new configuration: the mapping is recompiled and its
// file globs and salt:// paths resolved again. Events already being handled
// finish with the old mapping. If cfg names a mapping file, it is re-read;
// when that fails the last good mapping stays. Workers, MaxInFlight,
// Consumer and AckWait take effect at the next Run. While Run is attached,
// Reload returns once the bus filters by the new mapping.
func (r *Reactor) Reload(cfg Config) error {
	cfg.setDefaults()
	var err error
	var mapFP []string // stat before reading: a later edit triggers another reload
	if cfg.MappingFile != "" {
		mapFP = fingerprint(&Config{MappingFile: cfg.MappingFile}, &mapping{})
		var m []MapEntry
		if m, err = readMappingFile(cfg.MappingFile); err == nil {
			cfg.Mapping = m
		} else if old := r.cfg.Load(); old != nil {
			cfg.Mapping = old.Mapping // keep reacting with the last good mapping
		}
	}
	var lookups []string
	for _, name := range r.funcs.Names() {
		if r.funcs.ReadOnly(name) {
			lookups = append(lookups, name)
		}
	}
	r.lookups.Store(&lookups)
	r.render.setRoots(cfg.FileRoots)
	m := compileMapping(cfg.Mapping, cfg.FileRoots)
	fp := append(mapFP, fingerprint(&Config{}, m)...)
	r.loaded.Store(&fp)
	r.cfg.Store(&cfg)
	r.mapv.Store(m)
	g := r.generation.Add(1)
	select {
	case r.remapped <- struct{}{}:
	default:
	}
	if r.runtime.Load() != nil {
		// An event published after Reload returns must be filtered by the
		// new mapping: the durable consumer has already moved past events
		// its old filter skipped, so they would never come back.
		r.applied.wait(g, remapTimeout)
	}
	return err
}

// Config returns the configuration in force.
func (r *Reactor) Config() Config { return *r.cfg.Load() }

// Plan is what an event triggers: the files that matched, their rendered
// text, the reactions compiled from them and every error on the way.
type Plan struct {
	Tag       string
	Files     []FilePlan
	Reactions []*Reaction
	Errors    []*Error
}

// FilePlan is one matched reaction file.
type FilePlan struct {
	// Glob is the mapping entry that matched; Spec the file as mapped.
	Glob, Spec string
	Path       string
	Rendered   []byte
	Reactions  []*Reaction
	Errors     []*Error
}

// Plan matches tag against the mapping and renders and compiles every file
// it maps to. A bad file yields errors and does not stop the others.
func (r *Reactor) Plan(ctx context.Context, tag string, data map[string]any) *Plan {
	return r.plan(ctx, tag, data, true)
}

// plan is Plan; display fills FilePlan.Rendered, which only a person reads
// (the live reactor does without it).
func (r *Reactor) plan(ctx context.Context, tag string, data map[string]any, display bool) *Plan {
	p := &Plan{Tag: tag}
	entries := r.mapv.Load().match(tag)
	if len(entries) == 0 {
		return p
	}
	if data == nil {
		data = map[string]any{}
	}
	var salt map[string]any // built once, if a file uses it
	saltFn := func() map[string]any {
		if salt == nil {
			salt = r.saltObject(ctx)
		}
		return salt
	}
	for _, e := range entries {
		for _, f := range e.files {
			fp := FilePlan{Glob: e.Glob, Spec: f.Spec, Path: f.Path}
			if f.Err != nil {
				fp.Errors = append(fp.Errors, &Error{Stage: StageMapping, File: f.Spec, Err: f.Err})
			} else {
				r.planFile(&fp, tag, data, saltFn, display)
			}
			p.Files = append(p.Files, fp)
			p.Reactions = append(p.Reactions, fp.Reactions...)
			p.Errors = append(p.Errors, fp.Errors...)
		}
	}
	return p
}

// Render renders one reaction file for an event, as Plan does before
// parsing, with the values written in (newlines as \n): what `brine
// reactor test` prints, and what benchmarks time.
func (r *Reactor) Render(ctx context.Context, path, tag string, data map[string]any) ([]byte, error) {
	out, outs, _, err := r.render.render(path, tag, data, func() map[string]any { return r.saltObject(ctx) })
	if err != nil {
		return nil, err
	}
	return []byte(outs.expand(string(out), true)), nil
}

// Matches returns how many mapping entries match tag. It does not allocate:
// it is the check every event on the bus goes through.
func (r *Reactor) Matches(tag string) int {
	var buf [8]int
	return len(r.mapv.Load().set.Match(tag, buf[:0]))
}

func (r *Reactor) planFile(fp *FilePlan, tag string, data map[string]any, salt func() map[string]any, display bool) {
	// A panic in the template or YAML engine on some odd input is one
	// broken file, not a dead master.
	stage := StageRender
	defer func() {
		if p := recover(); p != nil {
			fp.Reactions = nil
			fp.Errors = append(fp.Errors, &Error{Stage: stage, File: fp.Path, Err: fmt.Errorf("internal error: %v", p)})
		}
	}()
	out, outs, sameLines, err := r.render.render(fp.Path, tag, data, salt)
	if err != nil {
		fp.Errors = append(fp.Errors, asError(fp.Path, StageRender, err))
		return
	}
	if display {
		fp.Rendered = []byte(outs.expand(string(out), true))
	}
	stage = StageCompile
	reactions, errs := compileFile(fp.Path, out, outs, r.funcs)
	fp.Reactions = reactions
	for _, re := range reactions {
		re.RenderedLine = !sameLines
	}
	for _, err := range errs {
		e := asError(fp.Path, StageCompile, err)
		e.Rendered = !sameLines && e.Line > 0
		fp.Errors = append(fp.Errors, e)
	}
}

func asError(file string, stage Stage, err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Stage: stage, File: file, Err: err}
}

// saltObject is the `salt` of the Jinja context: read-only registry
// functions, callable as salt['mine.get'](tgt, fun, tgt_type='glob') or
// salt.mine.get(…).
// Functions registered after New appear after the next Reload.
func (r *Reactor) saltObject(ctx context.Context) map[string]any {
	return jinja.Salt(*r.lookups.Load(), func(name string, args []any, kwargs map[string]any) (any, error) {
		return r.funcs.Call(ctx, name, args, kwargs, nil)
	})
}
