package main

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/brinehq/brine/integrations/ddns"
)

func newDdnsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ddns",
		Short: "Dynamic DNS (RFC 2136): check servers, keys and permissions",
	}
	cmd.AddCommand(newDdnsCheckCmd(g))
	return cmd
}

func newDdnsCheckCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check [ZONE…]",
		Short: "Verify that each zone is served, and that the key may update and transfer it",
		Long: `For each zone (by default every zone under ddns: zones in the master config),
with the settings the master would use: ask the server for the zone's SOA
(unsigned: is it served here?), send a signed update that changes nothing
(may the key update it?), and a signed AXFR (may it read it, as a reconcile
does). The zone's serial does not change. Runs from the configuration, no
master needed; the exit code is 1 if any zone fails.`,
		Example: `  brine ddns check
  brine ddns check example.com 20.10.in-addr.arpa --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := loadConfig(g)
			if err != nil {
				return err
			}
			cfg, err := ddns.LoadConfig(mc, mc.Settings.ID)
			if err != nil {
				return err
			}
			zones := args
			if len(zones) == 0 {
				zones = cfg.ZoneNames()
			}
			if len(zones) == 0 {
				return usageError{errors.New("ddns check: no zone given and none under ddns: zones in the configuration")}
			}
			c := ddns.New(cfg)
			results := make([]ddns.ZoneCheck, len(zones))
			var grp errgroup.Group
			for i, z := range zones {
				grp.Go(func() error { results[i] = c.Check(cmd.Context(), z); return nil })
			}
			grp.Wait()
			if err := printChecks(cmd, results, asJSON); err != nil {
				return err
			}
			var failed []string
			for _, r := range results {
				if !r.OK {
					failed = append(failed, strings.TrimSuffix(r.Zone, "."))
				}
			}
			if len(failed) > 0 {
				return errors.New("ddns check failed for " + strings.Join(failed, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printChecks(cmd *cobra.Command, results []ddns.ZoneCheck, asJSON bool) error {
	out := cmd.OutOrStdout()
	if asJSON {
		return json.NewEncoder(out).Encode(results)
	}
	t := newTable(paletteFor(out, false), "ZONE", "SERVER", "KEY", "SERIAL", "SOA", "UPDATE", "AXFR")
	for _, col := range []string{"SOA", "UPDATE", "AXFR"} {
		t.color(col, checkHue)
	}
	for _, r := range results {
		key := r.Key
		if key == "" {
			key = "(unsigned)"
		}
		axfr := r.Transfer
		if axfr == "ok" {
			axfr = "ok (" + strconv.Itoa(r.Records) + " records)"
		}
		t.row(strings.TrimSuffix(r.Zone, "."), r.Server, key, strconv.FormatUint(uint64(r.Serial), 10), r.SOA, r.Update, axfr)
	}
	return t.write(out)
}
