package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/cli/agentcmd"
	"github.com/brinehq/brine/master"
	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/reactor"
)

func newReactorCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reactor",
		Short: "Test reaction files, list the mapping, manage dead letters",
	}
	cmd.AddCommand(newReactorTestCmd(g), newReactorListCmd(g), newReactorDLQCmd(g), newReactorRedriveCmd(g))
	return cmd
}

func newReactorTestCmd(g *globalFlags) *cobra.Command {
	var execute, asJSON bool
	cmd := &cobra.Command{
		Use:   "test TAG [DATA | KEY=VALUE…]",
		Short: "Show what an event would do: matching files, rendered YAML, calls, errors",
		Long: `Dry-run the reactor for one event, without a master: list the mapping entries
the tag matches, render every reaction file with the event (Jinja, then YAML),
and print the calls that would run, with every error located by file and line
(by line of the rendered text, printed with line numbers, when a Jinja loop or
condition changed the line count). --execute also runs the runner calls,
printing the events they fire instead of publishing them (the integrations'
functions - ddns.*, mine.*, slack.* - are checked but not run: they need the
master). The exit code is 1 if anything failed.`,
		Example: `  brine reactor test salt/cloud/web1/created '{"name": "web1", "public_ips": ["192.0.2.10"]}'
  brine reactor test salt/key act=pend id=web-01 --execute
  brine reactor test myco/deploy/done app=web --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageError{errors.New("test needs a TAG")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := agentcmd.ParseEventData(args[1:])
			if err != nil {
				return usageError{err}
			}
			return reactorTest(cmd.Context(), g, cmd.OutOrStdout(), args[0], data, execute, asJSON)
		},
	}
	cmd.Flags().BoolVar(&execute, "execute", false, "run the runner calls too (events they fire are printed, not published)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func reactorTest(ctx context.Context, g *globalFlags, out io.Writer, tag string, data map[string]any, execute, asJSON bool) error {
	if err := bus.ValidateTag(tag); err != nil {
		return usageError{err}
	}
	cfg, err := loadConfig(g)
	if err != nil {
		return err
	}
	rcfg, err := reactor.LoadConfig(cfg)
	if err != nil {
		return err
	}
	// One attempt: a dry run reports a failure at once instead of backing off.
	rcfg.Retry = reactor.Retry{Attempts: 1}
	funcs, err := master.DryRunFunctions()
	if err != nil {
		return err
	}
	// Every problem is in the report; log lines would only repeat them.
	r := reactor.New(rcfg, funcs, reactor.WithLogger(slog.New(slog.DiscardHandler)), reactor.WithMinions(master.DryRunMinions{}))
	ev, err := bus.NewEvent(tag, data, bus.Origin{Source: "brine://reactor-test"})
	if err != nil {
		return usageError{err}
	}
	rep, err := r.Test(ctx, ev, execute)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "    ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := printTestReport(out, rep); err != nil {
		return err
	}
	if rep.Problems > 0 {
		return fmt.Errorf("reactor test %s: %d problem(s)", tag, rep.Problems)
	}
	return nil
}

func printTestReport(out io.Writer, rep *reactor.TestReport) error {
	w := &errWriter{w: out}
	w.printf("tag: %s\n", rep.Tag)
	if len(rep.Files) == 0 {
		w.printf("no mapping entry matches this tag\n")
	}
	for _, f := range rep.Files {
		path := f.Path
		if path == "" {
			path = "(not found)"
		}
		w.printf("\nmatched %q -> %s (%s)\n", f.Glob, f.Spec, path)
		if f.Rendered != "" {
			w.printf("rendered:\n")
			for i, line := range strings.Split(strings.TrimRight(f.Rendered, "\n"), "\n") {
				w.printf("%5d  %s\n", i+1, line)
			}
		}
	}
	w.printf("\ncalls:\n")
	if len(rep.Calls) == 0 {
		w.printf("  (none)\n")
	}
	for _, c := range rep.Calls {
		w.printf("  %s: %s\n", c.ID, formatCall(c))
		if c.RenderedLine {
			w.printf("      at %s (rendered line %d)\n", c.File, c.Line)
		} else {
			w.printf("      at %s:%d\n", c.File, c.Line)
		}
		for _, req := range c.Require {
			w.printf("      require %s\n", req)
		}
		for _, req := range c.Onfail {
			w.printf("      onfail %s\n", req)
		}
		for _, warn := range c.Warnings {
			w.printf("      warning: %s\n", warn)
		}
	}
	if len(rep.Errors) > 0 {
		w.printf("\nerrors:\n")
		for _, e := range rep.Errors {
			w.printf("  %s\n", e)
		}
	}
	if rep.Results != nil {
		w.printf("\nresults:\n")
		for _, res := range rep.Results {
			switch {
			case res.Error != "":
				w.printf("  %s: %s: %s\n", res.ID, res.Status, res.Error)
			case res.Reason != "":
				w.printf("  %s: %s (%s)\n", res.ID, res.Status, res.Reason)
			default:
				ret, _ := json.Marshal(res.Return)
				w.printf("  %s: %s jid %s: %s\n", res.ID, res.Status, res.JID, ret)
			}
		}
		w.printf("\nevents fired (not published):\n")
		for _, ev := range rep.Events {
			w.printf("  %s\t%s\n", ev.Tag, ev.Data)
		}
	}
	return w.err
}

// formatCall prints a reaction as Salt's CLI would: kind.fun args key=value.
func formatCall(c *reactor.Reaction) string {
	var b strings.Builder
	b.WriteString(c.Call())
	if c.Tgt != nil {
		fmt.Fprintf(&b, " tgt=%s", jsonText(c.Tgt))
		if c.TgtType != "" {
			fmt.Fprintf(&b, " tgt_type=%s", c.TgtType)
		}
	}
	for _, a := range c.Args {
		fmt.Fprintf(&b, " %s", jsonText(a))
	}
	keys := slices.Sorted(maps.Keys(c.Kwargs))
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, jsonText(c.Kwargs[k]))
	}
	return b.String()
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// errWriter keeps the first write error so printing code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func newReactorListCmd(g *globalFlags) *cobra.Command {
	var (
		cf     clientFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Show the running master's reactor mapping, file status and counters",
		Args:  rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rep rpc.ReactorListReply
			if err := callMaster(cmd.Context(), g, &cf, rpc.ReactorList, struct{}{}, &rep); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(rep)
			}
			w := &errWriter{w: out}
			if len(rep.Entries) == 0 {
				w.printf("no reactor mapping\n")
			}
			for _, e := range rep.Entries {
				w.printf("%s\n", e.Glob)
				for _, f := range e.Files {
					switch {
					case f.Error != "":
						w.printf("    %s  ERROR %s\n", f.Spec, f.Error)
					case f.Path != f.Spec:
						w.printf("    %s  -> %s (%d bytes, %s)\n", f.Spec, f.Path, f.Size, f.ModTime.Format(time.RFC3339))
					default:
						w.printf("    %s  (%d bytes, %s)\n", f.Spec, f.Size, f.ModTime.Format(time.RFC3339))
					}
				}
			}
			keys := slices.Sorted(maps.Keys(rep.Stats))
			var stats []string
			for _, k := range keys {
				stats = append(stats, fmt.Sprintf("%s=%d", k, rep.Stats[k]))
			}
			w.printf("\nworkers=%d max_depth=%d %s\n", rep.Config.Workers, rep.Config.MaxDepth, strings.Join(stats, " "))
			return w.err
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newReactorDLQCmd(g *globalFlags) *cobra.Command {
	var (
		cf     clientFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "List reactions that failed every attempt (the dead-letter list)",
		Args:  rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var list []*reactor.DeadLetter
			if err := callMaster(cmd.Context(), g, &cf, rpc.ReactorDLQ, struct{}{}, &list); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSONList(out, list)
			}
			if len(list) == 0 {
				_, err := fmt.Fprintln(out, "no dead letters")
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTIME\tTAG\tREACTION\tCALL\tATTEMPTS\tERROR")
			for _, dl := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", dl.ID, dl.Time.Format(time.RFC3339), dl.Event.Tag,
					dl.Reaction.ID, dl.Reaction.Call(), dl.Attempts, dl.Error)
			}
			return tw.Flush()
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newReactorRedriveCmd(g *globalFlags) *cobra.Command {
	var (
		cf         clientFlags
		all        bool
		asRecorded bool
	)
	cmd := &cobra.Command{
		Use:   "redrive [ID | --all]",
		Short: "Run dead-lettered reactions again; those that succeed leave the list",
		Long: `Run dead-lettered reactions again, once each, caused by their original event.
By default the reaction is rendered again from the current reaction files
(the usual fix of a failing reaction is editing its file); --as-recorded
replays the call exactly as it was recorded. Each line says which ran.`,
		Example: `  brine reactor redrive 20261122001500123456
  brine reactor redrive --all
  brine reactor redrive --all --as-recorded`,
		Args: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) == 1) || len(args) > 1 {
				return usageError{errors.New("redrive needs one ID or --all")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			req := rpc.RedriveRequest{All: all, AsRecorded: asRecorded}
			if !all {
				req.ID = args[0]
			}
			var replies []rpc.RedriveReply
			if err := callMaster(cmd.Context(), g, &cf, rpc.ReactorRedrive, req, &replies); err != nil {
				return err
			}
			failed := 0
			for _, rep := range replies {
				if rep.Error != "" {
					failed++
					fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\tjid %s\t(%s)\t%s\n", rep.ID, rep.Status, rep.JID, rep.From, rep.Error)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\tjid %s\t(%s)\n", rep.ID, rep.Status, rep.JID, rep.From)
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d redriven reactions failed again (still in the dead-letter list)", failed, len(replies))
			}
			return nil
		},
	}
	cf.register(cmd)
	cf.longTimeout(cmd, "give up when the reactions have not finished within this time (they go on)")
	cmd.Flags().BoolVar(&all, "all", false, "redrive every dead letter")
	cmd.Flags().BoolVar(&asRecorded, "as-recorded", false, "replay the recorded calls instead of rendering them from the current files")
	return cmd
}
