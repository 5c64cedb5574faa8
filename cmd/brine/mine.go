package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/mine"
)

func newMineCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mine",
		Short: "Query and edit the host inventory (Salt's mine, kept current from cloud events)",
	}
	cmd.AddCommand(newMineGetCmd(g), newMineListCmd(g), newMineDeleteCmd(g))
	return cmd
}

func newMineGetCmd(g *globalFlags) *cobra.Command {
	var (
		cf      clientFlags
		tgtType string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "get TGT [FUN]",
		Short: "Show what mine function FUN holds for the hosts TGT selects, as salt-run mine.get",
		Long: `Show {id: value} for the hosts TGT selects. FUN is a record field (fqdn, ips,
macs, provider, driver, instance_id, grains) or a Salt mine function
(network.ip_addrs: IPv4, network.ip_addrs6: IPv6, network.hw_addr: first MAC,
grains.items) or any name sent with mine.send; several, comma-separated, give
{fun: {id: value}}. Without FUN, whole records.`,
		Example: `  brine mine get 'web*' network.ip_addrs
  brine mine get web1,db1 ips,macs --tgt-type list --json
  brine mine get 'role:db' --tgt-type grain`,
		Args: rangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := rpc.MineGetRequest{Tgt: args[0], TgtType: tgtType}
			if len(args) == 2 {
				req.Fun = args[1]
			}
			var out map[string]any
			if err := callMaster(cmd.Context(), g, &cf, rpc.MineGet, req, &out); err != nil {
				return err
			}
			return printValue(cmd.OutOrStdout(), out, asJSON)
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&tgtType, "tgt-type", "glob", "target type: glob, list, pcre or grain")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// printJSONList writes list as a JSON array: [] when it is empty, never
// null, so that scripts can iterate over it.
func printJSONList[T any](w io.Writer, list []T) error {
	if list == nil {
		list = []T{}
	}
	return json.NewEncoder(w).Encode(list)
}

// printValue prints a query result as JSON or as YAML (Salt's outputs).
func printValue(w io.Writer, v any, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(v)
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		_, err := fmt.Fprintln(w, "no matching hosts")
		return err
	}
	b, err := yaml.MarshalWithOptions(v, yaml.Indent(4), yaml.IndentSequence(true))
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func newMineListCmd(g *globalFlags) *cobra.Command {
	var (
		cf     clientFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every host in the mine",
		Args:  rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var hosts []*mine.Host
			if err := callMaster(cmd.Context(), g, &cf, rpc.MineList, struct{}{}, &hosts); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSONList(out, hosts)
			}
			if len(hosts) == 0 {
				_, err := fmt.Fprintln(out, "the mine is empty")
				return err
			}
			sort.Slice(hosts, func(i, j int) bool { return hosts[i].ID < hosts[j].ID })
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tFQDN\tIPS\tMACS\tPROVIDER\tINSTANCE\tUPDATED\tSOURCE")
			for _, h := range hosts {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, dash(h.FQDN), dash(strings.Join(h.IPs, ",")),
					dash(strings.Join(h.MACs, ",")), dash(h.Provider), dash(h.InstanceID), h.Updated.Format(time.RFC3339), dash(h.Source))
			}
			return tw.Flush()
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newMineDeleteCmd(g *globalFlags) *cobra.Command {
	var (
		cf     clientFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Remove a host from the mine (dnsmasq and other watchers follow)",
		Args:  rangeArgs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rep rpc.MineDeleteReply
			if err := callMaster(cmd.Context(), g, &cf, rpc.MineDelete, rpc.MineDeleteReply{ID: args[0]}, &rep); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(rep)
			}
			if !rep.Deleted {
				_, err := fmt.Fprintf(out, "%s was not in the mine\n", rep.ID)
				return err
			}
			_, err := fmt.Fprintf(out, "deleted %s\n", rep.ID)
			return err
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
