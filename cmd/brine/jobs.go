package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/output"
)

// beginJob asks the master to announce a job this CLI runs itself (a `brine
// cloud` run) under the OS user; endJob reports its outcome. Use them in
// pairs on the same client.
func beginJob(ctx context.Context, c *gateway.Client, fun string, args []any, kwargs map[string]any) (rpc.RunRequest, error) {
	req := rpc.RunRequest{Fun: fun, Args: args, Kwargs: kwargs}
	var err error
	if req.User, err = osUser(); err != nil {
		return req, err
	}
	var job rpc.RunRequest
	if err := c.Call(ctx, rpc.JobsBegin, req, &job); err != nil {
		return req, err
	}
	return job, nil
}

// endJob fires the ret of job (beginJob's result): ret on success, err's
// message as a failure.
func endJob(ctx context.Context, c *gateway.Client, job rpc.RunRequest, ret any, err error) error {
	job.Return = ret
	if err != nil {
		job.Error = err.Error()
	}
	return c.Call(ctx, rpc.JobsEnd, job, nil)
}

func newJobsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List and look up the jobs the master ran or saw (like salt-run jobs.*)",
		Long: `Jobs are every run of a function that changes the world: brine run calls,
reactions, cloud runs, and salt/job/* events received from elsewhere. The
master keeps them for keep_jobs_seconds (or keep_jobs hours; default 24 h).`,
	}
	cmd.AddCommand(newJobsListCmd(g, false), newJobsListCmd(g, true), newJobsShowCmd(g))
	return cmd
}

func newJobsListCmd(g *globalFlags, active bool) *cobra.Command {
	var (
		cf     clientFlags
		f      jobs.Filter
		since  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List kept jobs, oldest first (like salt-run jobs.list_jobs)",
		Example: `  brine jobs list --fun 'runner.cloud.*' --since 1h
  brine jobs list --user alice --json`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if since != "" {
				s, err := parseSince(since)
				if err != nil || s.Time.IsZero() {
					return usageError{fmt.Errorf("--since %q: want an RFC 3339 time or a duration like 10m", since)}
				}
				f.Since = s.Time
			}
			f.Active = active
			var list []*jobs.Job
			if err := callMaster(cmd.Context(), g, &cf, rpc.JobsList, f, &list); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(list)
			}
			return printJobList(out, paletteFor(out, false), list)
		},
	}
	if active {
		cmd.Use = "active"
		cmd.Short = "List jobs that have not finished (like salt-run jobs.active)"
		cmd.Example = "  brine jobs active --json"
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&f.Fun, "fun", "", "only jobs whose function matches this glob (runner jobs are runner.<fun>)")
	cmd.Flags().StringVar(&f.User, "user", "", "only jobs started by this user (Reactor for reactions)")
	cmd.Flags().StringVar(&since, "since", "", "only jobs started at or after this RFC 3339 time or this long ago (e.g. 2h)")
	cmd.Flags().IntVar(&f.Limit, "limit", 0, "only the newest N jobs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the jobs as a JSON array")
	return cmd
}

func printJobList(out io.Writer, pal palette, list []*jobs.Job) error {
	t := newTable(pal, "JID", "STARTED", "USER", "STATUS", "COMMAND")
	t.color("STATUS", statusHue)
	for _, j := range list {
		t.row(j.JID, j.StartTime.UTC().Format(time.RFC3339), j.User, jobStatus(j), jobs.CommandLine(j, nil))
	}
	return t.write(out)
}

// jobStatus is one word (and a duration) for a job.
func jobStatus(j *jobs.Job) string {
	switch {
	case j.Active() && j.Kind == jobs.KindJob:
		return fmt.Sprintf("running (%d/%d returned)", len(j.Returns), len(j.Minions))
	case j.Active():
		return "running"
	case j.Interrupted && j.Rerun != "":
		return "interrupted, re-run as " + j.Rerun
	case j.Interrupted:
		return "interrupted"
	case j.Kind == jobs.KindRun && (j.Success == nil || !*j.Success):
		return fmt.Sprintf("failed in %.2fs", j.Duration)
	}
	for _, r := range j.Returns {
		if !r.Success {
			return fmt.Sprintf("failed in %.2fs", j.Duration)
		}
	}
	return fmt.Sprintf("succeeded in %.2fs", j.Duration)
}

func newJobsShowCmd(g *globalFlags) *cobra.Command {
	var (
		cf     clientFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show JID",
		Short: "Show one job and its return (like salt-run jobs.lookup_jid)",
		Long: `Show one job: its command line, user, start, status and steps, then its
return as salt-run jobs.lookup_jid prints it: with the outputter its
function names (highstate for state.apply, state.highstate, state.sls…),
others as YAML.`,
		Example: `  brine jobs show 20261122004512123456
  brine jobs show 20261122004512123456 --json | jq .return`,
		Args: rangeArgs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !jobs.IsJID(args[0]) {
				return usageError{fmt.Errorf("%q is not a JID (20 digits)", args[0])}
			}
			var reply json.RawMessage
			if err := callMaster(cmd.Context(), g, &cf, rpc.JobsShow, rpc.JobRequest{JID: args[0]}, &reply); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				_, err := fmt.Fprintf(out, "%s\n", reply)
				return err
			}
			return printJob(out, reply)
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole job record as JSON")
	return cmd
}

// printJob prints a job record (the master's JSON reply) for people.
func printJob(out io.Writer, reply json.RawMessage) error {
	var j jobs.Job
	// Numbers stay as sent, so that the return prints as the agent gave it.
	dec := json.NewDecoder(bytes.NewReader(reply))
	dec.UseNumber()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("jobs.show: reply: %w", err)
	}
	w := &errWriter{w: out}
	w.printf("jid:      %s\n", j.JID)
	w.printf("command:  %s\n", jobs.CommandLine(&j, nil))
	w.printf("user:     %s\n", j.User)
	w.printf("started:  %s\n", j.StartTime.UTC().Format(time.RFC3339Nano))
	w.printf("status:   %s\n", jobStatus(&j))
	if missing := j.Missing(); len(missing) > 0 {
		w.printf("missing:  %s\n", strings.Join(missing, ", "))
	}
	if len(j.NotConnected) > 0 {
		w.printf("not sent: %s (not connected)\n", strings.Join(j.NotConnected, ", "))
	}
	if len(j.Steps) > 0 {
		// An orchestration's steps, in the order they ran, each with its
		// result and timing, and its agents' returns below it.
		w.printf("steps:\n")
		var rets output.Returns
		rets.Add("steps", j.Steps)
		var b strings.Builder
		if err := output.Write(&b, "highstate", rets, output.Options{StateOutput: "full"}); err == nil {
			for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n")[1:] {
				w.printf("  %s\n", l)
			}
		}
	}
	w.printf("return:\n")
	if w.err != nil {
		return w.err
	}
	ret, err := json.Marshal(j.Lookup(false))
	if err != nil {
		return err
	}
	_, err = output.WriteRunner(&indented{w: out}, ret, output.Options{Color: paletteFor(out, false).on, StateOutput: "full"})
	return err
}

// indented prefixes every line written with two spaces.
type indented struct {
	w   io.Writer
	mid bool
}

func (i *indented) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, c := range string(p) {
		if !i.mid {
			b.WriteString("  ")
			i.mid = true
		}
		b.WriteRune(c)
		if c == '\n' {
			i.mid = false
		}
	}
	if _, err := io.WriteString(i.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
