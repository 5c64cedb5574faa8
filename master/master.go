// Package master is the running master, the way nats-server's server
// package is the running server: New opens the bus, the gateway, the
// function registry and each shared store exactly once, starts the
// integrations, the HTTP API and the reactor; Run serves until its context
// ends, reloading the configuration on SIGHUP; then everything stops
// without losing an acknowledged event.
//
// One concept per file. Operators' requests have one table (requests.go),
// agents' another (agentproto.go), served by every transport of the agent
// protocol (transport.go: the seam, and brine's CURVE gateway behind it).
// The parts behind the agents' table take only what they use: the agents'
// connections and keys (agents.go), the publisher that targets jobs and
// routes their returns (publish.go), the file server (files.go), cp.push's
// receiver (filerecv.go), pillar (pillar.go) and this master's part among
// the masters of its bus (cluster.go). Then `brine exec`'s requests
// (exec.go), jobs (jobs.go), orchestration (orchestrate.go), the runner
// functions (runners*.go), presence (presence.go), the HTTP API (api.go),
// health checks (health.go), the reactor (reactor.go), the integrations
// (integrations.go), the cloud runner functions (cloud.go) and reload
// (reload.go).
package master

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations"
	"github.com/brinehq/brine/internal/logging"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/keys"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/reactor"
	"github.com/brinehq/brine/reactor/kvdlq"
	"github.com/brinehq/brine/saltapi"
	"github.com/brinehq/brine/saltmaster"
	"github.com/brinehq/brine/state"
)

// Options are what a master starts from.
type Options struct {
	// Config is the configuration to start with (config.Load, with the
	// command line's overrides applied).
	Config *config.Master
	// Load reads the configuration again on SIGHUP, overrides included;
	// nil keeps the one in force.
	Load func() (*config.Master, error)
	// ConfigPath is the -c path, where the cloud files are (cloud.ConfigDir).
	ConfigPath string
	// Version is reported in the start event and log.
	Version string
	// LogOutput receives the log (default os.Stderr).
	LogOutput io.Writer
	// Transports carry the agent protocol beside the gateway's CURVE
	// (which every master serves): each is handed the master's agent
	// methods before the master starts serving.
	Transports []Transport
}

// Master is a running master.
type Master struct {
	opts Options
	cfg  *config.Master // the configuration in force; reload replaces it
	// configSeen is config.Fingerprint of the configuration files when the
	// master started: a change after it reloads.
	configSeen []string
	log        *slog.Logger
	level      *slog.LevelVar
	source     string // brine://<id>, the source of the master's own events

	bus     *natsbus.Bus
	gateway *gateway.Server
	// transports carry the agent protocol (agentMethods): the gateway's
	// CURVE first.
	transports []Transport
	// salt serves unmodified salt-minions (nil when salt_transport is
	// off); saltPub is its master.pub.
	salt    *saltmaster.Transport
	saltPub string
	funcs   *function.Registry
	mine    *mine.Store
	keys    *keys.Store
	agents  *agents
	// publisher sends jobs to agents and routes their returns.
	publisher *publisher
	// cluster is this master's part among the masters of its bus.
	cluster *cluster
	pillars *pillars
	orch    *orchestrator
	// resume are orchestrations an earlier run of this master did not
	// finish, resumed once it has started.
	resume  []*jobs.Job
	jobs    *jobs.Store
	dlq     *kvdlq.Store
	cloud   *cloud.Functions
	reactor *reactor.Reactor
	api     *api.Server // nil when the configuration has no api: section

	integrations []integrations.Integration

	// The parts run in grp until stop is called or one fails.
	ctx    context.Context
	stop   context.CancelFunc
	grp    *errgroup.Group
	served bool // the gateway serves (it closes its endpoints itself)
}

// New opens the bus, the gateway and the stores, registers every runner
// function and starts the integrations, the HTTP API and the reactor. The
// master then serves until Run's context ends; if New fails, nothing it
// started is left running.
func New(ctx context.Context, o Options) (_ *Master, err error) {
	if o.LogOutput == nil {
		o.LogOutput = os.Stderr
	}
	cfg := o.Config
	s := cfg.Settings
	m := &Master{opts: o, cfg: cfg, level: new(slog.LevelVar), source: "brine://" + s.ID, funcs: function.NewWithBuiltins(),
		configSeen: config.Fingerprint(o.ConfigPath)}
	l, err := logging.ParseLevel(s.LogLevel)
	if err != nil {
		return nil, err
	}
	m.level.Set(l)
	if m.log, err = logging.New(o.LogOutput, s.LogFormat, m.level); err != nil {
		return nil, err
	}
	if err := m.checkKeys(cfg); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	key, err := gateway.EnsureKey(s.KeyFile)
	if err != nil {
		return nil, err
	}
	if m.salt, err = m.newSaltTransport(); err != nil {
		return nil, err
	}
	m.bus, err = natsbus.Open(ctx, busConfig(s, m.log))
	if err != nil {
		return nil, err
	}
	m.ctx, m.stop = context.WithCancel(context.WithoutCancel(ctx))
	m.grp, m.ctx = errgroup.WithContext(m.ctx)
	defer func() {
		if err != nil {
			m.shutdown()
		}
	}()
	gw := gateway.Config{
		Interface:    s.Interface,
		PublishPort:  s.PublishPort,
		RequestPort:  s.RetPort,
		Key:          key,
		MaxEventSize: s.MaxEventSize,
		Source:       m.source + "/gateway",

		HandshakeTimeout:          s.Gateway.HandshakeTimeout,
		BootstrapIdle:             s.Gateway.BootstrapIdle,
		BootstrapLifetime:         s.Gateway.BootstrapLifetime,
		MaxUnauthenticated:        s.Gateway.MaxUnauthenticated,
		MaxUnauthenticatedPerAddr: s.Gateway.MaxUnauthenticatedPerAddress,
	}
	if m.salt != nil {
		gw.SaltRequests, gw.SaltPublisher = m.salt.RequestServer(), m.salt.Publisher()
	}
	if m.gateway, err = gateway.New(gw, m.bus, m.log); err != nil {
		return nil, err
	}
	if err := m.gateway.Listen(); err != nil {
		return nil, err
	}
	if m.salt != nil {
		// The port told to minions is the one bound (publish_port 0
		// binds any).
		_, port, _ := net.SplitHostPort(m.gateway.PublishAddr())
		n, _ := strconv.Atoi(port)
		m.salt.SetPublishPort(n)
	}
	// The parts start in dependency order: the stores and what feeds them,
	// the integrations, the API (which exports their counters), and the
	// reactor last, so that every function it may call is registered
	// before it reacts to the first event.
	m.transports = []Transport{curveTransport{m.gateway}}
	if m.salt != nil {
		m.transports = append(m.transports, m.salt)
	}
	m.transports = append(m.transports, o.Transports...)
	for _, start := range []func(context.Context) error{
		m.startStores,
		m.startKeys,
		m.assembleAgentParts,
		m.startCluster,
		m.startPublisher,
		m.startIntegrations,
		m.startCloud,
		m.registerFunctions,
		m.startAPI,
		m.startSaltAPI,
		m.startReactor,
	} {
		if err := start(ctx); err != nil {
			return nil, err
		}
	}
	m.handleRequests()
	m.serveAgents()
	if m.salt != nil {
		m.grp.Go(func() error { m.salt.Run(m.ctx); return nil })
	}
	m.grp.Go(func() error { return m.agents.watchKeys(m.ctx) })
	m.grp.Go(func() error { m.presenceLoop(m.ctx, s); return nil })
	m.resumeOrchestrations()
	m.served = true
	m.grp.Go(func() error { return m.gateway.Run(m.ctx) })

	m.log.Info("master started", "id", s.ID, "data_dir", s.DataDir, "publish", m.gateway.PublishAddr(),
		"request", m.gateway.RequestAddr(), "bus", busKind(s.Bus), "config", strings.Join(cfg.Files, ","), "version", o.Version)
	m.fire(m.ctx, "brine/master/"+s.ID+"/start", map[string]any{"id": s.ID, "version": o.Version})
	return m, nil
}

// Run serves until ctx ends or a part fails, reloading the configuration
// on SIGHUP, then stops every part and closes the bus. It returns nil after
// a clean stop.
func (m *Master) Run(ctx context.Context) error {
	m.handleSignals(ctx)
	m.log.Info("master stopping")
	err := m.shutdown()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// shutdown stops the parts, waits for them and closes the bus.
func (m *Master) shutdown() error {
	m.stop()
	err := m.grp.Wait()
	if !m.served && m.gateway != nil {
		m.gateway.Close()
	}
	if cerr := m.bus.Close(); cerr != nil {
		m.log.Error("closing the event store", "err", cerr)
	}
	return err
}

// KnownKeys are the top-level configuration keys the master reads.
func KnownKeys() []string {
	keys := append(config.CoreKeys(), reactor.ConfigKeys...)
	keys = append(keys, jobs.ConfigKeys...)
	keys = append(keys, PublishKeys...)
	keys = append(keys, PillarKeys...)
	keys = append(keys, FileRecvKeys...)
	keys = append(keys, SaltTransportKeys...)
	keys = append(keys, saltapi.ConfigKeys...)
	keys = append(keys, api.ConfigKey)
	for _, in := range Integrations() {
		keys = append(keys, in.Name())
	}
	return keys
}

// checkKeys reports the keys of cfg the master does not know, with file,
// line and the key they probably mean: as warnings, or (strict) as the
// reason not to start.
func (m *Master) checkKeys(cfg *config.Master) error {
	problems := cfg.Unknown(KnownKeys())
	if cfg.Settings.Strict {
		if err := config.Strict(problems); err != nil {
			return err
		}
	}
	for _, p := range problems {
		m.log.Warn("configuration: " + p.String())
	}
	return nil
}

// Addrs are the gateway's publish and request addresses (host:port).
func (m *Master) Addrs() (publish, request string) {
	return m.gateway.PublishAddr(), m.gateway.RequestAddr()
}

// Functions is the master's function registry.
func (m *Master) Functions() *function.Registry { return m.funcs }

func busKind(b config.BusSettings) string {
	switch {
	case b.URL != "":
		return "nats"
	case b.Cluster.Enabled():
		return "embedded cluster " + b.Cluster.Name
	}
	return "embedded"
}

// busConfig is the bus the settings describe.
func busConfig(s config.Settings, log *slog.Logger) natsbus.Config {
	b := s.Bus
	files := func(t config.TLSFiles) *natsbus.TLSFiles {
		if !t.Set() {
			return nil
		}
		return &natsbus.TLSFiles{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile}
	}
	cfg := natsbus.Config{
		Dir:          s.DataDir,
		URL:          b.URL,
		Listen:       b.Listen,
		MaxEventSize: s.MaxEventSize,
		MaxAge:       b.MaxAge,
		Replicas:     b.Replicas,
		ServerName:   s.ID,
		TLS:          files(b.TLS),
		Credentials:  b.Credentials,
		User:         b.User,
		Password:     b.Password,
		Logger:       log,
	}
	if c := b.Cluster; c.Enabled() {
		cfg.Cluster = &natsbus.Cluster{Name: c.Name, Listen: c.Listen, Advertise: c.Advertise, Routes: c.Routes,
			User: c.User, Password: c.Password, TLS: files(c.TLS)}
	}
	return cfg
}

// emitter fires events of the master's part name (brine://<id>/<name>).
func (m *Master) emitter(name string) bus.Emitter {
	return bus.Emitter{Publisher: m.bus, Source: m.source + "/" + name}
}

// fire publishes one of the master's own events; a failure is logged, never
// fatal, since the master's job goes on without it.
func (m *Master) fire(ctx context.Context, tag string, data map[string]any) {
	err := bus.Emitter{Publisher: m.bus, Source: m.source}.Fire(ctx, tag, data)
	if err != nil && ctx.Err() == nil {
		m.log.Error("firing event", "tag", tag, "err", err)
	}
}

// component is the logger of one part.
func (m *Master) component(name string) *slog.Logger { return m.log.With("component", name) }

// assembleAgentParts makes the parts that serve agents, each given what
// it uses: the agents' connections, the publisher that sends them jobs,
// the pillar compiler and this master's part among the masters of its bus
// (which startCluster joins). The few that need each other are linked
// here, in one place.
func (m *Master) assembleAgentParts(context.Context) error {
	s := m.cfg.Settings
	m.agents = newAgents(s, m.log, m.keys, m.bus, m.mine, m.jobs)
	m.pillars = newPillars(m.log, nil)
	m.cluster = newCluster(s.ID, m.bus, m.log, m.agents.Connected, m.adopt)
	m.publisher = newPublisher(m.bus, m.mine, m.keys, m.agents, m.cluster, m.pillars.of, m.log)
	m.pillars.nodegroups = m.publisher.groups
	m.agents.router = m.publisher
	m.cluster.jobs = m.publisher
	m.orch = &orchestrator{id: s.ID + "_master", renderer: state.NewRenderer(), log: m.component("orchestrate"), funcs: m.funcs,
		roots: m.roots, pillar: m.pillars.ofMaster, jobs: m.jobs, bus: m.bus, minions: orchMinions{m.publisher}, underLease: m.underLease}
	return nil
}

// startPublisher reads the publisher's and pillar's configuration and
// follows the mine for targeting.
func (m *Master) startPublisher(context.Context) error {
	if err := m.publisher.configure(m.cfg); err != nil {
		return err
	}
	m.grp.Go(func() error { m.publisher.serve(m.ctx); return nil })
	return m.pillars.configure(m.cfg)
}

// startStores opens the mine, the job store and the dead letters, once each,
// and keeps the mine and the job store current from the bus.
func (m *Master) startStores(ctx context.Context) error {
	keep, err := jobs.Keep(m.cfg)
	if err != nil {
		return err
	}
	mkv, err := m.bus.Bucket(ctx, mine.BucketConfig)
	if err != nil {
		return err
	}
	jkv, err := m.bus.Bucket(ctx, jobs.BucketConfig(keep))
	if err != nil {
		return err
	}
	dkv, err := m.bus.Bucket(ctx, kvdlq.BucketConfig)
	if err != nil {
		return err
	}
	m.mine, m.jobs, m.dlq = mine.New(mkv), jobs.NewStore(jkv, m.component("jobs")), kvdlq.New(dkv)
	// Jobs this master started and did not finish died with it: close them
	// as interrupted (a reaction's event comes again and re-runs it).
	owned := []string{m.source + "/run", m.source + "/jobs", m.source + "/reactor"}
	// An orchestration started with brine run is resumed instead, from
	// its first unfinished step, once every part is up (resumeOrchestrations).
	closed, resume, err := m.jobs.CloseOrphans(ctx, m.bus, owned, bus.Origin{Source: m.source + "/jobs"}, func(j *jobs.Job) bool {
		return j.Source == m.source+"/run" && isOrchestration(j.Fun)
	})
	if err != nil {
		return err
	}
	m.resume = resume
	if len(closed) > 0 {
		m.component("jobs").Warn("closed jobs an earlier run of this master did not finish", "jids", closed)
	}
	m.grp.Go(func() error { return m.mine.Follow(m.ctx, m.bus, m.source+"/mine", m.component("mine")) })
	m.grp.Go(func() error { return m.jobs.Run(m.ctx, m.bus, m.source+"/jobs") })
	return nil
}
