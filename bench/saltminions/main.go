// Command saltminions measures a brine master serving salt-minions over
// Salt's own transport (issue 34): a real `brine master` runs as its own
// process (so that its memory and CPU can be read from /proc), and N
// protocol-level salt-minions (bench/internal/saltfleet: each its own
// 2048-bit RSA key, _auth sign-in, AES session, ZeroMQ REQ and SUB over
// Salt's framing, from a loopback address of its own) run in this
// process. It measures (1) onboarding with auto_accept: from starting
// every minion until each one's _auth was accepted and its SUB is
// connected to the publish port; (2) what an idle connected minion costs
// the master in memory (VmRSS); (3) test.ping to every minion through the
// CLI, `brine exec`, K times: each round's wall time. Results go to -out as
// JSON, with the targets checked.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bench/internal/saltfleet"
	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
)

// Targets from the issue.
const (
	targetOnboardSeconds  = 10
	targetPingP99Seconds  = 1
	targetRSSPerMinionKiB = 96
	minionGlob            = "salt-minion-*"
	defaultPingRounds     = 10
)

type options struct {
	masterproc.Options
	minions     int
	pings       int
	acceptWait  time.Duration
	keyDir      string
	keyBits     int
	settle      time.Duration
	longIdle    time.Duration
	masterExtra string
	source      string
}

func main() {
	var o options
	o.Flags("saltminions", masterproc.Usage{
		Brine:        "the brine binary: its master is measured and its exec is the CLI timed",
		Keep:         "keep the temporary directory (master logs and data) for inspection",
		CPUProfile:   "write this process's (the minions') CPU profile here",
		Phase:        2 * time.Minute,
		PhaseTimeout: "give up on a phase that takes longer",
	})
	flag.IntVar(&o.minions, "minions", 1000, "salt-minions simulated in this process (N)")
	flag.IntVar(&o.pings, "pings", defaultPingRounds, "rounds of `brine exec` test.ping to every minion (K)")
	flag.DurationVar(&o.acceptWait, "acceptance-wait", 10*time.Second, "the minions' acceptance_wait_time (Salt's default: 10 s)")
	flag.StringVar(&o.keyDir, "keys", "", "where the minions' RSA keys are kept between runs (default: "+saltfleet.DefaultKeyDir(2048)+" for 2048 bits)")
	flag.IntVar(&o.keyBits, "keysize", 2048, "the minions' RSA key size (Salt's keysize default: 2048)")
	flag.DurationVar(&o.settle, "settle", 5*time.Second, "how long the fleet idles, once onboarded, before the master's memory is sampled")
	flag.DurationVar(&o.longIdle, "long-idle", 150*time.Second, "also sample the master's RSS this long after onboarding, past the Go runtime's periodic GC (0: skip)")
	flag.StringVar(&o.source, "brine-source", "", "what the brine binary was built from (a commit), for the report's setup")
	flag.StringVar(&o.masterExtra, "master-config", "", "YAML appended to the master's configuration (an experiment: the report's setup says so)")
	flag.Parse()
	if o.keyDir == "" {
		o.keyDir = saltfleet.DefaultKeyDir(o.keyBits)
	}
	report.Main("bench/saltminions", o.CPUProfile, func(ctx context.Context) error { return run(ctx, o) })
}

// Results are the three measurements.
type Results struct {
	Onboarding Onboarding `json:"onboarding"`
	Idle       Idle       `json:"idle"`
	Ping       Ping       `json:"ping"`
}

// Onboarding is N new minions started at once against an auto_accept
// master.
type Onboarding struct {
	Minions int `json:"minions"`
	// Definition says when a minion counts as onboarded.
	Definition string `json:"definition"`
	// Seconds runs from starting every minion until the last one was both
	// accepted (its _auth answered with the session key) and subscribed
	// (its SUB's handshake done and subscription sent): the target.
	Seconds float64 `json:"seconds"`
	// AcceptedSeconds is when the last _auth was accepted,
	// SubscribedSeconds when the last SUB was connected; AcceptedMs is
	// per minion from the start.
	AcceptedSeconds   float64     `json:"all_accepted_seconds"`
	SubscribedSeconds float64     `json:"all_subscribed_seconds"`
	AcceptedMs        report.Dist `json:"accepted_ms"`
	// ListedSeconds is when the master first listed every minion as
	// connected (exec.targets on the minions' glob), so that a job would
	// reach them: 0 when it did not within the phase timeout.
	ListedSeconds float64 `json:"master_listed_all_seconds"`
	ListedError   string  `json:"master_listed_error,omitempty"`
	// SignIns counts every _auth sent (more than N when some were pending
	// or failed and were retried); Pending those answered pending.
	SignIns int64 `json:"sign_ins"`
	Pending int64 `json:"pending_replies"`
	// ReqReconnects and SubReconnects count connections to the request
	// and publish ports that the master refused (or that failed) and the
	// minions made again after libzmq's reconnect interval: 100–200 ms on
	// the REQ, doubling; on the SUB Salt's randomized recon_default +
	// rand(recon_max), 1–11 s, plus libzmq's jitter.
	ReqReconnects int64 `json:"req_reconnects"`
	SubReconnects int64 `json:"sub_reconnects"`
	// LateReplies are sign-in replies that came after auth_timeout: the
	// minion sent its _auth again once the late reply was read.
	LateReplies        int64               `json:"late_replies"`
	MasterCPUSeconds   float64             `json:"master_cpu_seconds"`
	MasterCPUMsPerMin  float64             `json:"master_cpu_ms_per_minion"`
	MinionsCPUSeconds  float64             `json:"minions_cpu_seconds"`
	MinionLog          masterproc.LogTally `json:"minion_log"`
	MasterRSSAfterKiB  int64               `json:"master_rss_kib_after"`
	MasterThreadsAfter int                 `json:"master_threads_after"`
}

// Idle is what connected, idle minions cost the master.
type Idle struct {
	Minions int `json:"minions"`
	// Before is the master's memory before any minion connected (an
	// operator connection open), After SettleSeconds after onboarding:
	// medians of RSS samples.
	Before         memStat   `json:"master_before"`
	After          memStat   `json:"master_after"`
	BeforeSamples  []memStat `json:"master_before_samples"`
	AfterSamples   []memStat `json:"master_after_samples"`
	SettleSeconds  float64   `json:"settle_seconds"`
	RSSPerMinion   float64   `json:"master_rss_kib_per_minion"`
	AnonPerMinion  float64   `json:"master_rss_anon_kib_per_minion"`
	StillConnected int       `json:"minions_still_subscribed"`
	// LongIdle is the median of the samples taken LongIdleSeconds after
	// onboarding, once the Go runtime's periodic GC (forced after 2
	// minutes without one) has run and its scavenger returned what the
	// onboarding burst (1,000 RSA sign-ins, 2,000 connections) left.
	LongIdleSeconds       float64               `json:"long_idle_seconds,omitempty"`
	LongIdle              memStat               `json:"master_after_long_idle,omitzero"`
	RSSPerMinionLongIdle  float64               `json:"master_rss_kib_per_minion_after_long_idle,omitempty"`
	AnonPerMinionLongIdle float64               `json:"master_rss_anon_kib_per_minion_after_long_idle,omitempty"`
	Series                []masterproc.RSSPoint `json:"master_rss_series,omitempty"`
	// MasterCPUusPerMinion is the master's CPU per idle minion per second
	// over the settle window.
	MasterCPUusPerMinion float64 `json:"master_cpu_us_per_minion_per_second"`
}

// Ping is test.ping to every minion through `brine exec`, K rounds.
type Ping struct {
	Minions int       `json:"minions"`
	Command string    `json:"command"`
	Rounds  []pingRun `json:"rounds"`
	// WallMs is the rounds' wall times (the target is on its p99: with
	// K < 100 rounds, the slowest).
	WallMs report.Dist `json:"wall_ms"`
	// ReturnedMin is the fewest True returns a round printed.
	ReturnedMin int `json:"returned_min"`
	// ReturnMs is every round's returns together, each from the CLI's
	// exec until the master answered the minion's _return.
	ReturnMs report.Dist `json:"return_answered_ms"`
	// MinionLog is what the minions logged over the rounds (publishes
	// they refused, returns that failed).
	MinionLog masterproc.LogTally `json:"minion_log"`
}

// pingRun is one `brine exec`.
type pingRun struct {
	JID     string  `json:"jid"`
	Seconds float64 `json:"seconds"`
	Exit    int     `json:"exit_status"`
	// Returned is the minions whose return the CLI printed as True;
	// Answered the _returns the master answered, as the minions saw.
	Returned int `json:"returned"`
	Answered int `json:"answered"`
	// Where the wall time went, each from exec (this process's clock):
	// the first and the last minion to have decoded the job, the last
	// _return answered.
	FirstReceivedMs float64 `json:"first_received_ms"`
	LastReceivedMs  float64 `json:"last_received_ms"`
	LastAnsweredMs  float64 `json:"last_answered_ms"`
	MasterCPUMs     float64 `json:"master_cpu_ms"`
	BenchCPUMs      float64 `json:"bench_cpu_ms"`
	CLICPUMs        float64 `json:"cli_cpu_ms"`
	Stderr          string  `json:"stderr,omitempty"`
}

type memStat = masterproc.MemStat

func minionID(i int) string { return fmt.Sprintf("salt-minion-%04d", i) }

func run(ctx context.Context, o options) error {
	if o.minions < 1 || o.pings < 1 {
		return errors.New("-minions and -pings must be at least 1")
	}
	if o.minions > 254*256*100 {
		return errors.New("-minions: too many for the loopback addresses the fleet uses")
	}
	// The minions' keys: loaded from the cache, the missing generated.
	tk := time.Now()
	keys, err := saltfleet.Keys(o.keyDir, o.minions, o.keyBits)
	if err != nil {
		return err
	}
	keyTime := time.Since(tk)

	// Per minion: its REQ and SUB here and their ends on the master, and
	// the sign-in's short-lived REQ; plus the master's store and the CLI.
	setup, cleanup, err := masterproc.Prepare("saltminions", o.Bin, uint64(6*o.minions+1024), o.Keep)
	if err != nil {
		return err
	}
	defer cleanup()

	if o.masterExtra != "" {
		if err := setup.AddConfig(strings.TrimSuffix(o.masterExtra, "\n") + "\n"); err != nil {
			return fmt.Errorf("-master-config: %w", err)
		}
	}

	rep := report.New("saltminions")
	rep.Setup["command"] = fmt.Sprintf("go run ./bench/saltminions -brine %s -minions %d -pings %d -acceptance-wait %s -keysize %d -settle %s -long-idle %s -out %s",
		o.Bin, o.minions, o.pings, o.acceptWait, o.keyBits, o.settle, o.longIdle, o.Out)
	rep.Setup["master"] = "`brine master` as its own process (" + o.Bin + "), its default Salt transport (salt_transport on: Salt minions on ret_port and publish_port beside brine's agents), auto_accept: true, sign_pub_messages on (default), keysize 2048 (default), log_level info (default), on 127.0.0.1"
	rep.Setup["minions"] = fmt.Sprintf("%d protocol-level salt-minions (bench/internal/saltfleet) in this process, each with its own %d-bit RSA key, Salt 3006's _auth (version 2, nonce; first contact without a token), its AES session Crypticle, a ZeroMQ REQ (ZMTP 3.0 NULL, saltzmq's client) for its returns and start event, a SUB subscribed to \"\" checking every publish's signature, and its own loopback source address (127.1.x.y)", o.minions, o.keyBits)
	rep.Setup["minion_config"] = fmt.Sprintf("acceptance_wait_time: %s, auth_timeout: 5 s, auth_tries: 7, return_retry_timer: 10 s, return_retry_tries: 3, recon_default 1 s, recon_max 10 s, recon_randomize on (a SUB refused reconnects after randint(1, 11) s plus libzmq's jitter; a REQ after 100 ms, doubling to 5 s), a salt/minion/<id>/start event after the sign-in (as a 3006 minion fires it)", o.acceptWait)
	rep.Setup["minion_keys"] = fmt.Sprintf("%d keys from %s in %.1f s (generated once, kept between runs: generation is not measured)", o.minions, o.keyDir, keyTime.Seconds())
	rep.Setup["minions_n"] = strconv.Itoa(o.minions)
	if o.masterExtra != "" {
		rep.Setup["master_config_added"] = o.masterExtra
	}
	if o.source != "" {
		rep.Setup["brine_source"] = o.source
	}
	rep.Setup["ping_rounds_k"] = strconv.Itoa(o.pings)
	setup.Describe(rep)

	log := masterproc.NewLogCounter()
	fl, err := saltfleet.New(saltfleet.Config{
		ReqAddr:        setup.ReqAddr(),
		AcceptanceWait: o.acceptWait,
		StartEvent:     true,
		LocalIP:        saltfleet.LoopbackIP,
		Log:            slog.New(log),
	}, keys, minionID)
	if err != nil {
		return err
	}

	m, err := fleet.StartMaster(ctx, setup, "master-1.log")
	if err != nil {
		return err
	}
	defer m.Close()
	fail := m.Fail
	pid := m.PID()

	// (2, before) The master with an operator connection and no minion.
	if !masterproc.Sleep(ctx, 3*time.Second) {
		return ctx.Err()
	}
	var res Results
	idle := &res.Idle
	idle.Minions = o.minions
	if idle.BeforeSamples, idle.Before, err = masterproc.SampleMem(pid, 5, 500*time.Millisecond); err != nil {
		return fail(err)
	}

	// (1) Onboarding.
	defer fl.Stop()
	t0 := time.Now()
	res.Onboarding, err = onboard(ctx, o, fl, m, log, pid)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/saltminions: %d minions accepted and subscribed in %.2f s\n", o.minions, res.Onboarding.Seconds)

	// (2) Idle: settle, then sample the master's memory.
	c0, w0 := report.ProcCPU(pid), time.Now()
	if !masterproc.Sleep(ctx, o.settle) {
		return ctx.Err()
	}
	c1, w1 := report.ProcCPU(pid), time.Now()
	if idle.AfterSamples, idle.After, err = masterproc.SampleMem(pid, 5, time.Second); err != nil {
		return fail(err)
	}
	n := float64(o.minions)
	idle.SettleSeconds = report.Round(o.settle.Seconds(), 1)
	idle.RSSPerMinion = report.Round(float64(idle.After.RSSKiB-idle.Before.RSSKiB)/n, 2)
	idle.AnonPerMinion = report.Round(float64(idle.After.AnonKiB-idle.Before.AnonKiB)/n, 2)
	idle.MasterCPUusPerMinion = report.Round(float64(c1-c0)/float64(time.Microsecond)/n/w1.Sub(w0).Seconds(), 3)
	idle.StillConnected = fl.Subscribed()
	fmt.Fprintf(os.Stderr, "bench/saltminions: idle: %.1f KiB of master RSS per minion\n", idle.RSSPerMinion)

	// (2, long) Idle until past the runtime's periodic GC, before any job.
	if o.longIdle > 0 {
		onboarded := t0.Add(time.Duration(res.Onboarding.Seconds * float64(time.Second)))
		if idle.Series, idle.LongIdle, idle.LongIdleSeconds, err = masterproc.LongIdle(ctx, pid, onboarded, o.longIdle); err != nil {
			return err
		}
		idle.RSSPerMinionLongIdle = report.Round(float64(idle.LongIdle.RSSKiB-idle.Before.RSSKiB)/n, 2)
		idle.AnonPerMinionLongIdle = report.Round(float64(idle.LongIdle.AnonKiB-idle.Before.AnonKiB)/n, 2)
	}

	// (3) test.ping rounds through the CLI.
	log.Reset()
	res.Ping, err = ping(ctx, o, fl, m)
	res.Ping.MinionLog = log.Snapshot()
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/saltminions: test.ping: p50 %.0f ms, p99 %.0f ms\n", res.Ping.WallMs.P50, res.Ping.WallMs.P99)

	// Stop the minions, then the master.
	counts := fl.Counts()
	if !fl.Stop() {
		rep.Fail(fmt.Sprintf("the minions did not stop within %s of their context ending", saltfleet.StopTimeout))
	}
	if i, e := fl.Err(); e != nil {
		rep.Fail(fmt.Sprintf("minion %d: %v", i, e))
	}
	m.End(rep)

	rep.Results = res
	rep.Setup["load_avg_after"] = report.LoadAvg()
	p := res.Ping
	rep.Check("onboarding", "seconds", "<=", targetOnboardSeconds, report.Round(res.Onboarding.Seconds, 3))
	rep.Check("ping", "wall_ms.p99", "<=", targetPingP99Seconds*1000, p.WallMs.P99)
	rep.Check("ping", "returned_min", ">=", n, float64(p.ReturnedMin))
	rep.Check("idle", "master_rss_kib_per_minion", "<=", targetRSSPerMinionKiB, idle.RSSPerMinion)
	if counts.Failed > 0 {
		rep.Fail(fmt.Sprintf("%d _returns were not answered by the master (after return_retry_tries)", counts.Failed))
	}
	if want := int64(o.minions * o.pings); counts.Jobs != want {
		rep.Fail(fmt.Sprintf("the minions received %d jobs for them, want %d (%d rounds to %d minions)", counts.Jobs, want, o.pings, o.minions))
	}
	rep.Notes = append(rep.Notes,
		"onboarding.seconds (the target) runs from starting every minion at once until the last one has both its _auth accepted (the reply's session key decrypted and its signatures checked) and its SUB connected and subscribed to the publish port; not until it answered a test.ping (the ping rounds come after the idle measurement, so that no job's memory is counted as a minion's). master_listed_all_seconds is when the master first listed them all connected (exec.targets on "+minionGlob+"), polled every 100 ms",
		"each minion signs in as salt.crypt.AsyncAuth does: on a fresh REQ connection, its first contact without a token, auth_timeout 5 s, again every acceptance_wait_time while pending; then it connects its SUB and sends salt/minion/<id>/start (_minion_event with its tok) on its persistent REQ",
		"idle.master_rss_kib_per_minion (the target) is (median of 5 VmRSS samples of the master settle_seconds after onboarding, every minion holding a REQ and a SUB connection) minus (median of 5 samples before any minion connected, an operator connection open), divided by N; ..._after_long_idle is the same long_idle_seconds after onboarding (still before any job), past the Go runtime's forced GC, which tells connection state from what the onboarding burst left; master_rss_series is the RSS on the way there",
		"ping: K rounds of `brine exec -c <master dir> '"+minionGlob+"' test.ping --static --out json --show-jid`, one after the other, a second apart, each once the previous one's returns were all answered (or 10 s after the CLI gave up on those missing); a round's wall time runs from the CLI's exec until it exited having printed every minion's return, or given up. The target is on wall_ms.p99, which with K < 100 rounds is the slowest round. Per round, first_received_ms and last_received_ms are exec until the first and the last minion decoded the job, last_answered_ms until the master answered the last _return (this process's clock); return_answered_ms is every return's. minion_log counts the publishes the minions refused (a serial not above the last one accepted is Salt's replay guard: the minion drops the job)",
		"the minions decode every publish (the master's signature checked with its public key, then decrypted with the session Crypticle) and answer a job whose tgt_type list names them (or whose glob matches) with a _return load as a 3006 minion sends it: cmd, id, success, return, retcode, jid, fun, fun_args (user and master_id when the job has them), a fresh nonce, encrypted with the session key, {enc: aes, load, version: 2}; the master's reply is decrypted and its nonce checked",
		"the minions run in this process, sharing the machine's 2 cores with the master and the CLI: each sign-in costs this process two RSA private-key operations, each publish a signature check per minion",
	)
	return rep.Finish(o.Out, os.Stdout)
}

// onboard starts every minion at once and waits until each is accepted
// and subscribed, then until the master lists them all.
func onboard(ctx context.Context, o options, fl *saltfleet.Fleet, m *fleet.Master, log *masterproc.LogCounter, pid int) (Onboarding, error) {
	ob := Onboarding{Minions: o.minions, Definition: "each minion's _auth accepted (session key received and checked) and its SUB connected and subscribed; not a test.ping answered (the ping rounds come later)"}
	m0, s0 := report.ProcCPU(pid), report.ProcCPU(0)
	t0 := time.Now()
	fl.Start(ctx)
	var accepted, subscribed time.Duration
	err := masterproc.Poll(ctx, o.PhaseTimeout, 10*time.Millisecond, func() bool {
		now := time.Since(t0)
		if accepted == 0 && fl.Accepted() == o.minions {
			accepted = now
		}
		if subscribed == 0 && fl.Subscribed() == o.minions {
			subscribed = now
		}
		return accepted != 0 && subscribed != 0
	})
	done := time.Since(t0)
	m1, s1 := report.ProcCPU(pid), report.ProcCPU(0)
	ob.Seconds = report.Round(done.Seconds(), 3)
	ob.AcceptedSeconds, ob.SubscribedSeconds = report.Round(accepted.Seconds(), 3), report.Round(subscribed.Seconds(), 3)
	ob.MasterCPUSeconds, ob.MinionsCPUSeconds = (m1 - m0).Seconds(), (s1 - s0).Seconds()
	ob.MasterCPUMsPerMin = report.Round(float64(m1-m0)/float64(time.Millisecond)/float64(o.minions), 3)
	var at []time.Duration
	for _, mn := range fl.Minions {
		if a := mn.AcceptedAt(); !a.IsZero() {
			at = append(at, a.Sub(t0))
		}
	}
	ob.AcceptedMs = report.DistOf(at)
	c := fl.Counts()
	ob.SignIns, ob.Pending, ob.ReqReconnects, ob.SubReconnects, ob.LateReplies = c.SignIns, c.Pending, c.ReqReconnects, c.SubReconnects, c.LateReplies
	if err != nil {
		ob.MinionLog = log.Snapshot()
		return ob, fmt.Errorf("onboarding: %d of %d minions accepted, %d subscribed after %s: %w", fl.Accepted(), o.minions, fl.Subscribed(), done.Round(time.Millisecond), err)
	}
	// The master's view: every minion listed connected.
	if err := m.Listed(ctx, minionGlob, o.minions, min(o.PhaseTimeout, 30*time.Second), 100*time.Millisecond, nil); err != nil {
		ob.ListedError = err.Error()
	} else {
		ob.ListedSeconds = report.Round(time.Since(t0).Seconds(), 3)
	}
	ob.MinionLog = log.Snapshot()
	if s, err := masterproc.ReadMem(pid); err == nil {
		ob.MasterRSSAfterKiB, ob.MasterThreadsAfter = s.RSSKiB, s.Threads
	}
	return ob, nil
}

// ping runs K rounds of test.ping to every minion through the CLI.
func ping(ctx context.Context, o options, fl *saltfleet.Fleet, m *fleet.Master) (Ping, error) {
	p := Ping{Minions: o.minions, Command: "brine exec -c <master dir> '" + minionGlob + "' test.ping --static --out json --show-jid", ReturnedMin: o.minions}
	var walls, answered []time.Duration
	for k := range o.pings {
		if !masterproc.Sleep(ctx, time.Second) {
			return p, ctx.Err()
		}
		c, err := m.CLI(ctx, "exec", minionGlob, "test.ping", "--static", "--out", "json", "--show-jid")
		if err != nil {
			return p, err
		}
		r := pingRun{Seconds: report.Round(c.Wall().Seconds(), 4), Exit: c.Exit,
			MasterCPUMs: ms(c.MasterCPU), BenchCPUMs: ms(c.BenchCPU), CLICPUMs: ms(c.CLICPU)}
		jid, rets, perr := c.Returns()
		r.JID = jid
		if perr != nil || c.Exit != 0 {
			r.Stderr = report.Clip(c.Stderr.Bytes(), 500)
		}
		for _, v := range rets {
			if v == true {
				r.Returned++
			}
		}
		// The CLI printed the returns it saw; the minions may still be
		// reading the master's answers to them.
		if jid != "" {
			_ = masterproc.Poll(ctx, 10*time.Second, 10*time.Millisecond, func() bool { return fl.Returns(jid).OK >= r.Returned })
			rs := fl.Returns(jid)
			r.Answered = rs.OK
			for _, at := range rs.At {
				answered = append(answered, at.Sub(c.Start))
			}
			since := func(t time.Time) float64 { return report.Round(float64(t.Sub(c.Start))/float64(time.Millisecond), 3) }
			if !rs.Last.IsZero() {
				r.LastAnsweredMs = since(rs.Last)
			}
			var first, last time.Time
			for _, at := range rs.Received {
				if first.IsZero() || at.Before(first) {
					first = at
				}
				if at.After(last) {
					last = at
				}
			}
			if !first.IsZero() {
				r.FirstReceivedMs, r.LastReceivedMs = since(first), since(last)
			}
		}
		p.Rounds = append(p.Rounds, r)
		walls = append(walls, c.Wall())
		p.ReturnedMin = min(p.ReturnedMin, r.Returned)
		if perr != nil && k == 0 {
			return p, fmt.Errorf("ping round 1: brine exec (exit %d): %w; stderr: %s", c.Exit, perr, report.Clip(c.Stderr.Bytes(), 500))
		}
		// The next round starts once this one's returns are all answered,
		// or 10 s after the CLI gave up on those missing (a minion that
		// dropped the job never returns).
		_ = masterproc.Poll(ctx, min(o.PhaseTimeout, 10*time.Second), 20*time.Millisecond, func() bool {
			rs := fl.Returns(jid)
			return rs.OK+rs.Failed >= o.minions
		})
	}
	p.WallMs = report.DistOf(walls)
	p.ReturnMs = report.DistOf(answered)
	return p, nil
}

func ms(d time.Duration) float64 { return report.Round(float64(d)/float64(time.Millisecond), 1) }
