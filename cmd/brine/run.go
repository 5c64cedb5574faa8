package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/cli/agentcmd"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/output"
)

func newRunCmd(g *globalFlags) *cobra.Command {
	var (
		cf     clientFlags
		asJSON bool
		state  agentcmd.StateFlags
	)
	cmd := &cobra.Command{
		Use:   "run FUN [ARG…] [KEY=VALUE…]",
		Short: "Run a function on the master as a job (like salt-run)",
		Long: `Run one of the master's functions (test.arg, ddns.add_host, mine.get,
slack.post, …) as a job: the master fires salt/run/<jid>/new and /ret with
your OS user, records the job (brine jobs show JID) and prints the return as
YAML. Arguments are parsed as YAML scalars the way Salt parses them (42 is a
number, yes a boolean); KEY=VALUE arguments are keyword arguments. The exit
code is 1 when the function failed.`,
		Example: `  brine run test.arg hello color=red
  brine run ddns.add_host zone=example.com name=web1 ip=192.0.2.10 keyfile=/etc/brine/ddns.key
  brine run test.sleep 30 --timeout 1m --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageError{errors.New("run needs a FUN")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := parseRunArgs(args)
			if err != nil {
				return usageError{err}
			}
			if req.Fun == "state.event" {
				return stateEvent(cmd, g, &cf, req)
			}
			if req.User, err = osUser(); err != nil {
				return err
			}
			var reply json.RawMessage
			if err := callMaster(cmd.Context(), g, &cf, rpc.Run, req, &reply); err != nil {
				return err
			}
			var res struct {
				jobs.Result
				Return json.RawMessage `json:"return"`
			}
			if err := json.Unmarshal(reply, &res); err != nil {
				return fmt.Errorf("run: reply: %w", err)
			}
			out := cmd.OutOrStdout()
			retcode := 0
			switch {
			case asJSON:
				if _, err := fmt.Fprintf(out, "%s\n", reply); err != nil {
					return err
				}
				if r, ok := output.ParseRunner(res.Return); ok {
					retcode = r.Retcode
				}
			case res.Success || string(res.Return) != "null":
				opts := output.Options{Color: paletteFor(out, false).on, StateOutput: state.Output, StateQuiet: !state.Verbose}
				if retcode, err = output.WriteRunner(out, res.Return, opts); err != nil {
					return err
				}
			}
			if retcode != 0 {
				return retcodeError{code: retcode, err: fmt.Errorf("%s: a step failed (job %s, retcode %d)", req.Fun, res.JID, retcode)}
			}
			if !res.Success {
				return fmt.Errorf("%s failed (job %s): %s", req.Fun, res.JID, res.Error)
			}
			return nil
		},
	}
	cf.register(cmd)
	cf.longTimeout(cmd, "give up when the job has not returned within this time (the job goes on)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"jid", "fun", "return", "success", "error"} as JSON`)
	state.Add(cmd.Flags())
	g.SaltLogFlag(cmd)
	return cmd
}

// parseRunArgs splits FUN [ARG…] [KEY=VALUE…] as salt-call does
// (agentcmd.ParseCall) into the request the master runs.
func parseRunArgs(args []string) (rpc.RunRequest, error) {
	c, err := agentcmd.ParseCall(args)
	return rpc.RunRequest{Fun: c.Fun, Args: c.Args, Kwargs: c.Kwargs}, err
}

// osUser is the user a job started from this CLI is recorded under.
func osUser() (string, error) {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	if u := os.Getenv("USER"); u != "" {
		return u, nil
	}
	return "", errors.New("cannot tell which OS user runs this command")
}

// stateEvent is `salt-run state.event [tagmatch] [count=N] [quiet=True]
// [pretty=True]`: Salt's runner that prints the event bus, which brine
// serves with `brine event watch`.
func stateEvent(cmd *cobra.Command, g *globalFlags, cf *clientFlags, req rpc.RunRequest) error {
	var args []string
	switch len(req.Args) {
	case 0:
	case 1:
		args = append(args, fmt.Sprint(req.Args[0]))
	default:
		return usageError{errors.New("state.event takes one positional argument, the tag to match")}
	}
	for k, v := range req.Kwargs {
		switch k {
		case "tagmatch":
			if len(args) > 0 {
				return usageError{errors.New("state.event: tagmatch given twice")}
			}
			args = append(args, fmt.Sprint(v))
		case "count":
			args = append(args, "--count", fmt.Sprint(v))
		case "quiet", "pretty":
			if b, ok := v.(bool); !ok {
				return usageError{fmt.Errorf("state.event: %s=%v: want True or False", k, v)}
			} else if b {
				args = append(args, "--"+k)
			}
		case "node":
			if v != "master" {
				return usageError{fmt.Errorf("state.event: node=%v: brine's agents send their events to the master; watch node=master", v)}
			}
		default:
			return usageError{fmt.Errorf("state.event: unknown argument %q (tagmatch, count, quiet, pretty, node)", k)}
		}
	}
	if cf.master != "" {
		args = append(args, "--master", cf.master)
	}
	if cf.keyFile != "" {
		args = append(args, "--key-file", cf.keyFile)
	}
	if cf.publishPort != 0 {
		args = append(args, "--publish-port", strconv.Itoa(cf.publishPort))
	}
	w := newEventWatchCmd(g)
	w.SetArgs(args)
	w.SetOut(cmd.OutOrStdout())
	w.SetErr(cmd.ErrOrStderr())
	w.SilenceErrors, w.SilenceUsage = true, true
	return w.ExecuteContext(cmd.Context())
}
