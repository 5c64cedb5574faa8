package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/agent/proto"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/output"
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

// execRun is one `brine exec` as it runs.
type execRun struct {
	f       *execFlags
	w       io.Writer
	errw    io.Writer
	client  *gateway.Client
	pubAddr string
	opts    output.Options
	format  string
	static  output.Returns
	// Outcome.
	highest   int
	failed    bool
	noAnswer  []string
	returned  int
	lastNotes []string
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
	f.cf.timeout = 10 * time.Second
	reqAddr, pubAddr, key, err := f.cf.endpoints(g)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	dctx, dcancel := context.WithTimeout(ctx, f.cf.timeout)
	client, err := f.cf.dial(dctx, reqAddr, key)
	dcancel()
	if err != nil {
		return err
	}
	defer client.Close()
	r := &execRun{f: f, w: cmd.OutOrStdout(), errw: cmd.ErrOrStderr(), client: client, pubAddr: pubAddr, format: f.out,
		opts: output.Options{Color: !f.noColor && (f.color || paletteFor(cmd.OutOrStdout(), f.static).on)}}
	if f.preview {
		return r.previewTarget(ctx, tgt, tgtType)
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
	if f.batch != "" {
		err = r.batch(ctx, job)
	} else {
		err = r.one(ctx, job)
	}
	if err != nil {
		return err
	}
	return r.finish()
}

// call asks the master, bounded by the client timeout.
func (r *execRun) call(ctx context.Context, method string, in, out any) error {
	cctx, cancel := context.WithTimeout(ctx, r.f.cf.timeout)
	defer cancel()
	return r.f.cf.masterError(r.pubAddr, r.client.Call(cctx, method, in, out))
}

func (r *execRun) previewTarget(ctx context.Context, tgt any, tgtType string) error {
	var rep rpc.TargetReply
	if err := r.call(ctx, rpc.ExecTargets, rpc.TargetRequest{Tgt: tgt, TgtType: tgtType}, &rep); err != nil {
		return err
	}
	for _, id := range rep.Minions {
		fmt.Fprintf(r.w, "- %s\n", id)
	}
	if len(rep.Minions) == 0 {
		return r.noMatch(jobs.Published{Missing: rep.Missing})
	}
	return nil
}

// returnEvent is one agent's return as the watch delivers it.
type returnEvent struct {
	jid, id string
	data    map[string]any
}

// watch follows the returns of jid from before it is published (the
// catch-up from since closes the gap), sending them on ch.
func (r *execRun) watch(ctx context.Context, jid string, since time.Time, ch chan<- returnEvent, errc chan<- error) {
	err := r.client.Watch(ctx, r.pubAddr, "salt/job/"+jid+"/ret/*", bus.Since{Time: since}, func(ev *bus.Event) error {
		data, err := ev.DataMap()
		if err != nil {
			return nil
		}
		id := ev.Tag[strings.LastIndexByte(ev.Tag, '/')+1:]
		select {
		case ch <- returnEvent{jid: jid, id: id, data: data}:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	})
	if ctx.Err() == nil && err != nil {
		errc <- err
	}
}

// publish publishes job with a jid of its own, its returns already watched.
func (r *execRun) publish(ctx context.Context, job jobs.Targeted, ch chan<- returnEvent, errc chan<- error) (jobs.Published, error) {
	job.JID = jobs.NewJID()
	go r.watch(ctx, job.JID, time.Now().Add(-2*time.Second), ch, errc)
	var pub jobs.Published
	if err := r.call(ctx, rpc.ExecPublish, job, &pub); err != nil {
		return pub, err
	}
	return pub, nil
}

// one runs a job on every agent of its target at once.
func (r *execRun) one(ctx context.Context, job jobs.Targeted) error {
	ch, errc := make(chan returnEvent, 1024), make(chan error, 1)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	pub, err := r.publish(wctx, job, ch, errc)
	if err != nil {
		return err
	}
	if len(pub.Minions) == 0 {
		return r.noMatch(pub)
	}
	if r.f.async {
		fmt.Fprintf(r.w, "Executed command with job ID: %s\n", pub.JID)
		return nil
	}
	r.announce(pub)
	pending := map[string]string{} // id -> jid
	for _, id := range pub.Minions {
		if !slices.Contains(pub.NotConnected, id) {
			pending[id] = pub.JID
		}
	}
	return r.collect(ctx, pending, ch, errc, nil)
}

// announce prints the jid (-v, --show-jid) and the agents that will not
// answer because they are not connected.
func (r *execRun) announce(pub jobs.Published) {
	if r.f.verbose {
		fmt.Fprintf(r.w, "Executing job with jid %s\n-------------------------------------------\n\n", pub.JID)
	} else if r.f.showJID {
		fmt.Fprintf(r.w, "jid: %s\n", pub.JID)
	}
	for _, id := range pub.NotConnected {
		r.print(id, "Minion did not return. [Not connected]", "nested")
		r.noAnswer = append(r.noAnswer, id)
	}
	for _, id := range pub.Missing {
		if r.f.verbose {
			fmt.Fprintf(r.errw, "%s: no accepted key (brine key -L)\n", id)
		}
	}
}

func (r *execRun) noMatch(pub jobs.Published) error {
	msg := "No minions matched the target. No command was sent, no jid was assigned."
	if len(pub.Missing) > 0 {
		msg += " No accepted key for: " + strings.Join(pub.Missing, ", ") + "."
	}
	return retcodeError{code: exitUsage, err: errors.New(msg)}
}

// collect prints returns as they arrive until every pending agent
// answered; --timeout after the last sign of life, it asks those still
// silent whether they run the job and waits on for those that do. next,
// when set, is called after each return (batches start the next agent).
func (r *execRun) collect(ctx context.Context, pending map[string]string, ch <-chan returnEvent, errc <-chan error,
	next func(id string) (map[string]string, error)) error {
	wait := time.Duration(r.f.wait * float64(time.Second))
	// finished are agents that said they finished the job without its
	// return having arrived: it is on its way, and waited for once more.
	finished := map[string]bool{}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case ev := <-ch:
			if pending[ev.id] != ev.jid {
				continue // a copy, or another job's
			}
			delete(pending, ev.id)
			r.take(ev)
			if next != nil {
				more, err := next(ev.id)
				if err != nil {
					return err
				}
				maps.Copy(pending, more)
			}
			timer.Reset(wait)
		case err := <-errc:
			return fmt.Errorf("watching the returns: %w", err)
		case <-timer.C:
			byJID := map[string][]string{}
			for id, jid := range pending {
				byJID[jid] = append(byJID[jid], id)
			}
			running := false
			for jid, ids := range byJID {
				var st map[string]proto.JobState
				if err := r.call(ctx, rpc.ExecFindJob, rpc.FindJobRequest{JID: jid, Minions: ids}, &st); err != nil {
					return err
				}
				for id, s := range st {
					if s.Running || s.Done && !finished[id] {
						running = true
					}
					finished[id] = finished[id] || s.Done
					if s.Running && r.f.verbose {
						fmt.Fprintf(r.errw, "%s is still running job %s\n", id, jid)
					}
				}
			}
			if running {
				timer.Reset(wait)
				continue
			}
			for _, id := range slices.Sorted(maps.Keys(pending)) {
				r.print(id, "Minion did not return. [No response]", "nested")
				r.noAnswer = append(r.noAnswer, id)
				r.lastNotes = append(r.lastNotes, pending[id])
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// take prints one return and notes its outcome.
func (r *execRun) take(ev returnEvent) {
	r.returned++
	rc := 0
	if n, ok := ev.data["retcode"].(int64); ok {
		rc = int(n)
	}
	ok, _ := ev.data["success"].(bool)
	if !ok || rc != 0 {
		r.failed = true
		r.highest = max(r.highest, rc, 1) // a failure with retcode 0 still fails
	}
	out, _ := ev.data["out"].(string)
	r.print(ev.id, ev.data["return"], out)
}

// print writes one agent's return now, or keeps it for --static.
func (r *execRun) print(id string, v any, out string) {
	if r.f.static {
		r.static.Add(id, v)
		return
	}
	format := r.format
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
		format := r.format
		if format == "" {
			format = "nested"
		}
		if err := output.Write(r.w, format, r.static, r.opts); err != nil {
			return err
		}
	}
	if len(r.lastNotes) > 0 {
		fmt.Fprintf(r.errw, "The agents that did not answer may still return. To look up the returns later:\n\n    brine jobs show %s\n", r.lastNotes[0])
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

// batchSize reads -b: N agents, or N% of those selected (at least one).
func batchSize(spec string, total int) (int, error) {
	if p, ok := strings.CutSuffix(spec, "%"); ok {
		pc, err := strconv.ParseFloat(p, 64)
		if err != nil || pc <= 0 || pc > 100 {
			return 0, usageError{fmt.Errorf("--batch-size %q: want N or a percentage between 0 and 100", spec)}
		}
		return max(1, int(math.Ceil(float64(total)*pc/100))), nil
	}
	n, err := strconv.Atoi(spec)
	if err != nil || n < 1 {
		return 0, usageError{fmt.Errorf("--batch-size %q: want a positive number of agents or N%%", spec)}
	}
	return n, nil
}

// batch runs job on a rolling window of agents, as Salt's --batch-size:
// the first N at once, then one more as each returns (after
// --batch-wait), each start a job of its own.
func (r *execRun) batch(ctx context.Context, job jobs.Targeted) error {
	if r.f.async {
		return usageError{errors.New("--async and --batch-size cannot be used together")}
	}
	var rep rpc.TargetReply
	if err := r.call(ctx, rpc.ExecTargets, rpc.TargetRequest{Tgt: job.Tgt, TgtType: job.TgtType}, &rep); err != nil {
		return err
	}
	if len(rep.Minions) == 0 {
		return r.noMatch(jobs.Published{Missing: rep.Missing})
	}
	size, err := batchSize(r.f.batch, len(rep.Minions))
	if err != nil {
		return err
	}
	var queue []string
	for _, id := range rep.Minions {
		if slices.Contains(rep.Connected, id) {
			queue = append(queue, id)
		} else {
			r.print(id, "Minion did not return. [Not connected]", "nested")
			r.noAnswer = append(r.noAnswer, id)
		}
	}
	ch, errc := make(chan returnEvent, 1024), make(chan error, 4)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	start := func(ids []string) (map[string]string, error) {
		if len(ids) == 0 {
			return nil, nil
		}
		sub := job
		sub.Tgt, sub.TgtType = ids, "list"
		fmt.Fprintf(r.errw, "Executing run on %s\n", output.Repr(toAny(ids)))
		pub, err := r.publish(wctx, sub, ch, errc)
		if err != nil {
			return nil, err
		}
		if r.f.verbose {
			fmt.Fprintf(r.w, "Executing job with jid %s\n", pub.JID)
		}
		out := map[string]string{}
		for _, id := range pub.Minions {
			if slices.Contains(pub.NotConnected, id) {
				r.print(id, "Minion did not return. [Not connected]", "nested")
				r.noAnswer = append(r.noAnswer, id)
				continue
			}
			out[id] = pub.JID
		}
		return out, nil
	}
	n := min(size, len(queue))
	pending, err := start(queue[:n])
	if err != nil {
		return err
	}
	queue = queue[n:]
	return r.collect(ctx, pending, ch, errc, func(string) (map[string]string, error) {
		if len(queue) == 0 {
			return nil, nil
		}
		if r.f.batchWait > 0 {
			select {
			case <-time.After(time.Duration(r.f.batchWait * float64(time.Second))):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		id := queue[0]
		queue = queue[1:]
		return start([]string{id})
	})
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
