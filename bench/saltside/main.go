// Command saltside measures one real salt-minion 3006.6 side by side: under
// a real salt-master 3006.6 and under brine's master (`brine master`,
// which serves Salt minions on its own two ports), on this machine, with
// each side's own CLI as an operator would use it.
//
// Both masters run throughout, serving the same file_roots tree, each on
// its own loopback ports. The one minion (one key pair; a configuration
// and a cache per side) is pointed at one master at a time, in blocks that
// alternate salt, brine, brine, salt, …, so that a machine whose load
// changes during the run (it is shared) weighs on both sides alike. In
// each block the minion is started against that side's master (its cached
// master key, minion_master.pub, removed first, as the masters' keys
// differ), answers test.ping, and is timed with `salt <id> test.ping` and
// `salt <id> state.apply saltside` (Salt's scripts/salt) or `brine exec
// <id> …`; then it is stopped.
//
// The state is 100 real states (file.directory, file.managed from
// contents and from a salt:// Jinja template, cmd.run with creates:)
// writing under a temporary directory, applied first on an empty
// directory (everything changes) and then again (nothing changes); both
// are checked, and the files too.
//
// What is compared is what an operator waits for: the CLI's wall time,
// from its exec to its exit, which includes the CLI's own start (Python's
// imports for Salt's, measured apart as cli_start). The result is each
// side's p50 and p99 and the ratio salt/brine; brine slower than Salt on
// an operation's median is marked as a failed target.
//
// Salt's daemons run in process groups of their own, ended with SIGTERM
// and then SIGKILL for whatever is left, on every way out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
)

// minionID is the one minion's id.
const minionID = "saltside-minion"

type options struct {
	masterproc.Options
	saltSrc                        string
	blocks, pings, applies, warmup int
	masterLogLevel, minionLogLevel string
	cliTimeoutSeconds              int
	stopTimeout                    time.Duration
	settle                         time.Duration
}

func main() {
	var o options
	o.Flags("saltside", masterproc.Usage{
		Brine:        "the brine binary: its master is brine's side and its exec the CLI timed",
		Keep:         "keep the temporary directory (configurations, logs, tree) for inspection",
		Phase:        3 * time.Minute,
		PhaseTimeout: "give up on a step (a master starting, the minion answering) that takes longer",
	})
	flag.StringVar(&o.saltSrc, "salt-src", os.Getenv("SALT_SRC"), "an unpacked Salt 3006.6 tree with scripts/ (default $SALT_SRC, else /tmp/salt/salt-3006.6, else ../shared/peers/"+saltArchive+" unpacked)")
	flag.IntVar(&o.blocks, "blocks", 2, "blocks per side, alternating salt, brine, brine, salt, …")
	flag.IntVar(&o.pings, "pings", 10, "test.ping rounds in each block")
	flag.IntVar(&o.applies, "applies", 3, "state.apply rounds (a first run and a repeat) in each block")
	flag.IntVar(&o.warmup, "warmup", 3, "test.ping rounds before a block's measured ones, not counted")
	flag.StringVar(&o.masterLogLevel, "master-log-level", "info", "brine master's log_level (debug to see what it does with the minion)")
	flag.StringVar(&o.minionLogLevel, "minion-log-level", "info", "the salt-minion's log_level_logfile on both sides: info or below (debug, trace), for the bench reads from it when the minion is ready")
	flag.IntVar(&o.cliTimeoutSeconds, "cli-timeout", 120, "the CLIs' -t: seconds they wait for the minion's return")
	flag.DurationVar(&o.stopTimeout, "stop-timeout", 20*time.Second, "how long a daemon has to stop after SIGTERM before SIGKILL")
	flag.DurationVar(&o.settle, "settle", 300*time.Millisecond, "pause between measured commands")
	flag.Parse()
	report.Main("bench/saltside", "", func(ctx context.Context) error { return run(ctx, o) })
}

// Results are both sides, their ratios and the blocks they were
// measured in.
type Results struct {
	Minion string `json:"minion"`
	Tree   Tree   `json:"tree"`
	Salt   *Side  `json:"salt"`
	Brine  *Side  `json:"brine"`
	// Ratio is salt's figure over brine's for each operation (above 1:
	// brine is faster); absent when brine's side failed.
	Ratio *Ratios `json:"ratio_salt_over_brine,omitempty"`
	// Blocks are the measurements in the order they were taken, with the
	// machine's load at each block's start.
	Blocks []Block `json:"blocks"`
	// BrineFailure is why brine's side did not complete, with the ends
	// of its master's and the minion's logs.
	BrineFailure *Failure `json:"brine_failure,omitempty"`
}

// Side is one master's figures, over all its blocks.
type Side struct {
	Master      string `json:"master"`
	CLI         string `json:"cli"`
	Version     string `json:"version,omitempty"`
	TestPing    *Op    `json:"test_ping"`
	ApplyFirst  *Op    `json:"state_apply_first"`
	ApplyRepeat *Op    `json:"state_apply_repeat"`
	// CLIStart is the CLI doing nothing (salt --version, brine version):
	// the part of every figure that is the CLI's start.
	CLIStart *Op `json:"cli_start"`
}

func newSide(master, cli string) *Side {
	return &Side{Master: master, CLI: cli, TestPing: &Op{}, ApplyFirst: &Op{}, ApplyRepeat: &Op{}, CLIStart: &Op{}}
}

// Block is one stretch of a side's measurements.
type Block struct {
	Side    string `json:"side"`
	LoadAvg string `json:"load_avg"`
	// MinionReadyS is from the minion's start until it logs that it is
	// ready (it authenticated with the master, got the session key and
	// set up its publish connection); FirstPingS from then until a
	// test.ping (-t 5, again every 0.5 s) is answered. A publish before
	// the minion's subscription reached the master is lost (ZeroMQ's
	// PUB/SUB), and the CLI then waits out its -t (Salt's also a
	// find_job, gather_job_timeout 10 s).
	MinionReadyS     float64 `json:"minion_ready_s"`
	FirstPingS       float64 `json:"first_ping_s"`
	TestPingP50Ms    float64 `json:"test_ping_p50_ms"`
	ApplyFirstP50Ms  float64 `json:"state_apply_first_p50_ms"`
	ApplyRepeatP50Ms float64 `json:"state_apply_repeat_p50_ms"`
	Error            string  `json:"error,omitempty"`
}

// Op is one operation's measured runs.
type Op struct {
	WallMs report.Dist `json:"wall_ms"`
	// MasterCPUMs is the master's CPU time over each run (all the
	// salt-master's processes; brine's one process), CLICPUMs the CLI's.
	MasterCPUMs report.Summary `json:"master_cpu_ms"`
	CLICPUMs    report.Summary `json:"cli_cpu_ms"`
	// StatesSumMs is the sum of the states' own durations in the return
	// (state.apply): the minion's work, the master's file server included;
	// StatesByKindMs the same by kind of state, of which saltside-conf
	// (the salt:// template's) alone asks the master.
	StatesSumMs    *report.Summary           `json:"states_duration_sum_ms,omitempty"`
	StatesByKindMs map[string]report.Summary `json:"states_duration_by_kind_ms,omitempty"`
	RunsMs         []float64                 `json:"runs_ms"`

	walls, masterCPU, cliCPU, states []float64
	byKind                           map[string][]float64
}

func (op *Op) add(r *cliRun) {
	op.walls = append(op.walls, ms(r.wall))
	op.masterCPU = append(op.masterCPU, ms(r.masterCPU))
	op.cliCPU = append(op.cliCPU, ms(r.cliCPU))
}

func (op *Op) addStates(sum float64, byKind map[string]float64) {
	op.states = append(op.states, sum)
	if op.byKind == nil {
		op.byKind = map[string][]float64{}
	}
	for k, v := range byKind {
		op.byKind[k] = append(op.byKind[k], v)
	}
}

// p50Since is the median of the walls from the from'th on: a block's.
func (op *Op) p50Since(from int) float64 {
	return report.Round(report.Median(op.walls[from:]), 1)
}

func (op *Op) summarize() {
	ds := make([]time.Duration, len(op.walls))
	for i, w := range op.walls {
		ds[i] = time.Duration(w * float64(time.Millisecond))
		op.RunsMs = append(op.RunsMs, report.Round(w, 1))
	}
	op.WallMs = report.DistOf(ds)
	op.MasterCPUMs, op.CLICPUMs = report.Summarize(op.masterCPU, 1), report.Summarize(op.cliCPU, 1)
	if len(op.states) > 0 {
		s := report.Summarize(op.states, 1)
		op.StatesSumMs = &s
		op.StatesByKindMs = map[string]report.Summary{}
		for k, v := range op.byKind {
			op.StatesByKindMs[k] = report.Summarize(v, 1)
		}
	}
}

// Ratios are salt/brine per operation.
type Ratios struct {
	TestPing    Ratio `json:"test_ping"`
	ApplyFirst  Ratio `json:"state_apply_first"`
	ApplyRepeat Ratio `json:"state_apply_repeat"`
}

// Ratio is salt's p50 and p99 over brine's.
type Ratio struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	// BrineSlower marks brine's median above Salt's.
	BrineSlower bool `json:"brine_slower,omitempty"`
}

func ratio(salt, brine *Op) Ratio {
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return report.Round(a/b, 2)
	}
	r := Ratio{P50: div(salt.WallMs.P50, brine.WallMs.P50), P99: div(salt.WallMs.P99, brine.WallMs.P99)}
	r.BrineSlower = r.P50 < 1
	return r
}

// Failure is a side that did not complete.
type Failure struct {
	Error         string   `json:"error"`
	MasterLogTail []string `json:"master_log_tail,omitempty"`
	MinionLogTail []string `json:"minion_log_tail,omitempty"`
}

// bench is one run's shared state.
type bench struct {
	o      options
	setup  *masterproc.Setup
	src    string
	tree   Tree
	minion string // the minion's root_dir
	groups []*group
	brine  *fleet.Master
	// failures are problems that do not stop the run (a daemon that had
	// to be killed).
	failures []string
}

func run(ctx context.Context, o options) error {
	if o.blocks < 1 || o.pings < 1 || o.applies < 1 {
		return errors.New("-blocks, -pings and -applies must be at least 1")
	}
	if !slices.Contains([]string{"info", "profile", "debug", "trace", "garbage", "all"}, o.minionLogLevel) {
		return fmt.Errorf("-minion-log-level %s: info or below, for the bench reads from the minion's log when it is ready", o.minionLogLevel)
	}
	setup, cleanup, err := masterproc.Prepare("saltside", o.Bin, 1024, o.Keep)
	if err != nil {
		return err
	}
	defer cleanup()
	src, cleanSrc, err := saltTree(o.saltSrc)
	if err != nil {
		return err
	}
	defer cleanSrc()
	b := &bench{o: o, setup: setup, src: src, minion: filepath.Join(setup.Dir, "minion")}
	defer b.stopAll()
	if b.tree, err = writeTree(setup.Dir); err != nil {
		return err
	}

	rep := report.New("saltside")
	rep.Setup["command"] = fmt.Sprintf("go run ./bench/saltside -brine %s -blocks %d -pings %d -applies %d -out %s", o.Bin, o.blocks, o.pings, o.applies, o.Out)
	rep.Setup["salt"] = src + " run with " + python + " (PYTHONPATH=<tree>:<tree>/shim)"
	rep.Setup["minion"] = fmt.Sprintf("one salt-minion 3006.6 (id %s, user %s, multiprocessing on, log_level_logfile %s), its own root_dir/pki_dir/cachedir/sock_dir under the temporary directory; master 127.0.0.1 on the side's ports; its key pair kept throughout, minion_master.pub removed before each block, a cachedir per side kept across that side's blocks", minionID, runUser(), o.minionLogLevel)
	rep.Setup["tree"] = fmt.Sprintf("file_roots %s (both masters): top.sls and %s.sls, %d states in %d groups of file.directory, file.managed (contents:), file.managed (salt://saltside/app.conf.j2, template: jinja, mode 0640) and cmd.run (creates:), each requiring the one before, writing under %s", b.tree.FileRoot, slsName, b.tree.States, groups, b.tree.Target)
	setup.Describe(rep)

	salt, err := b.startSalt(ctx)
	if err != nil {
		return fmt.Errorf("the salt-master: %w", err)
	}
	brine := b.startBrine(ctx)
	var res Results
	res.Minion, res.Tree, res.Salt, res.Brine = minionID, b.tree, salt.res, brine.res
	for n := range o.blocks {
		order := []*side{salt, brine}
		if n%2 == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			if s.failed != nil {
				continue
			}
			blk, err := b.block(ctx, s)
			if err != nil {
				blk.Error = err.Error()
			}
			res.Blocks = append(res.Blocks, blk)
			fmt.Fprintf(os.Stderr, "bench/saltside: block %d %s: test.ping p50 %.1f ms, state.apply first p50 %.1f ms, repeat p50 %.1f ms (load %s)\n",
				len(res.Blocks), s.name, blk.TestPingP50Ms, blk.ApplyFirstP50Ms, blk.ApplyRepeatP50Ms, blk.LoadAvg)
			if err == nil {
				continue
			}
			if s == salt {
				return fmt.Errorf("the Salt side: %w\nsalt-master log:\n%s\nminion log:\n%s", err,
					masterproc.Tail(s.masterLog, 20), masterproc.Tail(b.minionLog(s), 20))
			}
			s.fail(err)
			fmt.Fprintln(os.Stderr, "bench/saltside: brine's side failed:", err)
		}
	}
	if err := salt.stop(); err != nil {
		b.failures = append(b.failures, err.Error())
	}
	brine.end(rep)

	for _, s := range []*side{salt, brine} {
		if s.res != nil {
			for _, op := range []*Op{s.res.TestPing, s.res.ApplyFirst, s.res.ApplyRepeat, s.res.CLIStart} {
				op.summarize()
			}
		}
	}
	if brine.failed != nil {
		res.BrineFailure = brine.failed
		rep.Fail("brine's side did not complete: " + brine.failed.Error)
	} else {
		res.Ratio = &Ratios{
			TestPing:    ratio(salt.res.TestPing, brine.res.TestPing),
			ApplyFirst:  ratio(salt.res.ApplyFirst, brine.res.ApplyFirst),
			ApplyRepeat: ratio(salt.res.ApplyRepeat, brine.res.ApplyRepeat),
		}
		// No target on the size of the ratios: only brine slower than
		// Salt on a median fails.
		rep.Check("ratio_salt_over_brine", "test_ping.p50", ">=", 1, res.Ratio.TestPing.P50)
		rep.Check("ratio_salt_over_brine", "state_apply_first.p50", ">=", 1, res.Ratio.ApplyFirst.P50)
		rep.Check("ratio_salt_over_brine", "state_apply_repeat.p50", ">=", 1, res.Ratio.ApplyRepeat.P50)
		fmt.Fprintf(os.Stderr, "bench/saltside: salt/brine p50: test.ping %.2f, state.apply first %.2f, repeat %.2f\n",
			res.Ratio.TestPing.P50, res.Ratio.ApplyFirst.P50, res.Ratio.ApplyRepeat.P50)
	}
	for _, f := range b.failures {
		rep.Fail(f)
	}
	rep.Results = res
	rep.Setup["load_avg_after"] = report.LoadAvg()
	rep.Notes = append(rep.Notes,
		"wall_ms is the CLI's wall time from its exec to its exit, with the return printed as JSON (salt --out=json -t N, which prints the one minion's return as it arrives; brine exec --json -t N) and checked: test.ping True; state.apply all 100 states True, all changed on the first run (the target directory removed before it) and none on the repeat run that follows it, and the files' contents checked after each first run",
		"cli_start is the CLI doing no job (salt --version: Python importing Salt's CLI; brine version): a floor under each side's figures that is not the master's. master_cpu_ms is the master's CPU over a run (the salt-master's every process in its group; brine master's one), cli_cpu_ms the CLI's",
		"states_duration_sum_ms sums the states' durations from the minion's return: the minion's own work. By kind: saltside-conf (file.managed from salt://saltside/app.conf.j2) asks the master for the file's hash on every run and fetches it on a cold cache; saltside-dir, saltside-notes and saltside-stamp never ask the master, so they show the machine's load on the minion, the same minion on both sides. Most of saltside-stamp's sum is the run's first cmd.run: Salt's loader, in the job's fresh process, loading the cmd state and the modules it needs (running `git --version` on the way), some 2.5 to 3.5 s on this machine whichever the master",
		"both masters run throughout (the idle one costs little CPU); the blocks alternate salt, brine, brine, salt, … with the minion restarted on the other side's ports between them; the first state.apply round of a side's first block runs with that side's file cache cold",
		"the machine has 2 CPUs shared with other work (load_avg at the start, load_avg_after at the end, each block's at its start); the salt CLI spends some 0.4 s of CPU importing Salt and 0.7 s on a test.ping, so Salt's figures suffer most from a busy machine, while a state.apply is mostly the minion's own work on either side",
		"salt's --static is not used: in Salt 3006 it runs the job through the CLI's batch mode (salt/cli/salt.py: `if self.options.batch or self.options.static: self._run_batch()`), which first publishes a test.ping to the targets and then the job, and on this machine once printed an empty return for a state.apply still running; without it the CLI prints each return as it arrives, as an operator's `salt <id> FUN` does",
		"p99 of few runs is their maximum; the ratio's p50 below 1 (brine slower) is a failed target, otherwise there is no target on the ratios",
	)
	return rep.Finish(o.Out, os.Stdout)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
