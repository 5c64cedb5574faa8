package master

import (
	"context"
	"time"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/reactor"
)

// reactorWatchInterval is how often the master looks for mapping changes on
// disk (new files under path globs, an edited mapping file).
const reactorWatchInterval = 2 * time.Second

// startReactor runs the reactor: it reads the reactor keys of the
// configuration, keeps dead letters in the bus's bucket, and reloads on
// SIGHUP and when its files change.
func (m *Master) startReactor(context.Context) error {
	cfg, err := reactor.LoadConfig(m.cfg)
	if err != nil {
		return err
	}
	m.reactor = reactor.New(m.callerDefault(cfg), m.funcs, reactor.WithLogger(m.component("reactor")),
		reactor.WithSource(m.source+"/reactor"), reactor.WithMinions(minions{m.publisher}))
	m.grp.Go(func() error { return m.reactor.Run(m.ctx, m.bus, m.dlq) })
	m.grp.Go(func() error { return m.reactor.Watch(m.ctx, reactorWatchInterval) })
	return nil
}

// reloadReactor applies the reactor keys of a new configuration.
func (m *Master) reloadReactor(c *config.Master) error {
	rc, err := reactor.LoadConfig(c)
	if err != nil {
		return err
	}
	return m.reactor.Reload(m.callerDefault(rc))
}

// callerDefault makes the master's own id the agent caller.* reactions
// run on when reactor_caller_id is not set.
func (m *Master) callerDefault(c reactor.Config) reactor.Config {
	if c.CallerID == "" {
		c.CallerID = m.cfg.Settings.ID
	}
	return c
}
