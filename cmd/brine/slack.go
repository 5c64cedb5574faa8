package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/spf13/cobra"
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
	m.counters = append(m.counters, counterSet{"slack", "Slack audit messages and retries", a.Stats().Snapshot})
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

func newSlackCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "slack",
		Short: "The Slack audit trail of the running master",
	}
	var (
		cf     clientFlags
		asJSON bool
	)
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the audit's settings (no secrets) and what it posted, retried, held or dropped",
		Args:  rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rep struct {
				Config json.RawMessage   `json:"config"`
				Stats  map[string]uint64 `json:"stats"`
			}
			if err := callMaster(cmd.Context(), g, &cf, "slack.status", struct{}{}, &rep); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(rep)
			}
			w := &errWriter{w: out}
			for _, k := range []string{"events", "posted", "rate_limited", "retries", "held", "dropped"} {
				w.printf("%-13s %d\n", k+":", rep.Stats[k])
			}
			return w.err
		},
	}
	cf.register(status)
	status.Flags().BoolVar(&asJSON, "json", false, "print {config, stats} as JSON")
	cmd.AddCommand(status)
	return cmd
}
