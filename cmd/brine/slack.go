package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/integrations/slack"
	"github.com/brinehq/brine/master/rpc"
)

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
			if err := callMaster(cmd.Context(), g, &cf, rpc.Status(slack.ConfigKey), struct{}{}, &rep); err != nil {
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
