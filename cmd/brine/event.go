package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/cli/agentcmd"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/pyjson"
)

func newEventCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "event",
		Short: "Send events to the master and watch its event stream",
	}
	cmd.AddCommand(newEventSendCmd(g), newEventWatchCmd(g))
	return cmd
}

func newEventSendCmd(g *globalFlags) *cobra.Command {
	var (
		cf     clientFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "send TAG [DATA | KEY=VALUE…]",
		Short: "Fire an event on the master (like salt-call event.send)",
		Long: `Fire an event on the master. DATA is a JSON or YAML mapping; KEY=VALUE pairs
are parsed as YAML scalars the way Salt parses them (42 is a number, yes/true
a boolean, ~ null). A mapping and pairs may be combined; the mapping wins.
The event id is printed once the master has stored the event durably.
Tags under salt/job/, salt/run/, salt/auth, salt/key and brine/ are reserved
for the master and refused.`,
		Example: `  brine event send myco/deploy/done '{"app": "web", "version": 42}'
  brine event send myco/deploy/done app=web version=42 canary=yes
  brine event send myco/ping --master 10.0.0.5:4506 --key-file ./master.key`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageError{errors.New("send needs a TAG")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			tag := args[0]
			if err := bus.ValidateTag(tag); err != nil {
				return usageError{err}
			}
			data, err := agentcmd.ParseEventData(args[1:])
			if err != nil {
				return usageError{err}
			}
			reqAddr, _, key, err := cf.endpoints(g)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.timeout)
			defer cancel()
			client, err := cf.dial(ctx, reqAddr, key)
			if err != nil {
				return err
			}
			defer client.Close()
			id, err := client.Publish(ctx, tag, data)
			if err != nil {
				return cf.masterError(reqAddr, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]string{"id": id, "tag": tag})
			}
			_, err = fmt.Fprintln(out, id)
			return err
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"id": …, "tag": …} instead of the bare id`)
	return cmd
}

func newEventWatchCmd(g *globalFlags) *cobra.Command {
	var (
		cf     clientFlags
		count  int
		quiet  bool
		pretty bool
		asJSON bool
		since  string
	)
	cmd := &cobra.Command{
		Use:   "watch [PATTERN]",
		Short: "Print the master's events as salt-run state.event does",
		Long: `Print events as they happen, one per line as "tag<TAB>json" exactly like
salt-run state.event. PATTERN matches like Salt's: the exact tag, a glob
(* also crosses /) or a regular expression matching the whole tag.
--since replays stored events before following live ones, with no gap and
no duplicate: after an event id, from an RFC 3339 time, from a duration ago
(10m), or from the oldest event kept (all, or 0).`,
		Example: `  brine event watch
  brine event watch 'salt/cloud/*/created' --pretty
  brine event watch 'salt/minion/*/start' --count 3 --quiet   # a barrier in a script
  brine event watch --since 2026-11-22T10:00:00Z --json
  brine event watch 'myco/*' --since all                     # everything kept (bus.max_age)`,
		Args: rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pattern := "*"
			if len(args) == 1 {
				pattern = args[0]
			}
			match := fnmatch.ExprMatcher(pattern)
			from, err := parseSince(since)
			if err != nil {
				return usageError{err}
			}
			reqAddr, pubAddr, key, err := cf.endpoints(g)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			dctx, dcancel := context.WithTimeout(ctx, cf.timeout)
			client, err := cf.dial(dctx, reqAddr, key)
			dcancel()
			if err != nil {
				return err
			}
			defer client.Close()
			out := cmd.OutOrStdout()
			seen := 0
			err = client.Watch(ctx, pubAddr, fnmatch.ExprPrefix(pattern)+"*", from, func(ev *bus.Event) error {
				if !match(ev.Tag) {
					return nil
				}
				if !quiet {
					if err := printEvent(out, ev, pretty, asJSON); err != nil {
						return err
					}
				}
				seen++
				if count > 0 && seen >= count {
					cancel()
				}
				return nil
			})
			if count > 0 && seen >= count {
				return nil
			}
			if err != nil && cmd.Context().Err() != nil {
				return nil // interrupted
			}
			if ue, ok := errors.AsType[*gateway.UnreachableError](err); ok {
				return unreachableError{ue} // the publish port
			}
			return err
		},
	}
	cf.register(cmd)
	cmd.Flags().IntVar(&count, "count", 0, "exit after N matching events (0: run until interrupted)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "print nothing (with --count: wait for events as a barrier)")
	cmd.Flags().BoolVar(&pretty, "pretty", false, "indent the JSON by 4 and sort its keys, as state.event pretty=True")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print whole event envelopes as JSON lines")
	cmd.Flags().StringVar(&since, "since", "", "replay from an event id (exclusive), an RFC 3339 time, a duration back (10m) or all (the oldest kept) before following live events")
	return cmd
}

// printEvent writes one event in state.event's format, or as an envelope.
func printEvent(w io.Writer, ev *bus.Event, pretty, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	data, err := pyjson.Format(ev.Data, pretty)
	if err != nil {
		return fmt.Errorf("event %s: %w", ev.ID, err)
	}
	_, err = fmt.Fprintf(w, "%s\t%s\n", ev.Tag, data)
	return err
}

// parseSince reads --since.
func parseSince(s string) (bus.Since, error) {
	since, err := bus.ParseSince(s)
	if err != nil {
		return since, fmt.Errorf("--since %w", err)
	}
	return since, nil
}
