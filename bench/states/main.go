// Command states measures Salt's state system on one agent: an SLS tree of
// 1,000 file.managed states (10 SLS files of 100, each a Jinja loop;
// half rendered from a salt:// template fetched through the master's file
// server, half with contents written from the pillar and the grains and
// rendered again on the agent; each state requiring the one before it and
// each SLS the previous one) applied as the highstate by a real agent
// (agent.Agent in this process, connected to a real `brine master`
// process whose file_roots and pillar_roots hold the tree). The issue's
// targets are for a highstate's own cost on the agent, so each figure is
// taken from where it is spent:
//
//  1. the first run, every file new (the target directory is removed
//     before each), and 2. the second run, nothing to change (every state
//     True with no changes, verified): `brine exec <agent>
//     state.highstate --json` through the CLI, measured as the states'
//     span in the return (the first state's start_time to the last
//     state's start_time + duration: what the agent spent running the
//     states) and as the CLI's wall time; and the agent's state.highstate
//     function called in this process (pillar refresh, top file and SLS
//     files through the file server, compile, run; no publish, no return);
//  3. the compile: the state engine alone in this process (top file,
//     CompileEnvs, High.Chunks over the tree's own directory with the
//     agent's grains, pillar, opts and salt functions: no network), and
//     state.show_lowstate through the CLI and as the agent's function.
//
// The runs are repeated with the target directory on tmpfs, which
// separates the agent's own cost from the disk's (file creation on this
// machine's disk is slow and erratic; a probe of it is recorded beside
// each first run). Each is run several times and reported as median and
// maximum; the targets are checked on the medians (on the disk) in the
// JSON written to -out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/brinehq/brine/agent"
	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
)

// Targets from the issue (milliseconds).
const (
	targetSecondRunMs = 300
	targetFirstRunMs  = 1500
	targetCompileMs   = 100
)

const agentID = "bench-states"

type options struct {
	masterproc.Options
	files, per int
	reps       int
}

func main() {
	var o options
	o.Flags("states", masterproc.Usage{
		Brine:        "the brine binary: its master serves the tree and its exec is the CLI timed",
		Keep:         "keep the temporary directory (tree, master and agent data, logs) for inspection",
		CPUProfile:   "write this process's (the agent's and the engine's) CPU profile here",
		Phase:        2 * time.Minute,
		PhaseTimeout: "give up on a step that takes longer",
	})
	flag.IntVar(&o.files, "sls", 10, "SLS files in the tree")
	flag.IntVar(&o.per, "per-sls", 100, "file.managed states in each SLS file")
	flag.IntVar(&o.reps, "reps", 5, "repetitions of each measurement (medians are checked)")
	flag.Parse()
	report.Main("bench/states", o.CPUProfile, func(ctx context.Context) error { return run(ctx, o) })
}

// Results are the tree and the three measurements.
type Results struct {
	Tree      Tree    `json:"tree"`
	FirstRun  Phase   `json:"first_run"`
	SecondRun Phase   `json:"second_run"`
	Compile   Compile `json:"compile"`
	// FirstRunTmpfs and SecondRunTmpfs are the same runs with the target
	// directory on tmpfs (the pillar's bench_root overridden with
	// pillar=): the agent's own cost without the disk's.
	FirstRunTmpfs  *Phase `json:"first_run_tmpfs,omitempty"`
	SecondRunTmpfs *Phase `json:"second_run_tmpfs,omitempty"`
}

// Phase is the first or the second run, through the CLI and as the
// agent's function.
type Phase struct {
	// StatesSpanMs (the target) and StatesSumMs are the CLI runs'
	// states, CLIWallMs the CLI's wall times.
	StatesSpanMs report.Summary `json:"states_span_ms"`
	StatesSumMs  report.Summary `json:"states_duration_sum_ms"`
	CLIWallMs    report.Summary `json:"cli_wall_ms"`
	// FSCreateMs is the first runs' probes of the filesystem's creates.
	FSCreateMs *report.Summary `json:"fs_create_probe_ms,omitempty"`
	// FunctionMs is the agent's state.highstate called in this process,
	// FunctionSpanMs its states' span.
	FunctionMs     report.Summary `json:"agent_function_ms"`
	FunctionSpanMs report.Summary `json:"agent_function_states_span_ms"`
	Runs           []runFig       `json:"runs"`
}

// Compile is the compile of the highstate without running it.
type Compile struct {
	// EngineMs (the target) is the state engine alone; its steps are in
	// Engine. EngineFirstMs is the first compile of the process (not in
	// the median).
	EngineMs      report.Summary `json:"engine_ms"`
	EngineFirstMs float64        `json:"engine_first_ms"`
	Engine        []engineRun    `json:"engine_runs"`
	// ShowLowstate* are state.show_lowstate through the CLI (its wall
	// time) and as the agent's function.
	ShowLowstateCLIMs      report.Summary `json:"show_lowstate_cli_wall_ms"`
	ShowLowstateFunctionMs report.Summary `json:"show_lowstate_agent_function_ms"`
	ShowLowstate           []runFig       `json:"show_lowstate_runs"`
}

// bench is one run's shared state.
type bench struct {
	o        options
	m        *fleet.Master
	fl       *fleet.Fleet
	agent    *agent.Agent
	tree     Tree
	failures []string
}

func (b *bench) fail(format string, args ...any) {
	b.failures = append(b.failures, fmt.Sprintf(format, args...))
}

func run(ctx context.Context, o options) error {
	if o.files < 1 || o.per < 1 || o.reps < 1 {
		return errors.New("-sls, -per-sls and -reps must be at least 1")
	}
	setup, cleanup, err := masterproc.Prepare("states", o.Bin, 4096, o.Keep)
	if err != nil {
		return err
	}
	defer cleanup()
	b := &bench{o: o}
	fileRoot, pillarRoot, tree, err := writeTree(setup.Dir, o.files, o.per)
	if err != nil {
		return err
	}
	b.tree = tree
	if err := setup.AddConfig(fmt.Sprintf("file_roots:\n  base: [%s]\npillar_roots:\n  base: [%s]\n", fileRoot, pillarRoot)); err != nil {
		return err
	}

	rep := report.New("states")
	rep.Setup["command"] = fmt.Sprintf("go run ./bench/states -brine %s -sls %d -per-sls %d -reps %d -out %s", o.Bin, o.files, o.per, o.reps, o.Out)
	rep.Setup["master"] = "`brine master` as its own process (" + o.Bin + "), file_roots and pillar_roots on the tree's temporary directory, auto_accept: true, on 127.0.0.1"
	rep.Setup["agent"] = "one real agent.Agent (id " + agentID + ") in this process: its own config dir, CURVE key pair, outbox and file cache, connected to the master over TCP; state modules as `brine agent` registers them; running as uid " + fmt.Sprint(os.Getuid())
	rep.Setup["tree"] = fmt.Sprintf("%d SLS files (top.sls: all to '*') of %d file.managed each, every one template: jinja; the target directory, the application's settings and port come from the pillar (pillar_roots top.sls → app.sls)", o.files, o.per)
	setup.Describe(rep)

	if b.m, err = fleet.StartMaster(ctx, setup, "master.log"); err != nil {
		return err
	}
	defer b.m.Close()
	failMaster := b.m.Fail
	if b.fl, err = fleet.New(setup, 1, func(int) string { return agentID }, ""); err != nil {
		return err
	}
	b.agent = b.fl.Agents[0]
	b.fl.Start(ctx)
	defer b.fl.Stop()
	if err := b.connected(ctx); err != nil {
		return failMaster(err)
	}
	pillar, err := b.agent.Pillar(ctx, true)
	if err != nil {
		return failMaster(fmt.Errorf("the agent's pillar: %w", err))
	}
	fmt.Fprintln(os.Stderr, "bench/states: master and agent up")

	var res Results
	res.Tree = tree
	if res.Compile, err = b.compile(ctx, fileRoot, pillar); err != nil {
		return failMaster(err)
	}
	fmt.Fprintf(os.Stderr, "bench/states: compile: engine median %.1f ms, show_lowstate (CLI) median %.1f ms\n",
		res.Compile.EngineMs.Median, res.Compile.ShowLowstateCLIMs.Median)
	if res.FirstRun, res.SecondRun, err = b.runs(ctx, tree.TargetDir, nil); err != nil {
		return failMaster(err)
	}
	fmt.Fprintf(os.Stderr, "bench/states: first run: states span median %.1f ms; second run: %.1f ms\n",
		res.FirstRun.StatesSpanMs.Median, res.SecondRun.StatesSpanMs.Median)
	if shm, ok := tmpfs(); ok {
		dir, err := os.MkdirTemp(shm, "brine-bench-states-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		target := filepath.Join(dir, "target")
		first, second, err := b.runs(ctx, target, map[string]any{"pillar": map[string]any{"bench_root": target}})
		if err != nil {
			return failMaster(err)
		}
		res.FirstRunTmpfs, res.SecondRunTmpfs = &first, &second
		rep.Setup["tmpfs"] = shm
		fmt.Fprintf(os.Stderr, "bench/states: on tmpfs: first run: states span median %.1f ms; second run: %.1f ms\n",
			first.StatesSpanMs.Median, second.StatesSpanMs.Median)
	} else {
		rep.Notes = append(rep.Notes, "no tmpfs at /dev/shm: the runs on tmpfs were not measured")
	}

	if !b.fl.Stop() {
		rep.Fail(fmt.Sprintf("the agent did not stop within %s of its context ending", fleet.StopTimeout))
	} else if _, err := b.fl.Err(); err != nil {
		rep.Notes = append(rep.Notes, "the agent's Run returned "+err.Error())
	}
	b.m.End(rep)
	if t := b.fl.Logs.Snapshot(); len(t) > 0 {
		rep.Setup["agent_log"] = fmt.Sprint(map[string]int(t))
	}

	rep.Results = res
	rep.Setup["load_avg_after"] = report.LoadAvg()
	rep.Check("first_run", "states_span_ms.median", "<=", targetFirstRunMs, res.FirstRun.StatesSpanMs.Median)
	rep.Check("second_run", "states_span_ms.median", "<=", targetSecondRunMs, res.SecondRun.StatesSpanMs.Median)
	rep.Check("compile", "engine_ms.median", "<=", targetCompileMs, res.Compile.EngineMs.Median)
	for _, f := range b.failures {
		rep.Fail(f)
	}
	rep.Notes = append(rep.Notes,
		"states_span_ms (the run targets) is read from the return of `brine exec -c <master dir> "+agentID+" state.highstate --json`: the last state's start_time + duration minus the first state's start_time, i.e. the agent running the 1,000 states (requisite checks, each file.managed: its salt:// template's hash checked with the master (one round trip) and the file cached, the template or contents rendered with Jinja, the file compared, written (temporary file, fsync, rename, directory fsync) on the first run, its mode set). It excludes what precedes the first state: the pillar refresh, top file and SLS files from the file server, the compile (compile.engine_ms), and what follows the last: the return (~the size in return_kib) queued in the agent's outbox (fsync'ed), sent, stored and printed",
		"states_duration_sum_ms is the sum of the states' own durations (the span less the requisite checks and the gaps between states); cli_wall_ms runs from exec of the CLI until it exited having printed the return: the CLI's start, connection and publish, the agent's whole state.highstate, the return stored by the master and decoded by the CLI",
		"agent_function_ms is the agent's state.highstate function called in this process on the connected agent: its pillar refreshed from the master, top.sls and the SLS files checked against the agent's cache through the file server, the compile and the run; no publish, no return. agent_function_states_span_ms is its states' span, as for the CLI runs",
		"first_run: the target directory is removed (and sync(2) called) before each, so that all 1,000 files are new; every managed file's contents are then checked against the pillar and grains values the templates should have written. second_run follows each first run: every state must be True with empty changes (checked). The first CLI repetition is the first state run of the agent (its file cache cold)",
		"compile.engine_ms (the compile target) is the state engine alone in this process: Top (top.sls rendered and matched) + CompileEnvs (the 10 SLS files read from the file root, rendered with Jinja and parsed as YAML into high data) + High.Chunks (low chunks, order, requisites resolved), with the agent's grains, pillar, opts and salt functions as the Jinja context and a renderer shared across compiles as the agent's is; no network. engine_first_ms is the first compile of the process, not in the median",
		"show_lowstate_cli_wall_ms is `brine exec <agent> state.show_lowstate --json` (the CLI, pillar refresh, file server round trips, the compile, and 1,000 low chunks returned); show_lowstate_agent_function_ms the agent's function in this process (pillar refresh, file server round trips and the compile)",
		"first_run_tmpfs and second_run_tmpfs are the same runs with the pillar's bench_root overridden (state.highstate pillar='{bench_root: <dir on /dev/shm>}') so that the 1,000 files are on tmpfs: no disk, fsync a no-op. On this machine (a VM whose root is ext4 on a virtual disk, mounted with discard) creating a file costs the kernel from 0.01 to over 1 ms of CPU, varying from one minute to the next; fs_create_probe_ms is, just before each first run, the time to create as many small files (no fsync) in the target's filesystem: the part of the first run's figure that is the filesystem's, not brine's",
		"the agent runs in this process, so -cpuprofile profiles it; the runs made as the agent's function carry the pprof label run=first or run=second (go tool pprof -tagfocus=run=second)",
		"medians and maxima are over the repetitions (-reps); the master, the agent (this process) and the CLI share the machine's CPUs with whatever else runs there (load_avg at start, load_avg_after at the end)",
	)
	return rep.Finish(o.Out, os.Stdout)
}

// compile times the compile: the engine alone, then show_lowstate.
func (b *bench) compile(ctx context.Context, fileRoot string, pillar map[string]any) (Compile, error) {
	var c Compile
	e := newEngine(ctx, b.agent, fileRoot, pillar)
	var engineMs, cliMs, fnMs []float64
	for i := range b.o.reps + 1 {
		r, err := e.compile(ctx)
		if err != nil {
			return c, fmt.Errorf("the engine's compile: %w", err)
		}
		if r.Chunks != b.tree.States {
			b.fail("the engine compiled %d low chunks, %d expected", r.Chunks, b.tree.States)
		}
		if i == 0 {
			c.EngineFirstMs = r.TotalMs
			continue
		}
		c.Engine = append(c.Engine, r)
		engineMs = append(engineMs, r.TotalMs)
	}
	c.EngineMs = report.Summarize(engineMs, 3)
	for range b.o.reps {
		for _, via := range []func(context.Context, string, map[string]any) (runFig, any, error){b.cli, b.function} {
			if err := b.settle(ctx); err != nil {
				return c, err
			}
			f, ret, err := via(ctx, "state.show_lowstate", nil)
			if err != nil {
				return c, err
			}
			if p := lowstate(&f, ret, b.tree.States); p != "" {
				b.fail("%s: %s", f.Via, p)
			}
			c.ShowLowstate = append(c.ShowLowstate, f)
			if f.Via == "cli" {
				cliMs = append(cliMs, f.WallMs)
			} else {
				fnMs = append(fnMs, f.WallMs)
			}
		}
	}
	c.ShowLowstateCLIMs, c.ShowLowstateFunctionMs = report.Summarize(cliMs, 3), report.Summarize(fnMs, 3)
	return c, nil
}

// runs applies the highstate with the files managed under dir (the
// pillar's bench_root, or kwargs' pillar override): a first run and a
// second, through the CLI and as the agent's function, -reps times each.
func (b *bench) runs(ctx context.Context, dir string, kwargs map[string]any) (first, second Phase, err error) {
	type figs struct{ span, sum, wall, fn, fnSpan, create []float64 }
	var f1, f2 figs
	for _, via := range []func(context.Context, string, map[string]any) (runFig, any, error){b.cli, b.function} {
		for range b.o.reps {
			for _, want := range []string{"changed", "unchanged"} {
				var probe float64
				if want == "changed" {
					if probe, err = probeCreate(filepath.Dir(dir), b.tree.States); err != nil {
						return first, second, err
					}
					if err := clean(dir); err != nil {
						return first, second, err
					}
				}
				if err := b.settle(ctx); err != nil {
					return first, second, err
				}
				var f runFig
				var ret any
				// Labelled, so that -cpuprofile's samples of the runs as
				// the agent's function split by run: pprof -tagfocus=run=second.
				pprof.Do(ctx, pprof.Labels("run", map[string]string{"changed": "first", "unchanged": "second"}[want]), func(ctx context.Context) {
					f, ret, err = via(ctx, "state.highstate", kwargs)
				})
				if err != nil {
					return first, second, err
				}
				if probe > 0 {
					f.FSCreateMs = probe
					f1.create = append(f1.create, probe)
				}
				if p := highstate(&f, ret, want, b.tree.States); p != "" {
					b.fail("%s %s: %s", f.Via, want, p)
				}
				ph, fg := &second, &f2
				if want == "changed" {
					ph, fg = &first, &f1
					if err := checkFiles(b.tree, dir, b.agent.ID()); err != nil {
						b.fail("%s first run: %v", f.Via, err)
					}
				}
				ph.Runs = append(ph.Runs, f)
				if f.Via == "cli" {
					fg.span, fg.sum, fg.wall = append(fg.span, f.StatesSpanMs), append(fg.sum, f.StatesSumMs), append(fg.wall, f.WallMs)
				} else {
					fg.fn, fg.fnSpan = append(fg.fn, f.WallMs), append(fg.fnSpan, f.StatesSpanMs)
				}
			}
		}
	}
	for _, x := range []struct {
		ph *Phase
		fg figs
	}{{&first, f1}, {&second, f2}} {
		x.ph.StatesSpanMs, x.ph.StatesSumMs, x.ph.CLIWallMs = report.Summarize(x.fg.span, 3), report.Summarize(x.fg.sum, 3), report.Summarize(x.fg.wall, 3)
		x.ph.FunctionMs, x.ph.FunctionSpanMs = report.Summarize(x.fg.fn, 3), report.Summarize(x.fg.fnSpan, 3)
		if len(x.fg.create) > 0 {
			s := report.Summarize(x.fg.create, 3)
			x.ph.FSCreateMs = &s
		}
	}
	return first, second, nil
}

// tmpfs is /dev/shm when it is a tmpfs mount.
func tmpfs() (string, bool) {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Type != tmpfsMagic {
		return "", false
	}
	return "/dev/shm", true
}

// settle waits until the agent delivered what the previous step queued
// (a job's return) and pauses, so that each step starts from rest.
func (b *bench) settle(ctx context.Context) error {
	if err := masterproc.Poll(ctx, b.o.PhaseTimeout, 20*time.Millisecond, func() bool { return b.agent.Queued() == 0 }); err != nil {
		return fmt.Errorf("the agent's outbox: %d items not delivered: %w", b.agent.Queued(), err)
	}
	if !masterproc.Sleep(ctx, 300*time.Millisecond) {
		return ctx.Err()
	}
	return nil
}

// connected waits until the agent is accepted, its start events delivered
// and the master lists it as connected, so that a job reaches it.
func (b *bench) connected(ctx context.Context) error {
	if err := masterproc.Poll(ctx, b.o.PhaseTimeout, 20*time.Millisecond, b.agent.Ready); err != nil {
		return fmt.Errorf("the agent did not connect: %w", err)
	}
	return b.m.Listed(ctx, agentID, 1, b.o.PhaseTimeout, 50*time.Millisecond, func() bool { return b.agent.Queued() == 0 })
}
