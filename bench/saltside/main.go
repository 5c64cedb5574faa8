// Command saltside measures one real salt-minion 3006.6 side by side: under
// a real salt-master 3006.6 and under brine's master (`brine master`,
// which serves Salt minions on its own two ports), on this machine, with
// each side's own CLI as an operator would use it.
//
// The same minion (one key pair, one configuration but for its master's
// ports) runs first against the salt-master (`salt <id> test.ping`, `salt
// <id> state.apply saltside` with Salt's scripts/salt) and then against
// brine (`brine exec <id> …`). Its cached master key (minion_master.pub)
// is removed between the sides, as the masters' keys differ, and each side
// has a cache of its own, so that both start cold. The state is 100 real
// states (file.directory, file.managed from contents and from a salt://
// Jinja template, cmd.run with creates:) writing under a temporary
// directory, applied first on an empty directory (everything changes) and
// then again (nothing changes); both are checked.
//
// What is compared is what an operator waits for: the CLI's wall time,
// from its exec to its exit, which includes the CLI's own start (Python's
// imports for Salt's, measured apart as cli_start). The result is each
// side's p50 and p99 and the ratio salt/brine; brine slower than Salt on
// an operation's median is marked as a failure.
//
// Salt's daemons run in process groups of their own, ended with SIGTERM
// and then SIGKILL for whatever is left, on every way out.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/internal/loopback"
)

// minionID is the one minion's id.
const minionID = "saltside-minion"

type options struct {
	out, bin, saltSrc  string
	pings, applies     int
	warmup             int
	keep               bool
	masterLogLevel     string
	minionLogLevel     string
	phaseTimeout       time.Duration
	cliTimeoutSeconds  int
	stopTimeout        time.Duration
	settleBetweenSteps time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "bench/results/saltside.json", "where to write the JSON results")
	flag.StringVar(&o.bin, "brine", "bin/brine", "the brine binary: its master is brine's side and its exec the CLI timed")
	flag.StringVar(&o.saltSrc, "salt-src", os.Getenv("SALT_SRC"), "an unpacked Salt 3006.6 tree with scripts/ (default $SALT_SRC, else /tmp/salt/salt-3006.6, else ../shared/peers/"+saltArchive+" unpacked)")
	flag.IntVar(&o.pings, "pings", 20, "test.ping rounds on each side")
	flag.IntVar(&o.applies, "applies", 5, "state.apply rounds (a first run and a repeat) on each side")
	flag.IntVar(&o.warmup, "warmup", 3, "test.ping rounds before the measured ones, not counted")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (configurations, logs, tree) for inspection")
	flag.StringVar(&o.masterLogLevel, "master-log-level", "info", "brine master's log_level (debug to see what it does with the minion)")
	flag.StringVar(&o.minionLogLevel, "minion-log-level", "info", "the salt-minion's log_level_logfile on both sides")
	flag.DurationVar(&o.phaseTimeout, "phase-timeout", 3*time.Minute, "give up on a step (a master starting, the minion answering) that takes longer")
	flag.IntVar(&o.cliTimeoutSeconds, "cli-timeout", 120, "the CLIs' -t: seconds they wait for the minion's return")
	flag.DurationVar(&o.stopTimeout, "stop-timeout", 20*time.Second, "how long a daemon has to stop after SIGTERM before SIGKILL")
	flag.DurationVar(&o.settleBetweenSteps, "settle", 300*time.Millisecond, "pause between measured commands")
	flag.Parse()
	report.Main("bench/saltside", "", func(ctx context.Context) error { return run(ctx, o) })
}

// Results are both sides and their ratios.
type Results struct {
	Minion string `json:"minion"`
	Tree   Tree   `json:"tree"`
	Salt   *Side  `json:"salt"`
	Brine  *Side  `json:"brine"`
	// Ratio is salt's figure over brine's for each operation (above 1:
	// brine is faster); absent when brine's side failed.
	Ratio *Ratios `json:"ratio_salt_over_brine,omitempty"`
	// BrineFailure is why brine's side did not complete, with the ends
	// of its master's and the minion's logs.
	BrineFailure *Failure `json:"brine_failure,omitempty"`
}

// Side is one master's figures.
type Side struct {
	Master  string `json:"master"`
	CLI     string `json:"cli"`
	Version string `json:"version,omitempty"`
	// MinionReadyS is from the minion's start to its first test.ping
	// answered (key exchange, auth, the publish connection).
	MinionReadyS float64 `json:"minion_ready_s"`
	TestPing     *Op     `json:"test_ping"`
	ApplyFirst   *Op     `json:"state_apply_first"`
	ApplyRepeat  *Op     `json:"state_apply_repeat"`
	// CLIStart is the CLI doing nothing (salt --version, brine version):
	// the part of every figure that is the CLI's start.
	CLIStart *Op `json:"cli_start"`
}

// Op is one operation's measured runs.
type Op struct {
	WallMs report.Dist `json:"wall_ms"`
	// MasterCPUMs is the master's CPU time over each run (all the
	// salt-master's processes; brine's one process), CLICPUMs the CLI's.
	MasterCPUMs report.Summary `json:"master_cpu_ms"`
	CLICPUMs    report.Summary `json:"cli_cpu_ms"`
	// StatesSumMs is the sum of the states' own durations in the return
	// (state.apply): the minion's work, the master's file server included.
	StatesSumMs *report.Summary `json:"states_duration_sum_ms,omitempty"`
	RunsMs      []float64       `json:"runs_ms"`

	walls, masterCPU, cliCPU, states []float64
}

func (op *Op) add(r *cliRun, statesMs float64, withStates bool) {
	op.walls = append(op.walls, ms(r.wall))
	op.masterCPU = append(op.masterCPU, ms(r.masterCPU))
	op.cliCPU = append(op.cliCPU, ms(r.cliCPU))
	if withStates {
		op.states = append(op.states, statesMs)
	}
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
	o        options
	setup    *masterproc.Setup
	src      string
	tree     Tree
	minion   string // the minion's root_dir
	groups   []*group
	saltConf string // the salt-master's configuration directory
	failures []string
}

func run(ctx context.Context, o options) error {
	if o.pings < 1 || o.applies < 1 {
		return errors.New("-pings and -applies must be at least 1")
	}
	setup, cleanup, err := masterproc.Prepare("saltside", o.bin, 1024, o.keep)
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
	rep.Setup["command"] = fmt.Sprintf("go run ./bench/saltside -brine %s -pings %d -applies %d -out %s", o.bin, o.pings, o.applies, o.out)
	rep.Setup["salt"] = src + " run with " + python + " (PYTHONPATH=<tree>:<tree>/shim)"
	rep.Setup["minion"] = fmt.Sprintf("one salt-minion 3006.6 (id %s, user %s, multiprocessing on, log_level_logfile %s), its own root_dir/pki_dir/cachedir/sock_dir under the temporary directory; master 127.0.0.1 on the side's ports; its key pair kept across sides, minion_master.pub removed and a fresh cachedir for each side", minionID, runUser(), o.minionLogLevel)
	rep.Setup["tree"] = fmt.Sprintf("file_roots %s (both masters): top.sls and %s.sls, %d states in %d groups of file.directory, file.managed (contents:), file.managed (salt://saltside/app.conf.j2, template: jinja, mode 0640) and cmd.run (creates:), each requiring the one before, writing under %s", b.tree.FileRoot, slsName, b.tree.States, groups, b.tree.Target)
	setup.Describe(rep)

	var res Results
	res.Minion, res.Tree = minionID, b.tree
	if res.Salt, err = b.saltSide(ctx); err != nil {
		return fmt.Errorf("the Salt side: %w", err)
	}
	printSide("salt", res.Salt)

	brine, fail := b.brineSide(ctx, rep)
	res.Brine, res.BrineFailure = brine, fail
	if fail != nil {
		rep.Fail("brine's side did not complete: " + fail.Error)
	} else {
		printSide("brine", res.Brine)
		res.Ratio = &Ratios{
			TestPing:    ratio(res.Salt.TestPing, res.Brine.TestPing),
			ApplyFirst:  ratio(res.Salt.ApplyFirst, res.Brine.ApplyFirst),
			ApplyRepeat: ratio(res.Salt.ApplyRepeat, res.Brine.ApplyRepeat),
		}
		// No target on the size of the ratios: only brine slower than
		// Salt on a median fails.
		rep.Check("ratio_salt_over_brine", "test_ping.p50", ">=", 1, res.Ratio.TestPing.P50)
		rep.Check("ratio_salt_over_brine", "state_apply_first.p50", ">=", 1, res.Ratio.ApplyFirst.P50)
		rep.Check("ratio_salt_over_brine", "state_apply_repeat.p50", ">=", 1, res.Ratio.ApplyRepeat.P50)
	}
	for _, f := range b.failures {
		rep.Fail(f)
	}
	rep.Results = res
	rep.Setup["load_avg_after"] = report.LoadAvg()
	rep.Notes = append(rep.Notes,
		"wall_ms is the CLI's wall time from its exec to its exit, with the return printed as JSON (salt --out=json --static -t N, brine exec --json -t N) and checked: test.ping True; state.apply all 100 states True, all changed on the first run (the target directory removed before it) and none on the repeat run that follows it, and the files' contents checked after each first run",
		"cli_start is the CLI doing no job (salt --version: Python importing Salt's CLI; brine version): a floor under each side's figures that is not the master's. master_cpu_ms is the master's CPU over a run (the salt-master's every process in its group; brine master's one), cli_cpu_ms the CLI's",
		"states_duration_sum_ms sums the states' durations from the minion's return: the minion's own work, including the salt:// template's hash asked of the master in every run and the file fetched from it on a first run, so it shows how much of a state.apply is the minion's rather than the master's",
		"the first state.apply round of each side runs with the minion's file cache cold; the sides run one after the other (Salt first) with the same minion, the salt-master stopped before brine's master starts",
		"p99 of 5 runs is their maximum; the ratio's p50 below 1 (brine slower) is a failed target, otherwise there is no target on the ratios",
	)
	return rep.Finish(o.out, os.Stdout)
}

func printSide(name string, s *Side) {
	fmt.Fprintf(os.Stderr, "bench/saltside: %s: test.ping p50 %.1f ms p99 %.1f; state.apply first p50 %.1f ms, repeat p50 %.1f ms; cli start p50 %.1f ms\n",
		name, s.TestPing.WallMs.P50, s.TestPing.WallMs.P99, s.ApplyFirst.WallMs.P50, s.ApplyRepeat.WallMs.P50, s.CLIStart.WallMs.P50)
}

// saltSide runs the salt-master and the minion against it, measures, and
// stops both.
func (b *bench) saltSide(ctx context.Context) (*Side, error) {
	pub, ret, err := b.ports()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(b.setup.Dir, "salt-master")
	b.saltConf = filepath.Join(dir, "conf")
	if err := os.MkdirAll(b.saltConf, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(b.saltConf, "master"), []byte(saltMasterConfig(dir, pub, ret, b.tree.FileRoot)), 0o600); err != nil {
		return nil, err
	}
	master, err := b.start("salt-master", filepath.Join(dir, "out.log"), saltEnv(b.src), python, filepath.Join(b.src, "scripts", "salt-master"), "-c", b.saltConf)
	if err != nil {
		return nil, err
	}
	// The master is ready once a worker of its request server is up (it
	// logs so), which on a busy machine is seconds after its ports are
	// bound; the minion started before that would wait out auth retries,
	// which brine's side, whose master answers before the minion starts,
	// would not.
	if err := masterproc.Poll(ctx, b.o.phaseTimeout, 50*time.Millisecond, func() bool {
		log, _ := os.ReadFile(filepath.Join(dir, "master.log"))
		return bytes.Contains(log, []byte("Worker binding to socket")) || master.exited()
	}); err != nil || master.exited() {
		return nil, fmt.Errorf("the salt-master did not start: %v\n%s", err, masterproc.Tail(master.log, 20))
	}
	s := &Side{Master: fmt.Sprintf("salt-master 3006.6 (%s/scripts/salt-master), its own root_dir/pki_dir/cachedir/sock_dir, 127.0.0.1 publish_port %d ret_port %d, auto_accept: True, default worker_threads (5)", b.src, pub, ret),
		CLI: "salt -c <master conf dir> --out=json --static -t N " + minionID + " FUN (Salt's scripts/salt, Python)"}
	cli := func(ctx context.Context, args ...string) (*cliRun, error) {
		argv := append([]string{python, filepath.Join(b.src, "scripts", "salt"), "-c", b.saltConf}, args...)
		return runCLI(ctx, saltEnv(b.src), master.cpu, argv...)
	}
	job := func(timeout int, fun string, args ...string) []string {
		return append([]string{"--out=json", "--static", "-t", fmt.Sprint(timeout), minionID, fun}, args...)
	}
	minion, err := b.startMinion(ctx, "salt", ret, pub)
	if err != nil {
		return nil, err
	}
	if err := b.measure(ctx, s, cli, job, []string{"--version"}); err != nil {
		return nil, fmt.Errorf("%w\nsalt-master log:\n%s\nminion log:\n%s", err,
			masterproc.Tail(filepath.Join(dir, "master.log"), 20), masterproc.Tail(filepath.Join(b.minion, "cache-salt", "minion.log"), 20))
	}
	if err := minion.stop(b.o.stopTimeout); err != nil {
		b.failures = append(b.failures, err.Error())
	}
	if err := master.stop(b.o.stopTimeout); err != nil {
		b.failures = append(b.failures, err.Error())
	}
	return s, nil
}

// brineSide runs `brine master` on the same tree and the minion against
// it, measures, and stops both; a failure is returned with the logs'
// ends, not as an error, so that Salt's side is still reported.
func (b *bench) brineSide(ctx context.Context, rep *report.Report) (*Side, *Failure) {
	conf := fmt.Sprintf("log_level: %s\nfile_roots:\n  base: [%s]\n", b.o.masterLogLevel, b.tree.FileRoot)
	f, err := os.OpenFile(filepath.Join(b.setup.MasterDir, "master"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, &Failure{Error: err.Error()}
	}
	masterLog := filepath.Join(b.setup.Dir, "brine-master.log")
	minionLog := filepath.Join(b.minion, "cache-brine", "minion.log")
	fail := func(err error) *Failure {
		return &Failure{Error: err.Error(), MasterLogTail: tail(masterLog, 40), MinionLogTail: tail(minionLog, 40)}
	}
	m, err := fleet.StartMaster(ctx, b.setup, "brine-master.log")
	if err != nil {
		return nil, fail(err)
	}
	defer m.Close()
	s := &Side{Master: fmt.Sprintf("`brine master` (%s), 127.0.0.1 publish_port %d ret_port %d (Salt minions on the same ports as brine's agents, salt_transport default), auto_accept: true, log_level %s", b.setup.Bin, b.setup.PubPort, b.setup.ReqPort, b.o.masterLogLevel),
		CLI: "brine exec -c <master conf dir> --json -t N " + minionID + " FUN (Go)"}
	masterCPU := func() time.Duration { return report.ProcCPU(m.PID()) }
	cli := func(ctx context.Context, args ...string) (*cliRun, error) {
		return runCLI(ctx, os.Environ(), masterCPU, append([]string{b.setup.Bin}, args...)...)
	}
	job := func(timeout int, fun string, args ...string) []string {
		return append([]string{"exec", "-c", b.setup.MasterDir, "--json", "-t", fmt.Sprint(timeout), minionID, fun}, args...)
	}
	minion, err := b.startMinion(ctx, "brine", b.setup.ReqPort, b.setup.PubPort)
	if err != nil {
		return nil, fail(err)
	}
	if err := b.measure(ctx, s, cli, job, []string{"version"}); err != nil {
		return nil, fail(err)
	}
	if err := minion.stop(b.o.stopTimeout); err != nil {
		b.failures = append(b.failures, err.Error())
	}
	m.End(rep)
	return s, nil
}

// ports picks the salt-master's two loopback ports, apart from brine's.
func (b *bench) ports() (pub, ret int, err error) {
	taken := map[int]bool{b.setup.PubPort: true, b.setup.ReqPort: true}
	for _, p := range []*int{&pub, &ret} {
		for *p == 0 || taken[*p] {
			if *p, err = loopback.Port(); err != nil {
				return 0, 0, err
			}
		}
		taken[*p] = true
	}
	return pub, ret, nil
}

// startMinion writes the minion's configuration for side (its master on
// masterPort and pubPort, a fresh cachedir), removes the master key a
// previous side left, and starts it.
func (b *bench) startMinion(ctx context.Context, side string, masterPort, pubPort int) (*group, error) {
	conf := filepath.Join(b.minion, "conf-"+side)
	cache := filepath.Join(b.minion, "cache-"+side)
	for _, d := range []string{conf, cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(conf, "minion"), []byte(minionConfig(b.minion, cache, b.o.minionLogLevel, masterPort, pubPort)), 0o600); err != nil {
		return nil, err
	}
	if err := os.Remove(filepath.Join(b.minion, "pki", "minion_master.pub")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return b.start("salt-minion ("+side+")", filepath.Join(cache, "out.log"), saltEnv(b.src), python, filepath.Join(b.src, "scripts", "salt-minion"), "-c", conf)
}

// start runs a daemon in its own process group, stopped by stopAll if not
// before.
func (b *bench) start(name, logPath string, env []string, argv ...string) (*group, error) {
	g, err := startGroup(name, logPath, env, argv...)
	if err != nil {
		return nil, err
	}
	b.groups = append(b.groups, g)
	return g, nil
}

// stopAll ends every daemon still running (the way out on an error too),
// minion first.
func (b *bench) stopAll() {
	for i := len(b.groups) - 1; i >= 0; i-- {
		if err := b.groups[i].stop(b.o.stopTimeout); err != nil {
			fmt.Fprintln(os.Stderr, "bench/saltside:", err)
		}
	}
}

// measure waits for the minion to answer, then times test.ping, the
// state.apply rounds and the CLI's start through cli; job makes a job's
// arguments, version the CLI's do-nothing command.
func (b *bench) measure(ctx context.Context, s *Side, cli func(context.Context, ...string) (*cliRun, error),
	job func(timeout int, fun string, args ...string) []string, version []string) error {
	start := time.Now()
	var last string
	err := masterproc.Poll(ctx, b.o.phaseTimeout, 500*time.Millisecond, func() bool {
		r, err := cli(ctx, job(5, "test.ping")...)
		if err != nil {
			last = err.Error()
			return false
		}
		if err := checkPing(r); err != nil {
			last = err.Error()
			return false
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("the minion never answered test.ping: %w; last: %s", err, last)
	}
	s.MinionReadyS = report.Round(time.Since(start).Seconds(), 2)
	for range b.o.warmup {
		if _, err := b.ping(ctx, cli, job); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	s.TestPing, s.ApplyFirst, s.ApplyRepeat, s.CLIStart = &Op{}, &Op{}, &Op{}, &Op{}
	for range b.o.pings {
		if !masterproc.Sleep(ctx, b.o.settleBetweenSteps) {
			return ctx.Err()
		}
		r, err := b.ping(ctx, cli, job)
		if err != nil {
			return err
		}
		s.TestPing.add(r, 0, false)
	}
	for round := range b.o.applies {
		if err := os.RemoveAll(b.tree.Target); err != nil {
			return err
		}
		for _, first := range []bool{true, false} {
			if !masterproc.Sleep(ctx, b.o.settleBetweenSteps) {
				return ctx.Err()
			}
			r, err := cli(ctx, job(b.o.cliTimeoutSeconds, "state.apply", slsName)...)
			if err != nil {
				return err
			}
			ret, err := minionReturn(r)
			if err != nil {
				return fmt.Errorf("state.apply (round %d, first %t): %w", round+1, first, err)
			}
			sum, err := checkApply(ret, b.tree.States, first)
			if err != nil {
				return fmt.Errorf("state.apply (round %d, first %t): %w", round+1, first, err)
			}
			op := s.ApplyRepeat
			if first {
				op = s.ApplyFirst
				if err := checkFiles(b.tree); err != nil {
					return fmt.Errorf("state.apply (round %d) wrote: %w", round+1, err)
				}
			}
			op.add(r, sum, true)
		}
	}
	for i := range b.o.pings {
		r, err := cli(ctx, version...)
		if err != nil {
			return err
		}
		if r.exit != 0 {
			return fmt.Errorf("%v exited %d: %s", version, r.exit, r.stderr.String())
		}
		if i == 0 {
			s.Version = strings.TrimSpace(r.stdout.String())
		}
		s.CLIStart.add(r, 0, false)
	}
	for _, op := range []*Op{s.TestPing, s.ApplyFirst, s.ApplyRepeat, s.CLIStart} {
		op.summarize()
	}
	return nil
}

// ping runs one test.ping and checks its return.
func (b *bench) ping(ctx context.Context, cli func(context.Context, ...string) (*cliRun, error), job func(int, string, ...string) []string) (*cliRun, error) {
	r, err := cli(ctx, job(b.o.cliTimeoutSeconds, "test.ping")...)
	if err != nil {
		return nil, err
	}
	return r, checkPing(r)
}

func checkPing(r *cliRun) error {
	ret, err := minionReturn(r)
	if err != nil {
		return fmt.Errorf("test.ping: %w", err)
	}
	if string(bytes.TrimSpace(ret)) != "true" {
		return fmt.Errorf("test.ping returned %.200s", ret)
	}
	return nil
}

// minionReturn is the minion's return in a CLI's JSON output ({id: ret}).
func minionReturn(r *cliRun) (json.RawMessage, error) {
	var rets map[string]json.RawMessage
	if err := json.Unmarshal(r.stdout.Bytes(), &rets); err != nil {
		return nil, fmt.Errorf("exit %d, output not JSON (%.300q), stderr %.500q", r.exit, r.stdout.String(), r.stderr.String())
	}
	ret, ok := rets[minionID]
	if !ok {
		return nil, fmt.Errorf("exit %d, no return from %s in %.300s, stderr %.500q", r.exit, minionID, r.stdout.String(), r.stderr.String())
	}
	return ret, nil
}

// cliRun is one CLI command and what it cost.
type cliRun struct {
	stdout, stderr          bytes.Buffer
	wall, masterCPU, cliCPU time.Duration
	exit                    int
}

// runCLI runs argv with env and times it, and the master's CPU (through
// masterCPU) over it. A command that ran and failed is no error.
func runCLI(ctx context.Context, env []string, masterCPU func() time.Duration, argv ...string) (*cliRun, error) {
	r := &cliRun{}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &r.stdout, &r.stderr
	m0 := masterCPU()
	start := time.Now()
	err := cmd.Run()
	r.wall = time.Since(start)
	r.masterCPU = masterCPU() - m0
	if ps := cmd.ProcessState; ps != nil {
		r.cliCPU = ps.UserTime() + ps.SystemTime()
		r.exit = ps.ExitCode()
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return r, fmt.Errorf("%s: %w", strings.Join(argv[:min(len(argv), 2)], " "), err)
	}
	return r, nil
}

// tail is a log's last n lines, for the JSON.
func tail(path string, n int) []string {
	t := masterproc.Tail(path, n)
	if t == "" {
		return nil
	}
	return strings.Split(t, "\n")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
