package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/function"
)

func newMasterCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "master",
		Short: "Run the master: durable event bus, ZeroMQ gateway, reactor and integrations",
		Long: `Run the master. With no configuration at all it embeds a NATS JetStream
event store under ./brine-data (or $BRINE_DATA), listens on 127.0.0.1:4505
(events to watchers) and 127.0.0.1:4506 (requests), and creates the client key
<data_dir>/master.key on first start.

Configuration: <config-dir>/master and <config-dir>/master.d/*.conf (YAML, Salt
key names). SIGHUP reloads it; SIGINT/SIGTERM shut down without losing an
acknowledged event.`,
		Example: `  brine master
  brine master -c /etc/brine --log-format json
  BRINE_DATA=/var/lib/brine brine master`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMaster(cmd.Context(), g)
		},
	}
}

// master holds what the master's parts share; each part is started by a
// function of its own and may register a reload hook for SIGHUP.
type master struct {
	flags    *globalFlags
	cfg      *config.Master
	log      *slog.Logger
	logLevel *slog.LevelVar
	bus      *natsbus.Bus
	gateway  *gateway.Server
	funcs    *function.Registry
	source   string
	reloads  []func(context.Context, *config.Master) error
	// counters are the parts' own counters, exported on /metrics by the
	// HTTP API (parts started before it register here).
	counters []counterSet
}

// counterSet is a part's counters, read at each scrape.
type counterSet struct {
	subsystem, help string
	snapshot        func() map[string]uint64
}

func loadConfig(g *globalFlags) (*config.Master, error) {
	cfg, err := config.Load(g.configDir)
	if err != nil {
		return nil, err
	}
	s := &cfg.Settings
	if g.dataDir != "" {
		s.DataDir = g.dataDir
		if !cfg.Has("key_file") {
			s.KeyFile = filepath.Join(s.DataDir, "master.key")
		}
	}
	if g.logLevel != "" {
		s.LogLevel = g.logLevel
	}
	if g.logFormat != "" {
		s.LogFormat = g.logFormat
	}
	return cfg, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if s == "warning" {
		s = "warn"
	}
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

func newLogger(s config.Settings, level *slog.LevelVar) (*slog.Logger, error) {
	l, err := parseLevel(s.LogLevel)
	if err != nil {
		return nil, usageError{err}
	}
	level.Set(l)
	opts := &slog.HandlerOptions{Level: level}
	switch s.LogFormat {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	}
	return nil, usageError{fmt.Errorf("log format %q: want text or json", s.LogFormat)}
}

func runMaster(ctx context.Context, g *globalFlags) error {
	cfg, err := loadConfig(g)
	if err != nil {
		return err
	}
	m := &master{flags: g, cfg: cfg, logLevel: new(slog.LevelVar)}
	if m.log, err = newLogger(cfg.Settings, m.logLevel); err != nil {
		return err
	}
	s := cfg.Settings
	m.source = "brine://" + s.ID
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	key, err := gateway.EnsureKey(s.KeyFile)
	if err != nil {
		return err
	}
	m.bus, err = natsbus.Open(ctx, natsbus.Config{
		Dir:          s.DataDir,
		URL:          s.Bus.URL,
		Listen:       s.Bus.Listen,
		MaxEventSize: s.MaxEventSize,
		MaxAge:       s.Bus.MaxAge,
		Replicas:     s.Bus.Replicas,
		Logger:       m.log,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := m.bus.Close(); err != nil {
			m.log.Error("closing the event store", "err", err)
		}
	}()
	m.gateway, err = gateway.New(gateway.Config{
		Interface:    s.Interface,
		PublishPort:  s.PublishPort,
		RequestPort:  s.RetPort,
		Key:          key,
		MaxEventSize: s.MaxEventSize,
		Source:       m.source + "/gateway",
	}, m.bus, m.log.With("component", "gateway"))
	if err != nil {
		return err
	}
	if err := m.gateway.Listen(); err != nil {
		return err
	}

	m.funcs = function.NewWithBuiltins()
	grp, gctx := errgroup.WithContext(ctx)
	// Each part registers its functions and gateway methods, then runs in
	// grp. The reactor comes last so that every function it may call is
	// registered before the first event is reacted to.
	for _, start := range []func(context.Context, *master, *errgroup.Group) error{
		startDdns,
		startJobs,
		startSlack,
		startMine,
		startDnsmasq,
		startAPI,
		startCloud,
		startReactor,
	} {
		if err := start(gctx, m, grp); err != nil {
			return err
		}
	}
	grp.Go(func() error { return m.gateway.Run(gctx) })
	grp.Go(func() error { return m.handleSignals(gctx) })

	m.log.Info("master started", "id", s.ID, "data_dir", s.DataDir, "publish", m.gateway.PublishAddr(),
		"request", m.gateway.RequestAddr(), "bus", busKind(s.Bus), "config", strings.Join(cfg.Files, ","), "version", buildVersion())
	m.fire(gctx, "brine/master/"+s.ID+"/start", map[string]any{"id": s.ID, "version": buildVersion()})

	err = grp.Wait()
	m.log.Info("master stopping")
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

func busKind(b config.BusSettings) string {
	if b.URL != "" {
		return "nats"
	}
	return "embedded"
}

// fire publishes one of the master's own events; a failure is logged, never
// fatal, since the master's job goes on without it.
func (m *master) fire(ctx context.Context, tag string, data map[string]any) {
	ev, err := bus.NewEvent(tag, data, bus.Origin{Source: m.source})
	if err == nil {
		err = m.bus.Publish(ctx, ev)
	}
	if err != nil && ctx.Err() == nil {
		m.log.Error("firing event", "tag", tag, "err", err)
	}
}

// handleSignals reloads the configuration on SIGHUP until ctx ends.
func (m *master) handleSignals(ctx context.Context) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-hup:
			m.reload(ctx)
		}
	}
}

// reload re-reads the configuration and hands it to every part that can
// take it live. Settings that need a restart (ports, data directory, bus) are
// reported, not applied; a configuration that does not load changes nothing.
func (m *master) reload(ctx context.Context) {
	tag := "brine/master/" + m.cfg.Settings.ID + "/reload"
	cfg, err := loadConfig(m.flags)
	if err != nil {
		m.log.Error("configuration reload failed; keeping the running one", "err", err)
		m.fire(ctx, tag, map[string]any{"success": false, "error": err.Error()})
		return
	}
	old, cur := m.cfg.Settings, cfg.Settings
	if old.DataDir != cur.DataDir || old.Interface != cur.Interface || old.PublishPort != cur.PublishPort ||
		old.RetPort != cur.RetPort || old.Bus != cur.Bus || old.KeyFile != cur.KeyFile || old.MaxEventSize != cur.MaxEventSize {
		m.log.Warn("data_dir, interface, ports, key_file, max_event_size and bus settings take effect at the next start")
	}
	if l, err := parseLevel(cur.LogLevel); err == nil {
		m.logLevel.Set(l)
	}
	var failed []string
	for _, r := range m.reloads {
		if err := r(ctx, cfg); err != nil {
			m.log.Error("reload", "err", err)
			failed = append(failed, err.Error())
		}
	}
	m.cfg = cfg
	m.log.Info("configuration reloaded", "files", strings.Join(cfg.Files, ","))
	data := map[string]any{"success": len(failed) == 0, "files": cfg.Files}
	if len(failed) > 0 {
		data["errors"] = failed
	}
	m.fire(ctx, tag, data)
}
