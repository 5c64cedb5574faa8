// Package agent is brine's agent, Salt's minion: it runs on every managed
// machine, holds its own key pair, connects to its master over the
// gateway's CURVE-encrypted transport, waits until the operator (or a
// policy, or a reaction) accepts its key, then fires Salt's start events,
// reports its grains and mine data, and delivers the events applications
// send with `brine call event.send`.
//
// Nothing the agent sends is lost while the master is away: events and
// returns go through an on-disk outbox, each with an id fixed when queued,
// and are removed only once the master acknowledged storing them; the
// master's bus stores a re-sent id once.
//
// With several masters (masters.go) the agent is connected to all of them
// at once, or, with master_type failover, to one at a time, moving on when
// it is lost or stops answering.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/google/uuid"

	"github.com/brinehq/brine/agent/grains"
	"github.com/brinehq/brine/beacons"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/fileserver"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/wire"
)

// Options are what New needs besides the configuration.
type Options struct {
	Version string
	Log     *slog.Logger
	// Load reads the configuration again on SIGHUP (command-line
	// overrides included); nil: Run does not reload.
	Load func() (*Loaded, error)
	// Grains gathers core grains (default: the real machine).
	Grains grains.Collector
	// Masterless is salt-call --local (or file_client: local in a
	// `brine call`): no master is contacted, so the agent neither needs
	// nor makes a key, queues no return and sends no event; salt://
	// files and the pillar come from its file_roots and pillar_roots.
	Masterless bool
}

// Agent is one running agent.
type Agent struct {
	opts Options
	log  *slog.Logger
	keys curve.KeyPair

	mu     sync.RWMutex
	cfg    *Loaded
	id     string
	grains map[string]any

	outbox  *Outbox
	funcs   *function.Registry
	states  *function.Registry
	jobs    *jobRunner
	pillar  atomic.Pointer[keptPillar]
	beacons *beacons.Runner
	reload  chan *Loaded
	// regrained tells the session that saltutil.refresh_grains changed
	// the grains: the mine report carrying them goes out at once.
	regrained chan struct{}

	// runCtx is Run's context, which jobs run under; cli the connection
	// that carries the agent's own messages and requests (the first
	// master connected), nil while there is none; links the connections
	// to the masters.
	runCtx context.Context
	cli    atomic.Pointer[gateway.Client]
	links  atomic.Pointer[[]*link]
	// routes maps the id of a queued job return to the master the job
	// came from, which it is returned to while connected.
	routes sync.Map

	// State for tests and status: connected to an accepted master.
	ready atomic.Bool
	// started is set by the first session: startup_states run once.
	started atomic.Bool
}

// New prepares an agent: it resolves the id, makes or loads its key pair
// and opens the outbox; it connects to nothing until Run.
func New(cfg *Loaded, opts Options) (*Agent, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	id, err := ResolveID(cfg.ID, cfg.Dir)
	if err != nil {
		return nil, err
	}
	var kp curve.KeyPair
	if !opts.Masterless {
		if kp, err = Identity(cfg.PKIDir); err != nil {
			return nil, err
		}
	}
	out, err := OpenOutbox(filepath.Join(cfg.CacheDir, "outbox"), cfg.QueueMax)
	if err != nil {
		return nil, err
	}
	if opts.Grains.Version == "" {
		opts.Grains.Version = opts.Version
	}
	a := &Agent{
		opts: opts, log: opts.Log.With("id", id), keys: kp, cfg: cfg, id: id,
		outbox: out, reload: make(chan *Loaded, 1), regrained: make(chan struct{}, 1),
	}
	a.grains = opts.Grains.Collect(id, a.staticGrains(cfg))
	a.logWarnings(cfg)
	if a.jobs, err = newJobRunner(a, cfg.CacheDir); err != nil {
		return nil, err
	}
	env := a.env()
	if a.funcs, err = modules.Registry(env, Modules...); err != nil {
		return nil, err
	}
	// State modules declare against the same Env: they call execution
	// functions (env.Functions) and are what state.* runs (env.States).
	env.States = function.New()
	for _, m := range States {
		if err := env.States.RegisterAll(m(env)); err != nil {
			return nil, err
		}
	}
	a.states = env.States
	if err := a.newBeacons(cfg); err != nil {
		return nil, err
	}
	env.Beacons = agentBeacons{a}
	return a, nil
}

// ID is the agent's id.
func (a *Agent) ID() string { return a.id }

// PublicKey is the agent's public key.
func (a *Agent) PublicKey() curve.Key { return a.keys.Public }

// Functions are the agent's execution functions.
func (a *Agent) Functions() *function.Registry { return a.funcs }

// States are the agent's state functions.
func (a *Agent) States() *function.Registry { return a.states }

// Grains returns a copy of the agent's current grains.
func (a *Agent) Grains() map[string]any {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return maps.Clone(a.grains)
}

func (a *Agent) config() *Loaded {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.cfg
}

// reloadOnHUP reloads the configuration on every SIGHUP until ctx ends; a
// configuration that does not load leaves the one in force.
func (a *Agent) reloadOnHUP(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			cfg, err := a.opts.Load()
			if err != nil {
				a.log.Error("reload refused; the configuration in force stays", "err", err)
				continue
			}
			a.Reload(cfg)
		}
	}
}

// Reload replaces the configuration (SIGHUP): grains and mine functions
// take effect at once, a changed master on the next connection, which is
// made at once.
func (a *Agent) Reload(cfg *Loaded) {
	select {
	case <-a.reload:
	default:
	}
	a.reload <- cfg
}

func (a *Agent) env() *modules.Env {
	cfg := a.config()
	var files modules.Files = &fileClient{a: a, dir: filepath.Join(cfg.CacheDir, "files")}
	if cfg.Local() {
		roots, _ := cfg.LocalRoots()
		files = &localFiles{roots: fileserver.Roots(roots), dir: filepath.Join(cfg.CacheDir, "files")}
	}
	return &modules.Env{ID: a.id, Grains: a.Grains, FireMaster: a.FireMaster, Version: a.opts.Version, Log: a.log,
		Opts: a.Opts, CacheDir: cfg.CacheDir, Files: files,
		Master: masterCaller{a}, Jobs: a.jobs, Mine: a, SetGrains: a.SetGrains, Pillar: a.Pillar, PillarOrder: a.PillarOrder,
		RefreshGrains: a.refreshGrains}
}

// Opts is the agent's configuration as Salt's __opts__: every key set in
// its files, over the defaults, with the resolved id.
func (a *Agent) Opts() map[string]any {
	cfg := a.config()
	out := map[string]any{}
	if b, err := yaml.Marshal(cfg.Config); err == nil {
		_ = yaml.Unmarshal(b, &out)
	}
	if cfg.Tree != nil {
		_ = cfg.Tree.DecodeAll(&out)
	}
	out["id"] = a.id
	return out
}

// ErrNoMaster is what asking the master fails with while the agent is not
// connected to one.
var ErrNoMaster = errors.New("not connected to the master")

// masterCaller asks the connected master what execution modules need of
// it (modules.Master), as the wire's requests.
type masterCaller struct{ a *Agent }

// Call sends one request to the master and decodes its answer into out
// (nil: discard).
func (m masterCaller) Call(ctx context.Context, method string, in, out any) error {
	cli := m.a.master()
	if cli == nil {
		return ErrNoMaster
	}
	return cli.Call(ctx, method, in, out)
}

func (m masterCaller) MineGet(ctx context.Context, tgt, fun, tgtType string) (map[string]any, error) {
	var out map[string]any
	err := m.Call(ctx, wire.MethodMineGet, wire.MineGet{Tgt: tgt, Fun: fun, TgtType: tgtType}, &out)
	return out, err
}

func (m masterCaller) PushFile(ctx context.Context, path []string, loc, size int64, data []byte) error {
	return m.Call(ctx, wire.MethodFilePush, wire.FilePush{Path: path, Loc: loc, Size: size, Data: data}, nil)
}

func (m masterCaller) Progress(ctx context.Context, jid string, ret map[string]any, total int) error {
	return m.Call(ctx, wire.MethodProgress, wire.Progress{JID: jid, Ret: ret, Len: total}, nil)
}

// master is the connection to ask the master over: the session's primary,
// or, in the moment between a link being accepted and the session making
// it the primary, that link, since a job it delivered in that moment (a
// cmd.script fetching salt://) already asks the master.
func (a *Agent) master() *gateway.Client {
	if c := a.cli.Load(); c != nil {
		return c
	}
	if links := a.links.Load(); links != nil {
		_, c := firstUp(*links)
		return c
	}
	return nil
}

// FireMaster queues an event for the master (Salt's fire_master): it is on
// disk when this returns and is delivered once the master is reachable.
func (a *Agent) FireMaster(_ context.Context, tag string, data map[string]any) error {
	if a.opts.Masterless {
		return modules.ErrMasterless
	}
	if err := wire.CheckTag(tag, a.id); err != nil {
		return err
	}
	it, err := EventItem(a.id, tag, data)
	if err != nil {
		return err
	}
	return a.outbox.Put(it)
}

// EventItem builds the outbox item of a minion event: Salt's
// `_minion_event` load, whose id the master overwrites with the one it
// authenticated.
func EventItem(id, tag string, data map[string]any) (Item, error) {
	if data == nil {
		data = map[string]any{}
	}
	return loadItem(tag, map[string]any{"cmd": "_minion_event", "id": id, "tag": tag, "data": data})
}

// loadItem is the outbox item of an event whose load (its data on the
// master's bus) is load.
func loadItem(tag string, load map[string]any) (Item, error) {
	if err := bus.ValidateTag(tag); err != nil {
		return Item{}, err
	}
	msgID, err := newID()
	if err != nil {
		return Item{}, err
	}
	return encodeItem(msgID, "event", tag, wire.Event{ID: msgID, Tag: tag, Time: time.Now().UTC(), Load: load})
}

// newID is a fresh message id: a UUIDv7, as the bus's event ids, so that
// the master can store it as the event's id.
func newID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("message id: %w", err)
	}
	return u.String(), nil
}

// Run connects to the masters and serves until ctx ends, reconnecting
// whenever a connection drops and reloading the configuration on SIGHUP
// (with Options.Load). It fails only when the agent must stop: a master
// that does not hold the key the agent trusts, a master name that does not
// resolve within retry_dns_count.
func (a *Agent) Run(ctx context.Context) error {
	if a.opts.Load != nil {
		go a.reloadOnHUP(ctx)
	}
	a.runCtx = ctx
	if err := a.jobs.recover(); err != nil {
		return err
	}
	if err := a.startBeacons(ctx); err != nil {
		return err
	}
	defer a.beacons.Stop()
	defer a.jobs.wait(jobGrace)
	for {
		err := a.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, errReload) {
			return err
		}
	}
}

// Ready reports whether the agent is connected to a master that accepted
// it (Masters says which).
func (a *Agent) Ready() bool { return a.ready.Load() }

var errReload = errors.New("configuration reloaded")

// dial connects to the master at addr within timeout; onPush receives
// what it sends unasked.
func (a *Agent) dial(ctx context.Context, cfg *Loaded, addr string, timeout time.Duration, onPush func(string, []byte)) (*gateway.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	mk, err := masterKey(dctx, cfg.PKIDir, addr, cfg.MasterFinger)
	if err != nil {
		return nil, err
	}
	cli, err := gateway.DialAgent(dctx, addr, gateway.AgentDial{Keys: a.keys, MasterKey: mk, OnPush: onPush})
	if errors.Is(err, curve.ErrServerKey) {
		return nil, fmt.Errorf("%w: the master at %s does not hold the key recorded in %s (fingerprint %s); "+
			"if the master's key was replaced on purpose, delete that file", ErrMasterKey, addr,
			filepath.Join(cfg.PKIDir, masterKeyFile), curve.Fingerprint(mk))
	}
	return cli, err
}

// push handles what the master at origin sends unasked over cli, the
// connection of l (nil for brine call's). It runs on the connection's
// reader, so anything slow goes to a goroutine.
func (a *Agent) push(l *link, origin string, cli *gateway.Client, method string, body []byte) {
	switch method {
	case wire.PushAccepted:
		if l != nil {
			notify(l.accepted)
		}
	case wire.PushJob:
		job, err := wire.DecodeJob(body)
		if err != nil || a.runCtx == nil {
			a.log.Error("job refused", "err", err)
			return
		}
		a.jobs.start(a.runCtx, job, origin)
	case wire.PushFindJob:
		var q wire.FindJob
		if err := json.Unmarshal(body, &q); err != nil {
			return
		}
		st := a.jobs.state(q.JID)
		st.Req = q.Req
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// Answered to the master that asked.
			var err error
			if cli != nil {
				err = cli.Call(ctx, wire.MethodJobState, st, nil)
			} else {
				err = (masterCaller{a}).Call(ctx, wire.MethodJobState, st, nil)
			}
			if err != nil {
				a.log.Debug("find_job answer not sent", "jid", q.JID, "err", err)
			}
		}()
	}
}

// apply installs a reloaded configuration.
func (a *Agent) apply(cfg *Loaded) {
	g := a.opts.Grains.Collect(a.id, a.staticGrains(cfg))
	a.mu.Lock()
	a.cfg, a.grains = cfg, g
	a.mu.Unlock()
	a.logWarnings(cfg)
	a.log.Info("configuration reloaded", "files", cfg.Tree.Files)
	// The beacons of the files, as beacons.reset puts them in force.
	if err := (agentBeacons{a}).resetFrom(cfg); err != nil {
		a.log.Error("reload: the beacons configured are refused; those in force stay", "err", err)
	}
}

// logWarnings logs what in cfg is ignored or not used as written.
func (a *Agent) logWarnings(cfg *Loaded) {
	for _, w := range cfg.Warnings {
		a.log.Warn("configuration: " + w.String())
	}
	for _, n := range cfg.Notes {
		a.log.Warn("configuration: " + n)
	}
}

// grainsChanged recollects grains and reports whether they changed.
// refreshGrains is saltutil.refresh_grains: the grains gathered again
// now, and the session told when they changed.
func (a *Agent) refreshGrains(context.Context) bool {
	if !a.grainsChanged() {
		return false
	}
	select {
	case a.regrained <- struct{}{}:
	default:
	}
	return true
}

func (a *Agent) grainsChanged() bool {
	g := a.opts.Grains.Collect(a.id, a.staticGrains(a.config()))
	a.mu.Lock()
	defer a.mu.Unlock()
	if reflect.DeepEqual(g, a.grains) {
		return false
	}
	a.grains = g
	return true
}
