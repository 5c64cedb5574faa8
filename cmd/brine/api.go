package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/reactor"
	"github.com/brinehq/brine/reactor/kvdlq"
)

// reactorBacklogLimit is the number of events waiting for the reactor (or
// another durable consumer) past which /healthz calls it degraded.
const reactorBacklogLimit = 10000

// apiConfig reads the api: key of c; on is false when there is none.
func apiConfig(c *config.Master) (cfg api.Config, on bool, err error) {
	if !c.Has("api") {
		return api.Config{}, false, nil
	}
	src := c.Source("api")
	var raw map[string]any
	if err := c.Decode("api", &raw); err != nil {
		return api.Config{}, true, err
	}
	if err := api.CheckKeys(raw); err != nil {
		return api.Config{}, true, fmt.Errorf("%s: %w", src, err)
	}
	var st api.Settings
	if err := c.Decode("api", &st); err != nil {
		return api.Config{}, true, err
	}
	if cfg, err = st.Resolve(filepath.Dir(src)); err != nil {
		return api.Config{}, true, fmt.Errorf("%s: %w", src, err)
	}
	return cfg, true, nil
}

// startAPI runs the HTTP API when the configuration has an api: key (it is
// off otherwise): webhooks, events in and out, jobs and mine look-ups,
// /healthz and /metrics. SIGHUP applies new tokens, hooks and limits.
func startAPI(ctx context.Context, m *master, grp *errgroup.Group) error {
	cfg, on, err := apiConfig(m.cfg)
	if err != nil || !on {
		return err
	}
	rcfg, err := reactor.LoadConfig(m.cfg)
	if err != nil {
		return err
	}
	if rcfg.Consumer == "" {
		rcfg.Consumer = reactor.DefaultConsumer
	}
	log := m.log.With("component", "api")
	cfg.Source = m.source + "/api"
	cfg.Checks = []api.Check{
		{Name: "bus", Func: func(ctx context.Context) error {
			_, err := m.bus.LastSeq(ctx)
			return err
		}},
		{Name: "reactor", Func: func(ctx context.Context) error { return reactorHealth(ctx, m.bus, rcfg.Consumer) }},
		{Name: "integrations", Func: func(ctx context.Context) error { return consumersHealth(ctx, m.bus, rcfg.Consumer) }},
	}
	cfg.Gauges = []api.Gauge{
		{Name: "brine_bus_consumer_lag", Help: "Events a durable consumer has not acknowledged yet (pending + in flight).",
			Label: "consumer", Sample: func(ctx context.Context) (map[string]float64, error) { return consumerLag(ctx, m.bus) }},
		{Name: "brine_reactor_dead_letters", Help: "Reactions in the dead-letter list (brine reactor dlq).",
			Sample: func(ctx context.Context) (map[string]float64, error) { return deadLetters(ctx, m.bus) }},
		{Name: "brine_gateway_watchers", Help: "ZeroMQ watchers connected to the publish port now.",
			Sample: func(context.Context) (map[string]float64, error) {
				return map[string]float64{"": float64(m.gateway.Watchers())}, nil
			}},
	}
	keep, err := keepJobs(m.cfg)
	if err != nil {
		return err
	}
	jkv, err := jobs.OpenBucket(ctx, m.bus.JetStream(), keep, m.cfg.Settings.Bus.Replicas)
	if err != nil {
		return err
	}
	cfg.Jobs = apiJobs{jobs.NewStore(jkv, log)}
	ms, err := openMine(ctx, m)
	if err != nil {
		return err
	}
	cfg.Mine = apiMine{ms}
	srv, err := api.New(cfg, m.bus, log)
	if err != nil {
		return err
	}
	for _, c := range m.counters {
		names := slices.Sorted(maps.Keys(c.snapshot()))
		if err := srv.AddCounters(c.subsystem, c.help, names, c.snapshot); err != nil {
			return err
		}
	}
	warnOpenHooks(log, cfg)
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	log.Info("api listening", "addr", ln.Addr().String(), "tls", cfg.TLSCert != "", "hooks", len(cfg.Hooks), "tokens", len(cfg.Tokens))
	m.reloads = append(m.reloads, func(_ context.Context, c *config.Master) error {
		next, on, err := apiConfig(c)
		switch {
		case err != nil:
			return err
		case !on:
			return errors.New("api: removing the api: key takes effect at the next start")
		}
		warnOpenHooks(log, next)
		return srv.Reload(next)
	})
	grp.Go(func() error { return srv.Run(ctx, ln) })
	return nil
}

// warnOpenHooks says loudly which hook paths anyone may call, and that a
// configuration without tokens refuses everything else.
func warnOpenHooks(log *slog.Logger, cfg api.Config) {
	for _, h := range cfg.Hooks {
		if h.Auth == api.AuthNone {
			log.Warn("api: hook paths accept UNAUTHENTICATED requests: anyone who reaches the port can fire salt/netapi/hook events (auth: none)",
				"hooks", h.Path, "listen", cfg.Listen)
		}
	}
	if len(cfg.Tokens) == 0 {
		log.Warn("api: no tokens configured: POST /events, GET /events, /jobs, /mine and token-authenticated hooks refuse every request")
	}
}

// reactorHealth reports the reactor degraded when its durable consumer is
// missing (no reactor attached yet) or far behind.
func reactorHealth(ctx context.Context, b *natsbus.Bus, name string) error {
	c, err := b.JetStream().Consumer(ctx, natsbus.StreamName, name)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("no reactor attached to consumer %q", name)
	}
	if err != nil {
		return fmt.Errorf("reactor consumer %q: %w", name, err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("reactor consumer %q: %w", name, err)
	}
	if info.NumPending > reactorBacklogLimit {
		return fmt.Errorf("%d events waiting for the reactor (limit %d)", info.NumPending, reactorBacklogLimit)
	}
	return nil
}

// consumersHealth reports the durable consumers other than the reactor's
// (the mine, dnsmasq, Slack, jobs…) degraded when one is far behind.
func consumersHealth(ctx context.Context, b *natsbus.Bus, reactorConsumer string) error {
	lag, err := consumerLag(ctx, b)
	if err != nil {
		return err
	}
	var behind []string
	for name, n := range lag {
		if name != reactorConsumer && n > reactorBacklogLimit {
			behind = append(behind, fmt.Sprintf("%s is %.0f events behind", name, n))
		}
	}
	if len(behind) > 0 {
		slices.Sort(behind)
		return fmt.Errorf("%s (limit %d)", strings.Join(behind, "; "), reactorBacklogLimit)
	}
	return nil
}

// consumerLag samples every durable consumer of the event stream; the
// short-lived ones behind event streams and watches are left out.
func consumerLag(ctx context.Context, b *natsbus.Bus) (map[string]float64, error) {
	st, err := b.JetStream().Stream(ctx, natsbus.StreamName)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	l := st.ListConsumers(ctx)
	for info := range l.Info() {
		if info.Config.Durable == "" {
			continue
		}
		out[info.Name] = float64(info.NumPending) + float64(info.NumAckPending)
	}
	return out, l.Err()
}

// deadLetters counts the reactor's dead letters.
func deadLetters(ctx context.Context, b *natsbus.Bus) (map[string]float64, error) {
	kv, err := b.KeyValue(ctx, kvdlq.Bucket)
	if err != nil {
		return nil, err
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	n := 0
	for range keys.Keys() {
		n++
	}
	return map[string]float64{"": float64(n)}, nil
}

// apiJobs answers GET /jobs from the job store (read only).
type apiJobs struct{ s *jobs.Store }

func (j apiJobs) ListJobs(ctx context.Context, q url.Values) (any, error) {
	f := jobs.Filter{Fun: q.Get("fun"), User: q.Get("user")}
	if v := q.Get("active"); v != "" {
		a, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%w: active=%q: want true or false", api.ErrBadQuery, v)
		}
		f.Active = a
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: limit=%q: want a count", api.ErrBadQuery, v)
		}
		f.Limit = n
	}
	if v := q.Get("since"); v != "" {
		since, err := parseSince(v)
		if err != nil || since.Time.IsZero() {
			return nil, fmt.Errorf("%w: since=%q: want an RFC 3339 time or a duration like 10m", api.ErrBadQuery, v)
		}
		f.Since = since.Time
	}
	list, err := j.s.List(ctx, f)
	if list == nil {
		list = []*jobs.Job{}
	}
	return list, err
}

func (j apiJobs) GetJob(ctx context.Context, jid string) (any, error) {
	job, err := j.s.Get(ctx, jid)
	if errors.Is(err, jobs.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", api.ErrNotFound, err)
	}
	return job, err
}

// apiMine answers GET /mine from the mine (read only).
type apiMine struct{ s *mine.Store }

func (mm apiMine) MineHosts(ctx context.Context, tgt, tgtType string) (any, error) {
	if tgt == "" && tgtType == "" {
		tgt = "*"
	}
	if _, err := mine.ParseTarget(tgt, tgtType); err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrBadQuery, err)
	}
	hosts, err := mm.s.Select(ctx, tgt, tgtType)
	if hosts == nil {
		hosts = []*mine.Host{}
	}
	return hosts, err
}
