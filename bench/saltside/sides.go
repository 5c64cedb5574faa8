package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// side is one master, running, and how its CLI is called.
type side struct {
	name string // salt or brine
	res  *Side
	// masterPort and pubPort are what the minion is given: the master's
	// ret_port and publish_port.
	masterPort, pubPort int
	cli                 func(ctx context.Context, args ...string) (*cliRun, error)
	// job is the CLI's arguments for a job with timeout (-t) seconds.
	job func(timeout int, fun string, args ...string) []string
	// version is the CLI's do-nothing command.
	version   []string
	masterLog string
	// stop ends the master (salt); end ends it and notes what it logged
	// (brine).
	stop   func() error
	end    func(rep *report.Report)
	failed *Failure
	b      *bench
}

// fail marks the side as failed with err and the ends of its logs.
func (s *side) fail(err error) {
	s.failed = &Failure{Error: err.Error(), MasterLogTail: tail(s.masterLog, 40), MinionLogTail: tail(s.b.minionLog(s), 40)}
}

// startSalt starts the salt-master and waits until it serves.
func (b *bench) startSalt(ctx context.Context) (*side, error) {
	pub, ret, err := b.ports()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(b.setup.Dir, "salt-master")
	conf := filepath.Join(dir, "conf")
	if err := os.MkdirAll(conf, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(conf, "master"), []byte(saltMasterConfig(dir, pub, ret, b.tree.FileRoot)), 0o600); err != nil {
		return nil, err
	}
	master, err := b.start("salt-master", filepath.Join(dir, "out.log"), saltEnv(b.src), python, filepath.Join(b.src, "scripts", "salt-master"), "-c", conf)
	if err != nil {
		return nil, err
	}
	s := &side{name: "salt", b: b, masterPort: ret, pubPort: pub, masterLog: filepath.Join(dir, "master.log"),
		res: newSide(fmt.Sprintf("salt-master 3006.6 (%s/scripts/salt-master), its own root_dir/pki_dir/cachedir/sock_dir, 127.0.0.1 publish_port %d ret_port %d, auto_accept: True, default worker_threads (5)", b.src, pub, ret),
			"salt -c <master conf dir> --out=json -t N "+minionID+" FUN (Salt's scripts/salt, Python)"),
		version: []string{"--version"},
		stop:    func() error { return master.stop(b.o.stopTimeout) },
	}
	s.cli = func(ctx context.Context, args ...string) (*cliRun, error) {
		argv := append([]string{python, filepath.Join(b.src, "scripts", "salt"), "-c", conf}, args...)
		return runCLI(ctx, saltEnv(b.src), master.cpu, argv...)
	}
	s.job = func(timeout int, fun string, args ...string) []string {
		return append([]string{"--out=json", "-t", fmt.Sprint(timeout), minionID, fun}, args...)
	}
	// The master is ready once a worker of its request server is up (it
	// logs so), which on a busy machine is seconds after its ports are
	// bound; a minion started before that waits out auth retries, which
	// against brine's master, answering before the minion starts, it
	// would not.
	if err := masterproc.Poll(ctx, b.o.PhaseTimeout, 50*time.Millisecond, func() bool {
		log, _ := os.ReadFile(s.masterLog)
		return bytes.Contains(log, []byte("Worker binding to socket")) || master.exited()
	}); err != nil || master.exited() {
		return nil, fmt.Errorf("it did not start: %v\n%s\n%s", err, masterproc.Tail(master.log, 20), masterproc.Tail(s.masterLog, 20))
	}
	return s, nil
}

// startBrine starts `brine master` on the same tree; a master that does
// not start is a failed side, not an error, so that Salt's is still
// measured.
func (b *bench) startBrine(ctx context.Context) *side {
	s := &side{name: "brine", b: b, masterPort: b.setup.ReqPort, pubPort: b.setup.PubPort, masterLog: filepath.Join(b.setup.Dir, "brine-master.log"),
		res: newSide(fmt.Sprintf("`brine master` (%s), 127.0.0.1 publish_port %d ret_port %d (Salt minions on the same ports as brine's agents, salt_transport by default), auto_accept: true, log_level %s", b.setup.Bin, b.setup.PubPort, b.setup.ReqPort, b.o.masterLogLevel),
			"brine exec -c <master conf dir> --json -t N "+minionID+" FUN (Go)"),
		version: []string{"version"},
		end:     func(*report.Report) {},
	}
	conf := fmt.Sprintf("log_level: %s\nfile_roots:\n  base: [%s]\n", b.o.masterLogLevel, b.tree.FileRoot)
	if err := b.setup.AddConfig(conf); err != nil {
		s.fail(err)
		return s
	}
	m, err := fleet.StartMaster(ctx, b.setup, filepath.Base(s.masterLog))
	if err != nil {
		s.fail(err)
		return s
	}
	b.brine = m
	s.end = m.End
	s.cli = func(ctx context.Context, args ...string) (*cliRun, error) {
		return runCLI(ctx, os.Environ(), func() time.Duration { return report.ProcCPU(m.PID()) }, append([]string{b.setup.Bin}, args...)...)
	}
	s.job = func(timeout int, fun string, args ...string) []string {
		return append([]string{"exec", "-c", b.setup.MasterDir, "--json", "-t", fmt.Sprint(timeout), minionID, fun}, args...)
	}
	return s
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

// minionLog is the minion's log under side s (its cachedir's).
func (b *bench) minionLog(s *side) string {
	return filepath.Join(b.minion, "cache-"+s.name, "minion.log")
}

// startMinion writes the minion's configuration for side s (its master's
// ports, the side's cachedir), removes the master key the other side
// left, and starts it.
func (b *bench) startMinion(s *side) (*group, error) {
	conf := filepath.Join(b.minion, "conf-"+s.name)
	cache := filepath.Dir(b.minionLog(s))
	for _, d := range []string{conf, cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(conf, "minion"), []byte(minionConfig(b.minion, cache, b.o.minionLogLevel, s.masterPort, s.pubPort)), 0o600); err != nil {
		return nil, err
	}
	if err := os.Remove(filepath.Join(b.minion, "pki", "minion_master.pub")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return b.start("salt-minion ("+s.name+")", filepath.Join(cache, "out.log"), saltEnv(b.src), python, filepath.Join(b.src, "scripts", "salt-minion"), "-c", conf)
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
// the minions first, and brine's master.
func (b *bench) stopAll() {
	for i := len(b.groups) - 1; i >= 0; i-- {
		if err := b.groups[i].stop(b.o.stopTimeout); err != nil {
			fmt.Fprintln(os.Stderr, "bench/saltside:", err)
		}
	}
	if b.brine != nil {
		b.brine.Close()
	}
}

// block runs the minion against side s and measures: test.ping, the
// state.apply rounds and the CLI's start, added to the side's figures.
func (b *bench) block(ctx context.Context, s *side) (blk Block, err error) {
	blk = Block{Side: s.name, LoadAvg: report.LoadAvg()}
	r := s.res
	from := [3]int{len(r.TestPing.walls), len(r.ApplyFirst.walls), len(r.ApplyRepeat.walls)}
	defer func() {
		blk.TestPingP50Ms, blk.ApplyFirstP50Ms, blk.ApplyRepeatP50Ms = r.TestPing.p50Since(from[0]), r.ApplyFirst.p50Since(from[1]), r.ApplyRepeat.p50Since(from[2])
	}()
	readyLine := []byte("Minion is ready to receive requests!")
	log, _ := os.ReadFile(b.minionLog(s))
	readyBefore := bytes.Count(log, readyLine)
	minion, err := b.startMinion(s)
	if err != nil {
		return blk, err
	}
	defer func() {
		if err := minion.stop(b.o.stopTimeout); err != nil {
			b.failures = append(b.failures, err.Error())
		}
	}()

	start := time.Now()
	err = masterproc.Poll(ctx, b.o.PhaseTimeout, 20*time.Millisecond, func() bool {
		log, _ := os.ReadFile(b.minionLog(s))
		return bytes.Count(log, readyLine) > readyBefore || minion.exited()
	})
	if err == nil && minion.exited() {
		err = errors.New("the minion exited")
	}
	if err != nil {
		return blk, fmt.Errorf("the minion did not log %q: %w", readyLine, err)
	}
	blk.MinionReadyS = report.Round(time.Since(start).Seconds(), 2)
	start = time.Now()
	var last string
	err = masterproc.Poll(ctx, b.o.PhaseTimeout, 500*time.Millisecond, func() bool {
		if minion.exited() {
			return true
		}
		r, err := s.cli(ctx, s.job(5, "test.ping")...)
		if err == nil {
			err = checkPing(r)
		}
		if err != nil {
			last = err.Error()
			return false
		}
		return true
	})
	if err == nil && minion.exited() {
		err = errors.New("the minion exited")
	}
	if err != nil {
		return blk, fmt.Errorf("the minion never answered test.ping: %w; last: %s", err, last)
	}
	blk.FirstPingS = report.Round(time.Since(start).Seconds(), 2)
	for range b.o.warmup {
		if _, err := b.ping(ctx, s); err != nil {
			return blk, fmt.Errorf("warm-up: %w", err)
		}
	}
	for range b.o.pings {
		if !masterproc.Sleep(ctx, b.o.settle) {
			return blk, ctx.Err()
		}
		c, err := b.ping(ctx, s)
		if err != nil {
			return blk, err
		}
		r.TestPing.add(c)
	}
	for round := range b.o.applies {
		if err := os.RemoveAll(b.tree.Target); err != nil {
			return blk, err
		}
		for _, first := range []bool{true, false} {
			if !masterproc.Sleep(ctx, b.o.settle) {
				return blk, ctx.Err()
			}
			if err := b.apply(ctx, s, first); err != nil {
				return blk, fmt.Errorf("state.apply (round %d, first run %t): %w", round+1, first, err)
			}
		}
	}
	for range b.o.pings {
		c, err := s.cli(ctx, s.version...)
		if err != nil {
			return blk, err
		}
		if c.exit != 0 {
			return blk, fmt.Errorf("%v exited %d: %s", s.version, c.exit, c.stderr.String())
		}
		r.Version = strings.TrimSpace(c.stdout.String())
		r.CLIStart.add(c)
	}
	return blk, nil
}

// ping runs one test.ping and checks its return.
func (b *bench) ping(ctx context.Context, s *side) (*cliRun, error) {
	r, err := s.cli(ctx, s.job(b.o.cliTimeoutSeconds, "test.ping")...)
	if err != nil {
		return nil, err
	}
	return r, checkPing(r)
}

// apply runs one state.apply, checks its return (and, for a first run,
// the files) and adds it to the side's figures.
func (b *bench) apply(ctx context.Context, s *side, first bool) error {
	r, err := s.cli(ctx, s.job(b.o.cliTimeoutSeconds, "state.apply", slsName)...)
	if err != nil {
		return err
	}
	ret, err := minionReturn(r)
	if err != nil {
		return err
	}
	sum, byKind, err := checkApply(ret, b.tree.States, first)
	if err != nil {
		return err
	}
	op := s.res.ApplyRepeat
	if first {
		op = s.res.ApplyFirst
		if err := checkFiles(b.tree); err != nil {
			return fmt.Errorf("the files written: %w", err)
		}
	}
	op.add(r)
	op.addStates(sum, byKind)
	return nil
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
