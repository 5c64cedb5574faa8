package slack

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations"
)

// Integration is Slack in the master: slack.post and slack.call_hook
// always, and with a `slack:` section the audit trail, which SIGHUP
// reconfigures (adding the section takes a restart).
type Integration struct {
	a   atomic.Pointer[Audit] // nil while the audit is off
	log *slog.Logger
}

var (
	_ integrations.Integration = (*Integration)(nil)
	_ integrations.Reporter    = (*Integration)(nil)
)

// NewIntegration returns the integration, not started.
func NewIntegration() *Integration { return &Integration{log: slog.Default()} }

// Name implements integrations.Integration.
func (i *Integration) Name() string { return ConfigKey }

// Funcs implements integrations.Integration.
func (i *Integration) Funcs() []function.Func { return funcs(i.a.Load) }

// Start implements integrations.Integration: the audit consumes the bus and
// remembers its threads in the ThreadBucket.
func (i *Integration) Start(ctx context.Context, env integrations.Env, cfg config.Decoder) error {
	i.log = env.Log
	c, ok, err := LoadConfig(cfg)
	if err != nil || !ok {
		return err
	}
	threads, err := env.Bus.Bucket(ctx, ThreadBucket)
	if err != nil {
		return err
	}
	a := New(c, threads, env.Bus, WithLogger(env.Log), WithSource(env.Events.Source))
	i.a.Store(a)
	env.Go(func(ctx context.Context) error { return a.Run(ctx, env.Bus) })
	return nil
}

// Reload implements integrations.Integration.
func (i *Integration) Reload(_ context.Context, cfg config.Decoder) error {
	c, ok, err := LoadConfig(cfg)
	a := i.a.Load()
	switch {
	case err != nil:
		return err
	case a == nil && ok:
		i.log.Warn("slack: the slack section takes effect at the next start")
	case a == nil:
	case !ok:
		return errors.New("slack: the section was removed; the audit stops at the next start")
	default:
		a.Reload(c)
	}
	return nil
}

// Status implements integrations.Reporter: the settings in force (no
// secrets) and what the audit posted, retried, held or dropped.
func (i *Integration) Status() (integrations.Status, bool) {
	a := i.a.Load()
	if a == nil {
		return integrations.Status{}, false
	}
	return integrations.Status{Config: a.cur().cfg, Stats: a.Stats().Snapshot(), Help: "Slack audit messages and retries"}, true
}
