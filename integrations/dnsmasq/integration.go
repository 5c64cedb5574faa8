package dnsmasq

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations"
)

// Integration is dnsmasq in the master: with a `dnsmasq:` block it keeps
// dnsmasq's files in sync with the mine; without one, dnsmasq.refresh says
// so. A reload applies a changed block; adding or removing the block takes
// a restart.
type Integration struct {
	s   atomic.Pointer[Syncer] // nil while off
	log *slog.Logger
}

var _ integrations.Integration = (*Integration)(nil)

// NewIntegration returns the integration, not started.
func NewIntegration() *Integration { return &Integration{log: slog.Default()} }

// Name implements integrations.Integration.
func (i *Integration) Name() string { return ConfigKey }

// Funcs implements integrations.Integration.
func (i *Integration) Funcs() []function.Func { return funcs(i.s.Load) }

// Start implements integrations.Integration.
func (i *Integration) Start(_ context.Context, env integrations.Env, cfg config.Decoder) error {
	i.log = env.Log
	c, err := LoadConfig(cfg)
	if err != nil || c == nil {
		return err
	}
	s, err := New(c, env.Mine, Options{Events: env.Events, Logger: env.Log})
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.Source(ConfigKey), err)
	}
	i.s.Store(s)
	env.Go(s.Run)
	return nil
}

// Reload implements integrations.Integration.
func (i *Integration) Reload(_ context.Context, cfg config.Decoder) error {
	c, err := LoadConfig(cfg)
	s := i.s.Load()
	switch {
	case err != nil:
		return err
	case s == nil && c != nil:
		i.log.Warn("dnsmasq: the dnsmasq block takes effect at the next start")
	case s == nil:
	case c == nil:
		i.log.Warn("dnsmasq: the dnsmasq block was removed; the integration stops at the next start")
	default:
		return s.SetConfig(c)
	}
	return nil
}
