package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/cli/agentcmd"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/output"
	"github.com/brinehq/brine/remote"
)

// execFlags are `brine exec`'s (Salt's salt) options.
type execFlags struct {
	cf        clientFlags
	tgtType   map[string]*bool
	wait      float64
	batch     string
	batchWait float64
	async     bool
	verbose   bool
	showJID   bool
	out       string
	static    bool
	asJSON    bool
	passRC    bool
	killAfter float64
	preview   bool
	noColor   bool
	color     bool
	state     agentcmd.StateFlags
}

// targetFlags are Salt's target-type options, shorthand to tgt_type.
var targetFlags = []struct{ short, long, tgtType, usage string }{
	{"E", "pcre", "pcre", "the target is a regular expression on agent ids"},
	{"L", "list", "list", "the target is a comma-separated list of agent ids"},
	{"G", "grain", "grain", "the target is a grain, key:glob (nested keys with :)"},
	{"P", "grain-pcre", "grain_pcre", "the target is a grain, key:regex"},
	{"I", "pillar", "pillar", "the target is a pillar value, key:glob"},
	{"J", "pillar-pcre", "pillar_pcre", "the target is a pillar value, key:regex"},
	{"S", "ipcidr", "ipcidr", "the target is an address or network (CIDR) the agent's ipv4/ipv6 grains hold"},
	{"C", "compound", "compound", "the target is a compound expression (G@ I@ L@ E@ P@ S@ N@, and/or/not, parentheses)"},
	{"N", "nodegroup", "nodegroup", "the target is a nodegroup of the master's configuration"},
}

func newExecCmd(g *globalFlags) *cobra.Command {
	f := &execFlags{tgtType: map[string]*bool{}}
	cmd := &cobra.Command{
		Use:   "exec TGT FUN [ARG…] [KEY=VALUE…]",
		Short: "Run an execution function on the agents a target selects (like salt)",
		Long: `Publish a job to the agents TGT selects and print each return as it
arrives, as Salt's salt command does: TGT is a glob on agent ids unless an
option says otherwise (-L list, -E regex, -G grain, -P grain regex, -I
pillar, -S address or network, -C compound, -N nodegroup). Arguments are
parsed as Salt parses them: YAML scalars, KEY=VALUE keyword arguments.

Agents that are not connected are reported at once; brine waits --timeout
seconds for the others, longer while they say the job still runs, and
ends as soon as every agent answered. The exit status is 0 when every
agent returned success, 1 when one failed or did not answer (with
--retcode-passthrough, the highest retcode), 2 when the target selects no
agent.`,
		Example: `  brine exec '*' test.ping
  brine exec web01 event.send myapp/deploy/complete '{"version": "1.4.2", "status": "ok"}'
  brine exec -G roles:nginx cmd.run 'nginx -s reload'
  brine exec -C 'G@os:Debian and web*' pkg.version openssh-server --out json
  brine exec '*' state.highstate --batch 25% --batch-wait 5`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 && !(len(args) == 1 && f.preview) {
				return usageError{errors.New("exec needs a TGT and a FUN")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd, g, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cf.master, "master", "", "master HOST[:PORT] of its request port (default: interface:ret_port from the config, 127.0.0.1:4506)")
	fl.IntVar(&f.cf.publishPort, "publish-port", 0, "master's publish port (default: publish_port from the config, 4505)")
	fl.StringVar(&f.cf.keyFile, "key-file", "", "file holding the master's key (default: $BRINE_KEY, $BRINE_KEY_FILE, key_file, <data_dir>/master.key)")
	for _, t := range targetFlags {
		f.tgtType[t.tgtType] = fl.BoolP(t.long, t.short, false, t.usage)
	}
	fl.Float64VarP(&f.wait, "timeout", "t", 5, "seconds to wait for returns (extended while agents report the job still running)")
	fl.StringVarP(&f.batch, "batch-size", "b", "", "run on N agents (or N%) at a time, starting the next as each returns")
	fl.StringVar(&f.batch, "batch", "", "same as --batch-size")
	fl.Float64Var(&f.batchWait, "batch-wait", 0, "seconds to wait after an agent returns before starting the next")
	fl.BoolVar(&f.async, "async", false, "publish and print the jid without waiting for returns")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "show the jid and which agents did not return")
	fl.BoolVar(&f.showJID, "show-jid", false, "print the jid")
	fl.StringVar(&f.out, "out", "", "outputter: "+strings.Join(output.Formats, ", ")+" (default: what the function names, else nested)")
	fl.StringVar(&f.out, "output", "", "same as --out")
	fl.BoolVarP(&f.static, "static", "s", false, "print all returns together at the end")
	fl.BoolVar(&f.asJSON, "json", false, "print every return as one JSON document at the end (--out json --static)")
	fl.BoolVar(&f.passRC, "retcode-passthrough", false, "exit with the highest retcode the agents returned")
	fl.Float64Var(&f.killAfter, "kill-after", 0, "seconds after which agents stop the function and report it timed out (0: never)")
	fl.BoolVar(&f.preview, "preview-target", false, "list the agents the target selects, publish nothing")
	fl.BoolVar(&f.noColor, "no-color", false, "never colour the output")
	fl.BoolVar(&f.color, "force-color", false, "colour the output even when it is not a terminal")
	f.state.Add(fl)
	g.SaltLogFlag(cmd)
	cmd.MarkFlagsMutuallyExclusive("batch-size", "batch")
	cmd.MarkFlagsMutuallyExclusive("out", "output")
	return cmd
}

// target reads TGT and the target-type option.
func (f *execFlags) target(tgt string) (any, string, error) {
	chosen := ""
	for _, t := range targetFlags {
		if *f.tgtType[t.tgtType] {
			if chosen != "" {
				return nil, "", usageError{fmt.Errorf("only one target type: -%s and another were given", t.short)}
			}
			chosen = t.tgtType
		}
	}
	if chosen == "" {
		chosen = "glob"
	}
	return tgt, chosen, nil
}

// execRun is one `brine exec` as it runs: it shows what remote.Client
// reports, as Salt's salt command does, and keeps the outcome for the exit
// status.
type execRun struct {
	f      *execFlags
	w      io.Writer
	errw   io.Writer
	opts   output.Options
	static output.Returns
	// Outcome.
	highest  int
	failed   bool
	noAnswer []string
	lookup   string // a jid to look up later, when agents did not answer
}

func (f *execFlags) run(cmd *cobra.Command, g *globalFlags, args []string) error {
	tgt, tgtType, err := f.target(args[0])
	if err != nil {
		return err
	}
	if f.asJSON {
		f.out, f.static = "json", true
	}
	if f.out != "" {
		if err := output.Check(f.out); err != nil {
			return usageError{err}
		}
	}
	if f.wait <= 0 {
		return usageError{fmt.Errorf("--timeout %g: want a positive number of seconds", f.wait)}
	}
	if f.async && f.batch != "" {
		return usageError{errors.New("--async and --batch-size cannot be used together")}
	}
	f.cf.timeout = 10 * time.Second
	reqAddr, pubAddr, key, err := f.cf.endpoints(g)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	dctx, dcancel := context.WithTimeout(ctx, f.cf.timeout)
	conn, err := f.cf.dial(dctx, reqAddr, key)
	dcancel()
	if err != nil {
		return err
	}
	defer conn.Close()
	c := &remote.Client{Conn: conn, PubAddr: pubAddr, CallTimeout: f.cf.timeout}
	r := &execRun{f: f, w: cmd.OutOrStdout(), errw: cmd.ErrOrStderr(),
		opts: output.Options{Color: !f.noColor && (f.color || paletteFor(cmd.OutOrStdout(), f.static).on),
			StateOutput: f.state.Output, StateQuiet: !f.state.Verbose}}
	if err := output.CheckStateOutput(f.state.Output); err != nil {
		return usageError{err}
	}
	if f.preview {
		rep, err := c.Targets(ctx, tgt, tgtType)
		if err != nil {
			return f.cf.masterError(reqAddr, err)
		}
		for _, id := range rep.Minions {
			fmt.Fprintf(r.w, "- %s\n", id)
		}
		if len(rep.Minions) == 0 {
			return noMatch(&remote.NoMatchError{Missing: rep.Missing})
		}
		return nil
	}
	user, err := osUser()
	if err != nil {
		return err
	}
	req, err := parseRunArgs(args[1:])
	if err != nil {
		return usageError{err}
	}
	job := jobs.Targeted{Fun: req.Fun, Arg: jobs.PackArgs(req.Args, req.Kwargs), Tgt: tgt, TgtType: tgtType, User: user,
		KillAfter: f.killAfter}
	if f.async {
		job.JID = jobs.NewJID()
		pub, err := c.Publish(ctx, job)
		if err != nil {
			return r.failure(reqAddr, err)
		}
		fmt.Fprintf(r.w, "Executed command with job ID: %s\n", pub.JID)
		return nil
	}
	if f.batch != "" {
		if _, err := jobs.BatchSize(f.batch, 1); err != nil {
			return usageError{fmt.Errorf("--batch-size: %w", err)}
		}
	}
	o := remote.Options{Wait: time.Duration(f.wait * float64(time.Second)), Batch: f.batch,
		BatchWait: time.Duration(f.batchWait * float64(time.Second))}
	if err := c.Run(ctx, job, o, r.show); err != nil {
		return r.failure(reqAddr, err)
	}
	return r.finish()
}

// failure is the error of a run that did not complete: Salt's words for a
// target that selects nobody (exit 2), else the master's error.
func (r *execRun) failure(reqAddr string, err error) error {
	if nm, ok := errors.AsType[*remote.NoMatchError](err); ok {
		return noMatch(nm)
	}
	return r.f.cf.masterError(reqAddr, err)
}

// noMatch is Salt's answer to a target that selects nobody, exit 2.
func noMatch(e *remote.NoMatchError) error {
	msg := "No minions matched the target. No command was sent, no jid was assigned."
	if len(e.Missing) > 0 {
		msg += " No accepted key for: " + strings.Join(e.Missing, ", ") + "."
	}
	return retcodeError{code: exitUsage, err: errors.New(msg)}
}

// show prints one thing the run reported.
func (r *execRun) show(rep remote.Report) {
	switch rep.Kind {
	case remote.Published:
		if r.f.batch != "" {
			fmt.Fprintf(r.errw, "Executing run on %s\n", output.Repr(py.List(rep.IDs)))
		}
		switch {
		case r.f.verbose:
			fmt.Fprintf(r.w, "Executing job with jid %s\n-------------------------------------------\n\n", rep.JID)
		case r.f.showJID:
			fmt.Fprintf(r.w, "jid: %s\n", rep.JID)
		}
		if r.f.verbose {
			for _, id := range rep.Missing {
				fmt.Fprintf(r.errw, "%s: no accepted key (brine key -L)\n", id)
			}
		}
	case remote.NotConnected:
		r.print(rep.ID, "Minion did not return. [Not connected]", "nested")
		r.noAnswer = append(r.noAnswer, rep.ID)
	case remote.Returned:
		rc := 0
		if n, ok := rep.Data["retcode"].(int64); ok {
			rc = int(n)
		}
		if ok, _ := rep.Data["success"].(bool); !ok || rc != 0 {
			r.failed = true
			r.highest = max(r.highest, rc, 1) // a failure with retcode 0 still fails
		}
		out, _ := rep.Data["out"].(string)
		r.print(rep.ID, rep.Data["return"], out)
	case remote.StillRunning:
		if r.f.verbose {
			fmt.Fprintf(r.errw, "%s is still running job %s\n", rep.ID, rep.JID)
		}
	case remote.NoResponse:
		r.print(rep.ID, "Minion did not return. [No response]", "nested")
		r.noAnswer = append(r.noAnswer, rep.ID)
		if r.lookup == "" {
			r.lookup = rep.JID
		}
	}
}

// print writes one agent's return now, or keeps it for --static.
func (r *execRun) print(id string, v any, out string) {
	if r.f.static {
		r.static.Add(id, v)
		return
	}
	format := r.f.out
	if format == "" {
		format = out
	}
	if output.Check(format) != nil {
		format = "nested"
	}
	var one output.Returns
	one.Add(id, v)
	if err := output.Write(r.w, format, one, r.opts); err != nil {
		fmt.Fprintf(r.errw, "brine: printing %s's return: %v\n", id, err)
	}
}

// finish prints what --static kept and turns the outcome into the exit
// status.
func (r *execRun) finish() error {
	if r.f.static && len(r.static.IDs) > 0 {
		format := r.f.out
		if format == "" {
			format = "nested"
		}
		if err := output.Write(r.w, format, r.static, r.opts); err != nil {
			return err
		}
	}
	if r.lookup != "" {
		fmt.Fprintf(r.errw, "The agents that did not answer may still return. To look up the returns later:\n\n    brine jobs show %s\n", r.lookup)
	}
	switch {
	case r.f.passRC && r.highest > 0:
		return retcodeError{code: r.highest, err: errors.New("ERROR: Minions returned with non-zero exit code")}
	case r.failed:
		return retcodeError{code: exitFailure, err: errors.New("ERROR: Minions returned with non-zero exit code")}
	case len(r.noAnswer) > 0:
		return retcodeError{code: exitFailure, err: fmt.Errorf("%d of the targeted agents did not return: %s",
			len(r.noAnswer), strings.Join(r.noAnswer, ", "))}
	}
	return nil
}
