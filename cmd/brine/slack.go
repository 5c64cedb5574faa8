package main

import (
	"context"
	"encoding/json"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/integrations/slack"
)

// startSlack registers slack.post and slack.call_hook and, when the config
// has a slack: section, runs the audit trail, answers slack.status and
// applies the section again on SIGHUP (a section added later needs a
// restart).
func startSlack(ctx context.Context, m *master, grp *errgroup.Group) error {
	cfg, ok, err := slack.LoadConfig(m.cfg)
	if err != nil {
		return err
	}
	if !ok {
		return slack.Register(m.funcs, nil)
	}
	kv, err := slack.OpenThreadBucket(ctx, m.bus.JetStream(), m.cfg.Settings.Bus.Replicas)
	if err != nil {
		return err
	}
	a := slack.New(cfg, kv, m.bus, slack.WithLogger(m.log.With("component", "slack")), slack.WithSource(m.source+"/slack"))
	if err := slack.Register(m.funcs, a); err != nil {
		return err
	}
	m.gateway.Handle("slack.status", func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"config": cfg, "stats": a.Stats().Snapshot()}, nil
	})
	m.reloads = append(m.reloads, func(_ context.Context, c *config.Master) error {
		cfg, ok, err := slack.LoadConfig(c)
		switch {
		case err != nil:
			return err
		case !ok:
			return errors.New("slack: the section was removed; the audit stops at the next start")
		}
		a.Reload(cfg)
		return nil
	})
	grp.Go(func() error { return a.Run(ctx, m.bus) })
	return nil
}
