package master

import (
	"context"

	"github.com/brinehq/brine/integrations"
	"github.com/brinehq/brine/integrations/ddns"
	"github.com/brinehq/brine/integrations/dnsmasq"
	"github.com/brinehq/brine/integrations/slack"
)

// Integrations returns every integration this binary has, not started: one
// line each. The master starts them; `brine reactor test` lists their
// functions from the same list.
func Integrations() []integrations.Integration {
	return []integrations.Integration{
		ddns.NewIntegration(),
		dnsmasq.NewIntegration(),
		slack.NewIntegration(),
	}
}

// startIntegrations starts each integration with its environment.
func (m *Master) startIntegrations(ctx context.Context) error {
	m.integrations = Integrations()
	for _, in := range m.integrations {
		env := integrations.Env{
			MasterID: m.cfg.Settings.ID,
			Bus:      m.bus,
			Events:   m.emitter(in.Name()),
			Mine:     m.mine,
			Log:      m.component(in.Name()),
			Go:       func(fn func(context.Context) error) { m.grp.Go(func() error { return fn(m.ctx) }) },
			Lease:    m.cluster.leases.Run,
			Cluster:  m.clusterName(),
		}
		if err := in.Start(ctx, env, m.cfg); err != nil {
			return err
		}
	}
	return nil
}
