// Command jobs measures remote execution (`brine exec`, Salt's salt
// command) against many agents: a real `brine master` runs as its own
// process, and N real agents (agent.Agent, each with its own configuration
// directory, CURVE key pair, on-disk outbox, connection and session) run
// in this process, as bench/agents runs them. It measures
//
//  1. test.ping to every agent through the real CLI, `brine exec '*'
//     test.ping`: the command's wall time, from exec until it exited having
//     printed every agent's return (each stored on the master's bus
//     first), and each return's latency on the master (its ret event's
//     time minus the job's new event's time) — what an operator waits for;
//  2. the returns stored per second under a stream of jobs published back
//     to back (test.ping to every agent, J times): every return is an event
//     fsync'ed on the master's JetStream store before the agent is told, so
//     this is the master's durable write rate under its heaviest ordinary
//     load, with its CPU and disk writes per return. The stream runs twice:
//     against the agents, and against as many wire agents (wire.go), which
//     speak the protocol and return at once, without the agents' own
//     fsyncs and files — which, with all agents in this process, cost the
//     shared two cores more than the master does;
//  3. a master SIGKILLed while a job runs (test.sleep on every agent) and
//     started again on the same data directory and ports: every agent's
//     return must be stored once the agents are back — none lost, and
//     copies (the same agent twice, the same event id twice) counted.
//
// Results go to -out as JSON, with the targets checked.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
)

// Targets from the issue.
const (
	targetPingSeconds      = 1
	targetReturnsPerSecond = 20_000
	targetKillLost         = 0
)

type options struct {
	masterproc.Options
	agents      int
	pings       int
	streamJobs  int
	publishers  int
	sleep       float64
	killAfter   time.Duration
	reauthDelay int
	perf        string
}

func main() {
	var o options
	o.Flags("jobs", masterproc.Usage{
		Brine:        "the brine binary: its master is measured and its exec is the CLI timed",
		Keep:         "keep the temporary directory (master logs, data, agents) for inspection",
		CPUProfile:   "write this process's (the agents') CPU profile here",
		Phase:        2 * time.Minute,
		PhaseTimeout: "give up on a phase that takes longer",
	})
	flag.IntVar(&o.agents, "agents", 1000, "agents simulated in this process")
	flag.IntVar(&o.pings, "pings", 5, "runs of `brine exec '*' test.ping` (the target is checked on their median)")
	flag.IntVar(&o.streamJobs, "stream-jobs", 20, "jobs (test.ping to every agent) published back to back in the stream")
	flag.IntVar(&o.publishers, "publishers", 4, "concurrent exec.publish callers in the stream")
	flag.Float64Var(&o.sleep, "sleep", 3, "seconds of the test.sleep job the master is killed under")
	flag.DurationVar(&o.killAfter, "kill-after", time.Second, "SIGKILL the master this long after publishing the test.sleep job")
	flag.IntVar(&o.reauthDelay, "reauth-delay", 2, "agents' random_reauth_delay in seconds (the default 10 spreads their return after the kill over 10 s)")
	flag.StringVar(&o.perf, "perf", "", "record the master's stacks with perf during the streams into PREFIX-stream-{agents,wire}.data")
	flag.Parse()
	report.Main("bench/jobs", o.CPUProfile, func(ctx context.Context) error { return run(ctx, o) })
}

// Results are the three measurements, after the agents' onboarding.
type Results struct {
	Onboarding Onboarding `json:"onboarding"`
	Ping       Ping       `json:"ping"`
	Stream     Stream     `json:"stream"`
	StreamWire Stream     `json:"stream_wire_agents"`
	Kill       Kill       `json:"master_kill"`
}

// Onboarding is how the fleet was brought up before anything was timed;
// not a target here (bench/agents measures it).
type Onboarding struct {
	Agents int `json:"agents"`
	// Seconds runs from starting every agent until each was accepted,
	// its outbox (start events) delivered and the master listed it as
	// connected.
	Seconds float64 `json:"seconds"`
}

// running counts the agents running job jid now (saltutil.find_job
// answers {} for a job that does not run).
func running(ctx context.Context, f *fleet.Fleet, jid string) int {
	n := 0
	for _, a := range f.Agents {
		v, err := a.Functions().Call(ctx, "saltutil.find_job", []any{jid}, nil, nil)
		if m, ok := v.(map[string]any); err == nil && ok && len(m) > 0 {
			n++
		}
	}
	return n
}

// bench is one run's shared state.
type bench struct {
	o        options
	m        *fleet.Master
	fl       *fleet.Fleet
	live     *jobTally
	rep      *report.Report
	failures []string
}

// masterLog is the log file of the master's run-th run.
func masterLog(run int) string { return fmt.Sprintf("master-%d.log", run) }

func run(ctx context.Context, o options) error {
	if o.agents < 1 || o.pings < 1 || o.streamJobs < 1 || o.publishers < 1 || o.sleep <= 0 {
		return errors.New("-agents, -pings, -stream-jobs and -publishers must be at least 1, -sleep positive")
	}
	if o.killAfter.Seconds() >= o.sleep {
		return fmt.Errorf("-kill-after %s must be shorter than -sleep %gs: the master is to die while the job runs", o.killAfter, o.sleep)
	}
	if o.perf != "" {
		if err := havePerf(); err != nil {
			return err
		}
	}
	// Per agent: its connection here and its end on the master, a file
	// or two of its outbox and job directories; per wire agent its two
	// ends; plus the master's store, the CLI's connections and the
	// runtime.
	setup, cleanup, err := masterproc.Prepare("jobs", o.Bin, uint64(5*o.agents+1024), o.Keep)
	if err != nil {
		return err
	}
	defer cleanup()
	b := &bench{o: o, live: newJobTally()}

	rep := report.New("jobs")
	b.rep = rep
	rep.Setup["command"] = fmt.Sprintf("go run ./bench/jobs -brine %s -agents %d -pings %d -stream-jobs %d -publishers %d -sleep %g -kill-after %s -reauth-delay %d -out %s",
		o.Bin, o.agents, o.pings, o.streamJobs, o.publishers, o.sleep, o.killAfter, o.reauthDelay, o.Out)
	rep.Setup["master"] = "`brine master` as its own process (" + o.Bin + "), embedded fsync'ed JetStream store, auto_accept: true, log_level info (default), on 127.0.0.1"
	rep.Setup["agents"] = fmt.Sprintf("%d real agent.Agent in this process, each with its own config dir, CURVE key pair, on-disk outbox (each return fsync'ed before the job is done), TCP connection and CURVE session", o.agents)
	rep.Setup["wire_agents"] = fmt.Sprintf("%d protocol-only agents in this process for stream_wire_agents (wire.go): key pair, CURVE connection and session, a return of True per pushed job, no files", o.agents)
	rep.Setup["agent_config"] = fmt.Sprintf("random_reauth_delay: %d (other keys at their defaults)", o.reauthDelay)
	rep.Setup["agents_n"] = strconv.Itoa(o.agents)
	setup.Describe(rep)

	b.fl, err = fleet.New(setup, o.agents, agentID, fmt.Sprintf("random_reauth_delay: %d\n", o.reauthDelay))
	if err != nil {
		return err
	}
	if b.m, err = fleet.StartMaster(ctx, setup, masterLog(1)); err != nil {
		return err
	}
	defer b.m.Close()

	// The watch of every job's events: started before any job, from the
	// beginning of the log, reconnecting (and catching up) across the
	// master's restart.
	stopWatch := b.m.Watch(ctx, "salt/job/*", b.live.add)
	defer stopWatch()

	var res Results
	defer b.fl.Stop()
	res.Onboarding, err = b.onboard(ctx)
	if err != nil {
		return b.m.Fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/jobs: %d agents connected in %.1f s\n", o.agents, res.Onboarding.Seconds)

	// (1) test.ping through the CLI.
	res.Ping, err = b.ping(ctx)
	if err != nil {
		return b.m.Fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/jobs: ping: median %.3f s\n", res.Ping.Seconds)
	// (2) The stream.
	res.Stream, err = b.stream(ctx, fleetUnderTest{name: "agents", tgt: agentGlob, ids: b.fl.IDs, quiet: b.quiet})
	if err != nil {
		return b.m.Fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/jobs: stream: %.0f returns/s\n", res.Stream.ReturnsPerSecond)
	// (2') The same stream against wire agents: the master's own pace.
	wf, err := startWire(ctx, setup.ReqAddr(), o.agents)
	if err != nil {
		return b.m.Fail(err)
	}
	res.StreamWire, err = b.stream(ctx, fleetUnderTest{name: "wire", tgt: "bench-wire-*", ids: wf.ids,
		quiet: func(ctx context.Context) error { return wf.quiet(ctx, o.PhaseTimeout) }})
	res.StreamWire.WireDropped, res.StreamWire.WireFailed = wf.dropped.Load(), wf.failed.Load()
	wf.close()
	if err != nil {
		return b.m.Fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/jobs: stream (wire agents): %.0f returns/s\n", res.StreamWire.ReturnsPerSecond)
	// (3) The master killed under a running job.
	res.Kill, err = b.kill(ctx)
	if err != nil {
		return b.m.Fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/jobs: kill: %d of %d returns stored\n", res.Kill.Stored.Stored, res.Kill.Stored.Expected)

	// Stop the agents, then the master.
	if !b.fl.Stop() {
		rep.Fail(fmt.Sprintf("the agents did not stop within %s of their context ending", fleet.StopTimeout))
	}
	if i, e := b.fl.Err(); e != nil {
		rep.Fail(fmt.Sprintf("agent %d: Run returned %v", i, e))
	}
	stopWatch()
	b.m.End(rep)

	rep.Results = res
	rep.Setup["load_avg_after"] = report.LoadAvg()
	n := float64(o.agents)
	p, s, k, sw := res.Ping, res.Stream, res.Kill, res.StreamWire
	rep.Check("ping", "seconds", "<=", targetPingSeconds, report.Round(p.Seconds, 3))
	rep.Check("ping", "returned_min", ">=", n, float64(p.ReturnedMin))
	rep.Check("stream", "returns_per_second", ">=", targetReturnsPerSecond, report.Round(s.ReturnsPerSecond, 0))
	rep.Check("stream", "stored.lost", "<=", 0, float64(s.Stored.Lost))
	rep.Check("stream_wire_agents", "returns_per_second", ">=", targetReturnsPerSecond, report.Round(sw.ReturnsPerSecond, 0))
	rep.Check("stream_wire_agents", "stored.lost", "<=", 0, float64(sw.Stored.Lost))
	rep.Check("master_kill", "stored.lost", "<=", targetKillLost, float64(k.Stored.Lost))
	for name, c := range map[string]check{"stream": s.Stored, "stream_wire_agents": sw.Stored, "master_kill": k.Stored} {
		if c.DuplicatedByAgent+c.DuplicatedByEventID > 0 {
			rep.Fail(fmt.Sprintf("%s: returns stored twice: %d for one agent, %d under one event id", name, c.DuplicatedByAgent, c.DuplicatedByEventID))
		}
		if c.NotTrue+c.Strangers > 0 {
			rep.Fail(fmt.Sprintf("%s: %d returns other than success True, %d from agents not targeted", name, c.NotTrue, c.Strangers))
		}
	}
	if sw.WireDropped+sw.WireFailed > 0 {
		rep.Fail(fmt.Sprintf("stream_wire_agents: %d jobs dropped by a full wire agent queue, %d returns not acknowledged", sw.WireDropped, sw.WireFailed))
	}
	for _, f := range b.failures {
		rep.Fail(f)
	}
	rep.Notes = append(rep.Notes,
		"ping.seconds is the median of the runs' wall times, each from exec of `brine exec -c <master dir> '*' test.ping --static --out json --show-jid` until it exited, having printed every agent's return (the CLI prints a return once the master stored it and published it to its watch); the CLI starts, loads the configuration, dials the master over CURVE, watches salt/job/<jid>/ret/*, publishes and collects. to_new_ms is exec until the job's new event (the master's clock), new_to_last_return_ms the fan-out, last_return_to_exit_ms the CLI's end",
		"latency_ms of a return is the time the master stamped on its salt/job/<jid>/ret/<id> event (when it took the return, before storing it) minus the time on the job's salt/job/<jid>/new event (before the job was pushed to any agent): push over CURVE, the agent's proc file and function, its outbox (write + fsync + rename + directory fsync), delivery and decoding",
		"stream: "+strconv.Itoa(o.streamJobs)+" test.ping jobs to every agent published back to back by "+strconv.Itoa(o.publishers)+" concurrent exec.publish callers over one operator connection; seconds runs from the first publish until the watch (started before, on salt/job/*) saw the last return: returns_per_second = expected returns / seconds. sustained_returns_per_second is the rate between the 10th and 90th percentile of the returns' stored times (the master's clock), without the ramp up and the tail. Each return is acknowledged to the agent only after the master's group-commit fsync, so every one counted was durable",
		"stream_wire_agents is the same stream against "+strconv.Itoa(o.agents)+" wire agents (bench-wire-*, started after the stream, closed before the kill): each a key pair, a CURVE connection and a session accepted by auto_accept, answering every pushed job with a return of True delivered one at a time as an agent's outbox does, but with no function, no files and no fsync. The agents' side of a job costs this process more than the master's side costs the master; against wire agents the master alone sets the pace: the master's ceiling on this machine, and the figure that tells whether a missed stream target is the master's",
		"job records: the master keeps each job's record (jobs.show, `brine jobs`) in a key-value bucket, written by a consumer of the stored job events, behind them; record_complete_ms (ping) and job_records_complete_seconds (streams) run until every job's record held every return, and master_cpu_us_per_return_with_records and master_disk_write_kib_per_return_with_records count the master's CPU and writes to then: a return's whole cost to the master",
		"stream CPU: master_cpu_us_per_return is the master's utime+stime (from /proc, 10 ms ticks) over the phase per return stored; bench_cpu_us_per_return is this process's: the agents' side (decoding the push, the job's files, the outbox's fsyncs, CURVE) and the watch. Both share the machine's 2 cores",
		"master_kill: a job test.sleep "+strconv.FormatFloat(o.sleep, 'g', -1, 64)+" is published to every agent, the master gets SIGKILL "+o.killAfter.String()+" later (running_at_kill: the agents then running it, asked with saltutil.find_job), and once every agent saw its connection drop it is started again on the same data directory and ports; the agents finish the job meanwhile, queue their returns in their outboxes and deliver them after reconnecting (random_reauth_delay). stored is a replay of salt/job/<jid>/* from the log after all returns were seen and a 3 s grace for late copies: lost = agents with no return, duplicated_by_agent = returns beyond the first for one agent, duplicated_by_event_id = returns stored twice under the id the agent queued them with",
		"the agents run in this process, sharing the machine's 2 cores with the master and the CLI: a real deployment's agents are on machines of their own, so the figures are for a master that competes for CPU with 1,000 agents' work",
	)
	if s.Perf != "" {
		rep.Notes = append(rep.Notes, "the master's stacks during the streams were recorded with perf in "+s.Perf+" and "+sw.Perf+": perf report -i <file> --children --sort symbol")
	}
	return rep.Finish(o.Out, os.Stdout)
}

// onboard starts every agent and waits until all are connected, their
// start events delivered and the master lists them.
func (b *bench) onboard(ctx context.Context) (Onboarding, error) {
	ob := Onboarding{Agents: b.o.agents}
	t0 := time.Now()
	b.fl.Start(ctx)
	if err := masterproc.Poll(ctx, b.o.PhaseTimeout, 50*time.Millisecond, func() bool { return b.fl.Ready() == b.o.agents }); err != nil {
		return ob, fmt.Errorf("onboarding: %d of %d agents ready: %w", b.fl.Ready(), b.o.agents, err)
	}
	if err := b.quiet(ctx); err != nil {
		return ob, fmt.Errorf("onboarding: %w", err)
	}
	if err := b.m.Listed(ctx, "*", b.o.agents, b.o.PhaseTimeout, 100*time.Millisecond, nil); err != nil {
		return ob, fmt.Errorf("onboarding: %w", err)
	}
	ob.Seconds = report.Round(time.Since(t0).Seconds(), 3)
	return ob, nil
}

// quiet waits until every agent's outbox is empty: what a phase left
// (start events, returns) is stored, and the next starts from rest.
func (b *bench) quiet(ctx context.Context) error {
	if err := masterproc.Poll(ctx, b.o.PhaseTimeout, 200*time.Millisecond, func() bool { return b.fl.Queued() == 0 }); err != nil {
		return fmt.Errorf("outboxes not delivered: %d items left: %w", b.fl.Queued(), err)
	}
	return nil
}

func agentID(i int) string { return fmt.Sprintf("bench-agent-%04d", i) }

// agentGlob selects the agents (agent.Agent), not the wire agents.
const agentGlob = "bench-agent-*"
