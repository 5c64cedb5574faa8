package master

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strconv"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/integrations"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/reactor"
	"github.com/brinehq/brine/saltmaster"
	"github.com/brinehq/brine/target"
)

// startAPI runs the HTTP API when the configuration has an api: section
// (it is off otherwise): webhooks, events in and out, jobs and mine
// look-ups, /healthz and /metrics. SIGHUP applies new tokens, hooks and
// limits.
func (m *Master) startAPI(context.Context) error {
	cfg, on, err := api.LoadConfig(m.cfg)
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
	log := m.component("api")
	cfg.Source = m.source + "/api"
	cfg.Checks = m.checks(rcfg.Consumer)
	cfg.Gauges = m.gauges()
	cfg.Jobs = apiJobs{m.jobs}
	cfg.Mine = apiMine{m.mine}
	srv, err := api.New(cfg, m.bus, log)
	if err != nil {
		return err
	}
	for _, in := range m.integrations {
		r, ok := in.(integrations.Reporter)
		if !ok {
			continue
		}
		st, on := r.Status()
		if !on {
			continue
		}
		snapshot := func() map[string]uint64 { st, _ := r.Status(); return st.Stats }
		if err := srv.AddCounters(in.Name(), st.Help, slices.Sorted(maps.Keys(st.Stats)), snapshot); err != nil {
			return err
		}
	}
	if m.salt != nil {
		st := m.salt.Stats()
		if err := srv.AddCounters("salt_transport", saltmaster.StatsHelp, slices.Sorted(maps.Keys(st)), m.salt.Stats); err != nil {
			return err
		}
	}
	warnOpenHooks(log, cfg)
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	log.Info("api listening", "addr", ln.Addr().String(), "tls", cfg.TLSCert != "", "hooks", len(cfg.Hooks), "tokens", len(cfg.Tokens))
	m.api = srv
	m.grp.Go(func() error { return srv.Run(m.ctx, ln) })
	return nil
}

// reloadAPI applies a new api: section.
func (m *Master) reloadAPI(c *config.Master) error {
	next, on, err := api.LoadConfig(c)
	if m.api == nil {
		if err == nil && on {
			m.component("api").Warn("api: the api: section takes effect at the next start")
		}
		return err
	}
	switch {
	case err != nil:
		return err
	case !on:
		return errors.New("api: removing the api: key takes effect at the next start")
	}
	warnOpenHooks(m.component("api"), next)
	return m.api.Reload(next)
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
		since, err := bus.ParseSince(v)
		if err != nil || since.Time.IsZero() {
			return nil, fmt.Errorf("%w: since=%q: want an RFC 3339 time or a duration like 10m", api.ErrBadQuery, v)
		}
		f.Since = since.Time
	}
	return orEmpty(j.s.List(ctx, f))
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
	if _, err := target.Parse(tgt, tgtType); err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrBadQuery, err)
	}
	return orEmpty(mm.s.Select(ctx, tgt, tgtType))
}
