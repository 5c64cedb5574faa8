package ddns

import (
	"context"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations"
)

// ConfigKey is the master configuration key of this integration.
const ConfigKey = "ddns"

// Integration is dynamic DNS in the master: the ddns.* runner functions
// with the defaults of the `ddns:` section, which SIGHUP reloads, and with
// `ddns: sync:` the built-in sync with the mine (its zone and targets take
// effect at the next start).
type Integration struct {
	c     *Client
	owner string // the master id: the default owner of ownership records
}

var _ integrations.Integration = (*Integration)(nil)

// NewIntegration returns the integration, not started: its functions use
// an empty configuration until Start reads the master's.
func NewIntegration() *Integration { return &Integration{c: New(Config{})} }

// Name implements integrations.Integration.
func (i *Integration) Name() string { return ConfigKey }

// Funcs implements integrations.Integration.
func (i *Integration) Funcs() []function.Func { return i.c.Funcs() }

// Start implements integrations.Integration.
func (i *Integration) Start(_ context.Context, env integrations.Env, cfg config.Decoder) error {
	// Masters sharing a bus own the zone together: whichever holds the
	// sync's lease deletes the names any of them wrote.
	i.owner = env.MasterID
	if env.Cluster != "" {
		i.owner = env.Cluster
	}
	conf, err := LoadConfig(cfg, i.owner)
	if err != nil {
		return err
	}
	i.c.log = env.Log
	i.c.SetConfig(conf)
	if conf.Sync != nil {
		// One master of a cluster writes the zone at a time.
		env.Go(func(ctx context.Context) error {
			return env.Lease(ctx, "ddns.sync."+conf.Sync.Zone, func(ctx context.Context) error { return i.c.Sync(ctx, env.Mine, env.Events.Fire) })
		})
	}
	return nil
}

// Reload implements integrations.Integration.
func (i *Integration) Reload(_ context.Context, cfg config.Decoder) error {
	conf, err := LoadConfig(cfg, i.owner)
	if err != nil {
		return err
	}
	i.c.SetConfig(conf)
	return nil
}
