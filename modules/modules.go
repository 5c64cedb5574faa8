// Package modules is the home of the agent's execution modules, Salt's
// salt/modules: each subpackage is one module (network, grains, event,
// test, …) with the same shape, a Module that declares its functions
// against the agent's Env, and agent/modules.go lists them one line each.
//
// Execution functions are declared with the same function.Func as the
// master's runner functions, so arguments from a command line, a job or a
// reaction are bound and checked by one piece of code on both sides.
package modules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/keyorder"
)

// Module declares one execution module's functions for an agent.
type Module func(*Env) []function.Func

// Env is what execution functions may use of the agent running them. It is
// defined here, by its consumers, so that modules never import the agent.
type Env struct {
	// ID is the agent's id (Salt's opts['id']).
	ID string
	// Grains returns the agent's current grains (never nil).
	Grains func() map[string]any
	// FireMaster sends an event to the master (Salt's fire_master): the
	// master stamps it with the id it authenticated. The event is queued
	// on disk while the master is away, so an error means it was not kept.
	FireMaster func(ctx context.Context, tag string, data map[string]any) error
	// Version is the agent's version string.
	Version string
	// Log is the agent's logger.
	Log *slog.Logger
	// Opts returns the agent's configuration as Salt's __opts__ (what
	// config.get reads): every key of its configuration files, with the
	// defaults of those it did not set.
	Opts func() map[string]any
	// CacheDir is the agent's cache directory (Salt's cachedir): files
	// fetched from the master and scripts run by cmd.script live under it.
	CacheDir string
	// Files is the master's file server (salt:// URLs); nil when the agent
	// runs without a master (brine call --local).
	Files Files
	// Master answers what only the master knows (mine.get); nil without a
	// master.
	Master Master
	// Jobs are the jobs running on this agent (saltutil.running, kill_job).
	Jobs Jobs
	// Mine sends this agent's mine data (mine.update, send, delete).
	Mine Mine
	// SetGrains keeps grains across restarts (Salt's grains file) and
	// makes them the agent's at once (grains.setval, grains.append).
	SetGrains func(ctx context.Context, set map[string]any) (map[string]any, error)
	// RefreshGrains gathers the core grains again now (saltutil.
	// refresh_grains) and says whether they changed; the master hears of
	// a change with the agent's next mine report, sent at once.
	RefreshGrains func(ctx context.Context) bool
	// Functions is the agent's registry, every module included (sys.*,
	// state functions calling others). Set once all are registered.
	Functions *function.Registry
	// States are the agent's state functions ("file.managed"), which
	// state.apply and its kin run. Set once all are registered.
	States *function.Registry
	// Beacons are the agent's running beacons (beacons.*); nil without.
	Beacons Beacons
	// Pillar returns the agent's pillar, which only the master compiles:
	// the copy it has, or with refresh a new one asked of the master
	// (and kept). nil when the agent has no master.
	Pillar func(ctx context.Context, refresh bool) (map[string]any, error)
	// PillarOrder is the key order of the pillar Pillar last returned,
	// which templates iterate its mappings in (Salt's dicts keep the
	// order written); nil when unknown (keys read sorted).
	PillarOrder func() *keyorder.Order
}

// Call runs one of the agent's execution functions for a state function
// or another module: an Env without them (nil, or before they are
// registered) is an error, not a panic.
func (e *Env) Call(ctx context.Context, fun string, args []any, kwargs map[string]any) (any, error) {
	if e == nil || e.Functions == nil {
		return nil, fmt.Errorf("%s: the agent's execution functions are not available", fun)
	}
	return e.Functions.Call(ctx, fun, args, kwargs, nil)
}

// Mapping is Call of a function that answers a mapping about name
// (user.info, group.info): nil when the mapping is empty or is not one,
// as Salt's states read "no such user".
func (e *Env) Mapping(ctx context.Context, fun, name string) (map[string]any, error) {
	out, err := e.Call(ctx, fun, []any{name}, nil)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

type pillarKey struct{}

// WithPillar returns a context in which the pillar functions read p: a
// state run's pillar, with the pillar= of its command line merged in, is
// what its templates' salt['pillar.get'] must see.
func WithPillar(ctx context.Context, p map[string]any) context.Context {
	return context.WithValue(ctx, pillarKey{}, p)
}

// PillarOf returns the pillar functions called with ctx should read: a
// state run's (WithPillar), else the agent's own.
func PillarOf(ctx context.Context, env *Env) (map[string]any, error) {
	if p, ok := ctx.Value(pillarKey{}).(map[string]any); ok {
		return p, nil
	}
	if env.Pillar == nil {
		return map[string]any{}, nil
	}
	return env.Pillar(ctx, false)
}

// ErrNoFile is how Files reports a salt:// path that is in no root (cp
// returns ” for it, as Salt; every other failure is an error).
var ErrNoFile = errors.New("no such file on the master")

// ErrMasterless is what FireMaster returns in a masterless run
// (salt-call --local, file_client: local): there is no master to send to,
// and event.send answers False, as Salt's does.
var ErrMasterless = errors.New("local mode: no master to send events to")

// Files is the master's file server as an agent sees it (or, with
// file_client: local, the agent's own file_roots).
type Files interface {
	// Cache fetches salt://path of saltenv into the agent's cache, unless
	// the cached copy's hash matches the master's, and returns its local
	// path. A path that does not exist is an error naming it.
	Cache(ctx context.Context, path, saltenv string) (string, error)
	// List lists the files of saltenv under prefix ("" for all), as
	// cp.list_master does: paths relative to the environment's root.
	List(ctx context.Context, saltenv, prefix string) ([]string, error)
	// Hash returns the master's sha256 of salt://path; a path that does
	// not exist is an error wrapping ErrNoFile.
	Hash(ctx context.Context, path, saltenv string) (string, error)
	// Envs lists the master's environments (saltenvs).
	Envs(ctx context.Context) ([]string, error)
}

// Beacons are an agent's beacons as beacons.* changes them.
type Beacons interface {
	// Config returns the beacons in force, each as one mapping, and
	// whether beacons are enabled at all.
	Config() (map[string]map[string]any, bool)
	// Set checks and puts a new configuration in force.
	Set(cfg map[string]map[string]any, enabled bool) error
	// Check checks one beacon's configuration (Salt's list form) without
	// running it, and returns it as one mapping.
	Check(name string, cfg any) (map[string]any, error)
	// Available lists the beacon modules.
	Available() []string
	// Save writes the configuration in force to the agent's
	// configuration (minion.d/beacons.conf) and returns the file.
	Save() (string, error)
	// Reset puts the configuration files' beacons in force again.
	Reset() error
}

// Master is what execution modules ask of the agent's master, in their
// own terms: the agent turns each into the wire's request, so that no
// module names a wire method or imports the contract.
type Master interface {
	// MineGet is mine.get answered by the master: the mine data of fun on
	// the minions tgt (of tgtType) selects, by id.
	MineGet(ctx context.Context, tgt, fun, tgtType string) (map[string]any, error)
	// PushFile sends one chunk of cp.push: data from offset loc of a file
	// of size bytes, kept on the master under path's components.
	PushFile(ctx context.Context, path []string, loc, size int64, data []byte) error
	// Progress reports one state's result while the state run of job jid
	// goes on (Salt's state_events): ret is {state key: result}, of total.
	Progress(ctx context.Context, jid string, ret map[string]any, total int) error
}

// Mine is the agent's mine record as mine.update, send and delete change
// it.
type Mine interface {
	// UpdateMine runs the configured mine functions and sends them.
	UpdateMine(ctx context.Context) error
	// SendMine stores name's value in this agent's record (nil deletes).
	SendMine(ctx context.Context, name string, value any) error
}

// Jobs are the jobs an agent is running, as saltutil sees them.
type Jobs interface {
	// Running describes the running jobs, Salt's proc data: jid, fun,
	// arg, pid, tgt, tgt_type, user.
	Running() []map[string]any
	// Signal ends the job jid, kill or term (which its return tells):
	// the function is cancelled, and commands it runs get SIGTERM, then
	// SIGKILL. false: no such job runs.
	Signal(jid string, kill bool) bool
}

// Registry returns a function registry holding every function of mods,
// and sets env.Functions to it.
func Registry(env *Env, mods ...Module) (*function.Registry, error) {
	reg := function.New()
	for _, m := range mods {
		if err := reg.RegisterAll(m(env)); err != nil {
			return nil, err
		}
	}
	env.Functions = reg
	return reg, nil
}

type retcodeKey struct{}

// WithRetcode returns a context in which functions may set the job's
// retcode (Salt's __context__['retcode']), and the place it is kept.
func WithRetcode(ctx context.Context) (context.Context, *atomic.Int64) {
	rc := new(atomic.Int64)
	return context.WithValue(ctx, retcodeKey{}, rc), rc
}

// SetRetcode sets the retcode of the job ctx belongs to, as cmd.run does
// with its command's exit status: the return stays the output, the job's
// retcode says the command failed. Without WithRetcode it does nothing.
func SetRetcode(ctx context.Context, code int) {
	if rc, ok := ctx.Value(retcodeKey{}).(*atomic.Int64); ok {
		rc.Store(int64(code))
	}
}
