package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations/dnsmasq"
	"github.com/brinehq/brine/mine"
)

// openMine opens the mine's bucket on the master's bus.
func openMine(ctx context.Context, m *master) (*mine.Store, error) {
	kv, err := m.bus.KeyValue(ctx, mine.Bucket)
	if err != nil {
		return nil, err
	}
	return mine.New(kv), nil
}

// startMine wires the mine into the master: its runner functions, the
// mine.get|list|delete requests of `brine mine`, and the durable consumers
// that keep it current from cloud and brine/mine/* events.
func startMine(ctx context.Context, m *master, grp *errgroup.Group) error {
	store, err := openMine(ctx, m)
	if err != nil {
		return err
	}
	if err := store.Register(m.funcs); err != nil {
		return err
	}
	m.gateway.Handle("mine.get", func(ctx context.Context, body json.RawMessage) (any, error) {
		var req mineGetRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("mine.get: %w", err)
		}
		kwargs := map[string]any{"tgt": req.Tgt, "tgt_type": req.TgtType}
		if req.Fun != "" {
			kwargs["fun"] = req.Fun
		}
		return m.funcs.Call(ctx, "mine.get", nil, kwargs, nil)
	})
	m.gateway.Handle("mine.list", func(ctx context.Context, _ json.RawMessage) (any, error) {
		hosts, err := store.List(ctx)
		if hosts == nil {
			hosts = []*mine.Host{}
		}
		return hosts, err
	})
	m.gateway.Handle("mine.delete", func(ctx context.Context, body json.RawMessage) (any, error) {
		var req mineDeleteReply
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("mine.delete: %w", err)
		}
		existed, err := store.Delete(ctx, req.ID)
		return mineDeleteReply{ID: req.ID, Deleted: existed}, err
	})
	grp.Go(func() error { return store.Follow(ctx, m.bus, m.source+"/mine", m.log.With("component", "mine")) })
	return nil
}

// startDnsmasq runs the dnsmasq integration when the config has a
// `dnsmasq:` block; without one, dnsmasq.refresh says so. A reload applies a
// changed block; adding or removing the block takes a restart.
func startDnsmasq(ctx context.Context, m *master, grp *errgroup.Group) error {
	cfg, err := dnsmasq.LoadConfig(m.cfg)
	if err != nil {
		return err
	}
	if cfg == nil {
		m.reloads = append(m.reloads, func(_ context.Context, c *config.Master) error {
			if c.Has(dnsmasq.ConfigKey) {
				m.log.Warn("dnsmasq: the dnsmasq block takes effect at the next start")
			}
			return nil
		})
		return m.funcs.Register(function.Func{
			Name:   "dnsmasq.refresh",
			Doc:    "Regenerate dnsmasq's files from the mine (not configured on this master).",
			Params: []function.Param{{Name: "force", Kind: function.Bool, Default: false}},
			Run: func(context.Context, *function.Input) (any, error) {
				return nil, errors.New("dnsmasq.refresh: the dnsmasq integration is not configured (no dnsmasq: block in the master config)")
			},
		})
	}
	store, err := openMine(ctx, m)
	if err != nil {
		return err
	}
	s, err := dnsmasq.New(cfg, store, dnsmasq.Options{Publisher: m.bus, Source: m.source + "/dnsmasq",
		Logger: m.log.With("component", "dnsmasq")})
	if err != nil {
		return fmt.Errorf("%s: %w", m.cfg.Source(dnsmasq.ConfigKey), err)
	}
	if err := s.Register(m.funcs); err != nil {
		return err
	}
	m.reloads = append(m.reloads, func(_ context.Context, c *config.Master) error {
		nc, err := dnsmasq.LoadConfig(c)
		switch {
		case err != nil:
			return err
		case nc == nil:
			m.log.Warn("dnsmasq: the dnsmasq block was removed; the integration stops at the next start")
			return nil
		}
		return s.SetConfig(nc)
	})
	grp.Go(func() error { return s.Run(ctx) })
	return nil
}

type mineGetRequest struct {
	Tgt     string `json:"tgt"`
	Fun     string `json:"fun,omitempty"`
	TgtType string `json:"tgt_type,omitempty"`
}

type mineDeleteReply struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

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
			req := mineGetRequest{Tgt: args[0], TgtType: tgtType}
			if len(args) == 2 {
				req.Fun = args[1]
			}
			var out map[string]any
			if err := callMaster(cmd.Context(), g, &cf, "mine.get", req, &out); err != nil {
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
			if err := callMaster(cmd.Context(), g, &cf, "mine.list", struct{}{}, &hosts); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if hosts == nil {
					hosts = []*mine.Host{}
				}
				return json.NewEncoder(out).Encode(hosts)
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
			var rep mineDeleteReply
			if err := callMaster(cmd.Context(), g, &cf, "mine.delete", mineDeleteReply{ID: args[0]}, &rep); err != nil {
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
