// Command agents measures a master with many agents: a real `brine master`
// runs as its own process (so that its memory and CPU can be read from
// /proc), and N real agents (agent.Agent, each with its own configuration
// directory, CURVE key pair, on-disk outbox, connection and session) run in
// this process. It measures (1) onboarding with auto_accept: from starting
// every agent until each one's salt/minion/<id>/start is stored on the
// master's bus; (2) what an idle connected agent costs the master in memory
// (VmRSS) and CPU; (3) a reconnect storm: the master is stopped, every agent
// queues K events while it is down, the master is started again on the
// same data directory and ports, and the time until every agent is back
// and every queued event is stored — none lost, none stored twice, by
// event id and by payload — is measured. Results go to -out as JSON, with
// the targets checked.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus/gateway"
)

// Targets from the issue.
const (
	targetOnboardSeconds = 10
	targetRSSPerAgentKiB = 64
	targetStormSeconds   = 15
)

type options struct {
	masterproc.Options
	agents      int
	events      int
	reauthDelay int
	acceptWait  int
	idle        time.Duration
	longIdle    time.Duration
	memprofile  string
}

func main() {
	var o options
	o.Flags("agents", masterproc.Usage{
		Brine:        "the brine binary whose master is measured",
		Keep:         "keep the temporary directory (master logs, data, agents) for inspection",
		CPUProfile:   "write this process's (the agents') CPU profile here",
		Phase:        2 * time.Minute,
		PhaseTimeout: "give up on a phase that takes longer",
	})
	flag.IntVar(&o.agents, "agents", 1000, "agents simulated in this process")
	flag.IntVar(&o.events, "events", 3, "events each agent queues while the master is down (K)")
	flag.IntVar(&o.reauthDelay, "reauth-delay", 10, "agents' random_reauth_delay in seconds (Salt's and the agent's default: 10)")
	flag.IntVar(&o.acceptWait, "acceptance-wait", 10, "agents' acceptance_wait_time in seconds (Salt's and the agent's default: 10)")
	flag.DurationVar(&o.idle, "idle", 10*time.Second, "the idle window over which the master's CPU is measured")
	flag.DurationVar(&o.longIdle, "long-idle", 150*time.Second, "also sample the master's RSS this long after the agents settled, past the Go runtime's periodic GC (0: skip)")
	flag.StringVar(&o.memprofile, "memprofile", "", "write this process's (the agents') heap profile here, taken while they are idle")
	flag.Parse()
	report.Main("bench/agents", o.CPUProfile, func(ctx context.Context) error { return run(ctx, o) })
}

// Results are the three measurements.
type Results struct {
	Onboarding Onboarding `json:"onboarding"`
	Idle       Idle       `json:"idle"`
	Storm      Storm      `json:"reconnect_storm"`
}

// Onboarding is N new agents started at once against an auto_accept master.
type Onboarding struct {
	Agents int `json:"agents"`
	// Seconds runs from starting every agent (each dials, fetches the
	// master's key, connects over CURVE and says hello) until the last
	// salt/minion/<id>/start is stored and seen by a watch.
	Seconds float64 `json:"seconds"`
	// AllReadySeconds is when the last agent was accepted (Ready).
	AllReadySeconds float64     `json:"all_ready_seconds"`
	ReadyMs         report.Dist `json:"ready_ms"`
	StartStoredMs   report.Dist `json:"start_stored_ms"`
	// SettledSeconds is when every agent's outbox was empty (minion_start
	// delivered too) and its mine sent.
	SettledSeconds     float64             `json:"settled_seconds"`
	AuthEvents         int                 `json:"salt_auth_events"`
	MasterCPUSeconds   float64             `json:"master_cpu_seconds"`
	MasterCPUMsPerAgnt float64             `json:"master_cpu_ms_per_agent"`
	AgentsCPUSeconds   float64             `json:"agents_cpu_seconds"`
	AgentLog           masterproc.LogTally `json:"agent_log"`
}

// memStat is what /proc/<pid>/status says of a process's memory.
type memStat = masterproc.MemStat

// Idle is what connected, idle agents cost the master.
type Idle struct {
	Agents int `json:"agents"`
	// Before is the master's memory before any agent connected (a watch
	// is connected), After once all are connected and idle: medians of
	// RSS samples.
	Before        memStat   `json:"master_before"`
	After         memStat   `json:"master_after"`
	BeforeSamples []memStat `json:"master_before_samples"`
	AfterSamples  []memStat `json:"master_after_samples"`
	// AfterWindow is the median after the CPU window too, to show whether
	// the figure was still falling.
	AfterWindow       memStat `json:"master_after_cpu_window"`
	RSSPerAgentKiB    float64 `json:"master_rss_kib_per_agent"`
	AnonPerAgentKiB   float64 `json:"master_rss_anon_kib_per_agent"`
	RSSPerAgentKiBEnd float64 `json:"master_rss_kib_per_agent_after_cpu_window"`
	// LongIdle is the median of the samples taken LongIdleSeconds after
	// the agents settled, once the Go runtime's periodic GC (forced after
	// 2 minutes without one) has run and its scavenger returned the heap
	// the onboarding burst left over; Series is the RSS on the way there.
	LongIdleSeconds         float64               `json:"long_idle_seconds,omitempty"`
	LongIdle                memStat               `json:"master_after_long_idle,omitzero"`
	RSSPerAgentKiBLongIdle  float64               `json:"master_rss_kib_per_agent_after_long_idle,omitempty"`
	AnonPerAgentKiBLongIdle float64               `json:"master_rss_anon_kib_per_agent_after_long_idle,omitempty"`
	Series                  []masterproc.RSSPoint `json:"master_rss_series,omitempty"`
	// LongIdleCPUusPerAgent is the master's CPU per agent per second from
	// the start of the CPU window to the end of the long idle.
	LongIdleCPUusPerAgent float64 `json:"master_cpu_us_per_agent_per_second_long_idle,omitempty"`
	WindowSeconds         float64 `json:"window_seconds"`
	MasterCPUMs           float64 `json:"master_cpu_ms"`
	// MasterCPUusPerAgent is master CPU per idle agent per second of the
	// window (µs/s).
	MasterCPUusPerAgent float64 `json:"master_cpu_us_per_agent_per_second"`
	MasterCPUPercent    float64 `json:"master_cpu_percent_of_one_core"`
	// BaselineCPUMs is the master's CPU over a window as long before any
	// agent connected; MasterNetCPUusPerAgent subtracts it.
	BaselineCPUMs          float64 `json:"master_baseline_cpu_ms"`
	MasterNetCPUusPerAgent float64 `json:"master_net_cpu_us_per_agent_per_second"`
	// The agents' side (this process), for comparison: a real agent is a
	// process of its own, so this is indicative only.
	AgentsCPUusPerAgent float64 `json:"agents_cpu_us_per_agent_per_second"`
	AgentsRSSPerAgentKB float64 `json:"agents_process_rss_kib_per_agent"`
	StillReady          int     `json:"agents_still_ready"`
}

// Storm is the reconnect storm after a master restart.
type Storm struct {
	Agents            int `json:"agents"`
	EventsPerAgent    int `json:"events_per_agent"`
	RandomReauthDelay int `json:"random_reauth_delay_seconds"`
	// MasterStopSeconds is SIGTERM to exit.
	MasterStopSeconds float64 `json:"master_stop_seconds"`
	// DroppedSeconds is SIGTERM until every agent saw its connection go.
	DroppedSeconds float64 `json:"agents_dropped_seconds"`
	// QueueSeconds is the time the agents took to queue (fsync) their
	// events with FireMaster while the master was down.
	QueueSeconds float64 `json:"queue_seconds"`
	QueueErrors  int     `json:"queue_errors"`
	// DownSeconds is master exit to its restart.
	DownSeconds float64 `json:"master_down_seconds"`
	// The rest run from the restart (the master's exec).
	MasterAnsweringSeconds float64 `json:"master_answering_seconds"`
	AllReadySeconds        float64 `json:"all_ready_seconds"`
	AllStoredSeconds       float64 `json:"all_stored_seconds"`
	Seconds                float64 `json:"seconds"`
	// OutageSeconds runs from SIGTERM to the same end.
	OutageSeconds    float64     `json:"outage_seconds"`
	ReadyMs          report.Dist `json:"ready_ms"`
	StoredMs         report.Dist `json:"events_stored_ms"`
	MasterCPUSeconds float64     `json:"master_cpu_seconds"`
	AgentsCPUSeconds float64     `json:"agents_cpu_seconds"`
	// Live is what the watch (started before the agents, and reconnecting
	// across the restart) saw; Stored is a replay of the whole log after
	// the storm: the verdict.
	Live       check               `json:"live_watch"`
	Stored     check               `json:"stored"`
	OutboxLeft int                 `json:"outbox_items_left"`
	AgentLog   masterproc.LogTally `json:"agent_log"`
}

// markReady records when each agent was first seen Ready (at now) and
// returns how many have been.
func markReady(fl *fleet.Fleet, readyAt []time.Duration, now time.Duration) int {
	n := 0
	for i, a := range fl.Agents {
		if readyAt[i] == 0 && a.Ready() {
			readyAt[i] = now
		}
		if readyAt[i] != 0 {
			n++
		}
	}
	return n
}

func run(ctx context.Context, o options) (err error) {
	if o.agents < 1 || o.events < 0 {
		return errors.New("-agents must be at least 1 and -events not negative")
	}
	// Per agent: its connection here and its end on the master, a file
	// or two of its outbox; plus the master's store and the runtime.
	setup, cleanup, err := masterproc.Prepare("agents", o.Bin, uint64(3*o.agents+1024), o.Keep)
	if err != nil {
		return err
	}
	defer cleanup()

	rep := report.New("agents")
	rep.Setup["command"] = fmt.Sprintf("go run ./bench/agents -brine %s -agents %d -events %d -reauth-delay %d -out %s", o.Bin, o.agents, o.events, o.reauthDelay, o.Out)
	rep.Setup["master"] = "`brine master` as its own process (" + o.Bin + "), embedded fsync'ed JetStream store, auto_accept: true, auth_events on (default), log_level info (default), on 127.0.0.1"
	rep.Setup["agents"] = fmt.Sprintf("%d real agent.Agent in this process, each with its own config dir, CURVE key pair, on-disk outbox, TCP connection and CURVE session; grains from the real machine; default mine_functions", o.agents)
	rep.Setup["agent_config"] = fmt.Sprintf("acceptance_wait_time: %d, random_reauth_delay: %d (other keys at their defaults)", o.acceptWait, o.reauthDelay)
	rep.Setup["acceptance_wait_time"] = strconv.Itoa(o.acceptWait)
	rep.Setup["random_reauth_delay"] = strconv.Itoa(o.reauthDelay)
	rep.Setup["agents_n"] = strconv.Itoa(o.agents)
	rep.Setup["events_per_agent_k"] = strconv.Itoa(o.events)
	setup.Describe(rep)

	extra := fmt.Sprintf("acceptance_wait_time: %d\nrandom_reauth_delay: %d\n", o.acceptWait, o.reauthDelay)
	fl, err := fleet.New(setup, o.agents, agentID, extra)
	if err != nil {
		return err
	}
	var res Results
	agentsRSS0, _ := masterproc.ReadMem(os.Getpid())

	// The master, killed on every way out of here.
	m, err := fleet.StartMaster(ctx, setup, masterLog(1))
	if err != nil {
		return err
	}
	defer m.Close()
	fail := m.Fail

	// The watch: started before any agent, from the beginning of the log,
	// reconnecting (and catching up) across the master's restart.
	live := newTally()
	stopWatch := m.Watch(ctx, "", live.add)
	defer stopWatch()
	if err := waitFor(ctx, 30*time.Second, func() bool { return live.events > 0 }, &live.mu); err != nil {
		return fail(fmt.Errorf("the watch saw nothing (not even the master's start event): %w", err))
	}

	// (2, before) The master with a watcher and no agent.
	if !masterproc.Sleep(ctx, 3*time.Second) {
		return ctx.Err()
	}
	pid := m.PID()
	res.Idle.BeforeSamples, res.Idle.Before, err = masterproc.SampleMem(pid, 5, 500*time.Millisecond)
	if err != nil {
		return fail(err)
	}
	b0, bw0 := report.ProcCPU(pid), time.Now()
	if !masterproc.Sleep(ctx, o.idle) {
		return ctx.Err()
	}
	baseCPU, baseWin := report.ProcCPU(pid)-b0, time.Since(bw0)

	// (1) Onboarding.
	defer fl.Stop()
	ob, t0, err := onboard(ctx, o, fl, live, pid)
	res.Onboarding = ob
	if err != nil {
		return fail(err)
	}

	// (2) Idle: settle, sample the master's memory, then its CPU over the
	// window.
	if !masterproc.Sleep(ctx, 5*time.Second) {
		return ctx.Err()
	}
	idle := &res.Idle
	idle.Agents = o.agents
	idle.AfterSamples, idle.After, err = masterproc.SampleMem(pid, 5, time.Second)
	if err != nil {
		return fail(err)
	}
	m0, s0, w0 := report.ProcCPU(pid), report.ProcCPU(0), time.Now()
	if !masterproc.Sleep(ctx, o.idle) {
		return ctx.Err()
	}
	m1, s1, w1 := report.ProcCPU(pid), report.ProcCPU(0), time.Now()
	_, idle.AfterWindow, _ = masterproc.SampleMem(pid, 3, time.Second)
	if o.longIdle > 0 {
		// Keep idle until the runtime's periodic GC has surely run,
		// recording the RSS every 5 s, then sample as before.
		settled := t0.Add(time.Duration(ob.SettledSeconds * float64(time.Second)))
		if idle.Series, idle.LongIdle, idle.LongIdleSeconds, err = masterproc.LongIdle(ctx, pid, settled, o.longIdle); err != nil {
			return err
		}
		idle.RSSPerAgentKiBLongIdle = float64(idle.LongIdle.RSSKiB-idle.Before.RSSKiB) / float64(o.agents)
		idle.AnonPerAgentKiBLongIdle = float64(idle.LongIdle.AnonKiB-idle.Before.AnonKiB) / float64(o.agents)
		m2, w2 := report.ProcCPU(pid), time.Now()
		idle.LongIdleCPUusPerAgent = float64(m2-m0) / float64(time.Microsecond) / float64(o.agents) / w2.Sub(w0).Seconds()
	}
	agentsRSS1, _ := masterproc.ReadMem(os.Getpid())
	if o.memprofile != "" {
		if err := writeHeapProfile(o.memprofile); err != nil {
			return err
		}
	}
	n := float64(o.agents)
	win := w1.Sub(w0).Seconds()
	idle.WindowSeconds = win
	idle.RSSPerAgentKiB = float64(idle.After.RSSKiB-idle.Before.RSSKiB) / n
	idle.AnonPerAgentKiB = float64(idle.After.AnonKiB-idle.Before.AnonKiB) / n
	idle.RSSPerAgentKiBEnd = float64(idle.AfterWindow.RSSKiB-idle.Before.RSSKiB) / n
	idle.MasterCPUMs = float64(m1-m0) / float64(time.Millisecond)
	idle.MasterCPUusPerAgent = float64(m1-m0) / float64(time.Microsecond) / n / win
	idle.MasterCPUPercent = 100 * (m1 - m0).Seconds() / win
	idle.BaselineCPUMs = float64(baseCPU) / float64(time.Millisecond)
	idle.MasterNetCPUusPerAgent = (float64(m1-m0)/win - float64(baseCPU)/baseWin.Seconds()) / float64(time.Microsecond) / n
	idle.AgentsCPUusPerAgent = float64(s1-s0) / float64(time.Microsecond) / n / win
	idle.AgentsRSSPerAgentKB = float64(agentsRSS1.RSSKiB-agentsRSS0.RSSKiB) / n
	idle.StillReady = fl.Ready()

	// (3) The reconnect storm.
	st, err := storm(ctx, o, fl, live, m)
	res.Storm = st
	if err != nil {
		return fail(err)
	}

	// Stop the agents, then the master.
	if !fl.Stop() {
		rep.Fail(fmt.Sprintf("the agents did not stop within %s of their context ending", fleet.StopTimeout))
	}
	if i, e := fl.Err(); e != nil {
		rep.Fail(fmt.Sprintf("agent %d: Run returned %v", i, e))
	}
	stopWatch()
	m.End(rep)

	rep.Results = res
	rep.Setup["load_avg_after"] = report.LoadAvg()
	s := res.Storm
	rep.Check("onboarding", "seconds", "<=", targetOnboardSeconds, report.Round(ob.Seconds, 3))
	rep.Check("idle", "master_rss_kib_per_agent", "<=", targetRSSPerAgentKiB, report.Round(idle.RSSPerAgentKiB, 2))
	rep.Check("reconnect_storm", "seconds", "<=", targetStormSeconds, report.Round(s.Seconds, 3))
	rep.Check("reconnect_storm", "stored.lost", "<=", 0, float64(s.Stored.Lost))
	rep.Check("reconnect_storm", "stored.duplicated_by_id", "<=", 0, float64(s.Stored.DuplicatedByID))
	rep.Check("reconnect_storm", "stored.duplicated_by_payload", "<=", 0, float64(s.Stored.DuplicatedByPayload))
	rep.Check("reconnect_storm", "stored.agents_restarted", ">=", n, float64(s.Stored.AgentsRestarted))
	if s.Stored.WrongID+s.Stored.Unexpected > 0 {
		rep.Fail(fmt.Sprintf("%d storm events stored under another agent's id, %d not queued by anyone", s.Stored.WrongID, s.Stored.Unexpected))
	}
	if s.OutboxLeft > 0 {
		rep.Fail(fmt.Sprintf("%d items left in the agents' outboxes after the storm", s.OutboxLeft))
	}
	if s.QueueErrors > 0 {
		rep.Fail(fmt.Sprintf("%d FireMaster calls failed while the master was down", s.QueueErrors))
	}
	rep.Notes = append(rep.Notes,
		"onboarding.seconds runs from starting all agents' Run at once (each fetches the master's public key over NULL, connects over CURVE, says hello and is accepted by auto_accept) until a watch started before them has seen every agent's salt/minion/<id>/start; ready_ms and start_stored_ms are per agent from that start",
		"idle.master_rss_kib_per_agent (the target) is (median of 5 VmRSS samples of the master 5 s after every agent was connected, its outbox empty and its mine sent) minus (median of 5 samples before any agent connected, one watch connected), divided by N",
		"idle.master_rss_kib_per_agent_after_long_idle is the same difference long_idle_seconds after the agents settled: the Go runtime forces a GC after 2 minutes without one, after which its scavenger returns the heap the onboarding burst left (master_rss_series shows the drop); it is not the target's measurement, it tells connection state from burst leftovers",
		"master CPU is utime+stime from /proc/<pid>/stat (10 ms ticks): over the idle window with every agent connected, and over a window as long before any agent (master_baseline_cpu_ms); master_net_cpu_us_per_agent_per_second is their difference per agent, within one tick of zero when idle agents cost nothing",
		"reconnect_storm: the master gets SIGTERM; once every agent saw its connection drop, each queues K events with FireMaster (tag "+stormTag+", data {agent, seq, k} with seq unique across the fleet); the master is started again on the same data directory and ports. seconds runs from the restart (exec) until every agent is Ready and a new salt/minion/<id>/start and all N*K events are stored; each agent waits rand(0, random_reauth_delay) from its drop before reconnecting, as Salt's minions do. master_answering_seconds is when an operator client's ping first succeeded (it redials every 250 ms)",
		"reconnect_storm.stored replays the whole log after the storm (and a 3 s grace for late copies): lost = queued payloads absent, duplicated_by_payload = extra copies of one (agent, seq), duplicated_by_id = extra log entries with one event id; live_watch is what the watch saw live",
		"the agents run in this process, sharing the machine's 2 cores with the master: agents_cpu_* is this process's CPU, for a reader to see what the master competed with; agents_process_rss_kib_per_agent is indicative only (one runtime for all)",
	)
	if o.reauthDelay == 10 {
		rep.Notes = append(rep.Notes, "random_reauth_delay is 10 s, Salt's default and the agent's, which an operator of 1,000 agents would keep: it spreads their return over 10 s (about 100 hellos/s on average) for a master restart that takes about a second; the storm's seconds are therefore mostly that delay (-reauth-delay 0 measures the master against all of them at once)")
	} else {
		rep.Notes = append(rep.Notes, fmt.Sprintf("random_reauth_delay is %d s here (-reauth-delay), not the default 10 s", o.reauthDelay))
	}
	return rep.Finish(o.Out, os.Stdout)
}

// writeHeapProfile writes this process's live heap to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// masterLog is the log file of the master's run-th run.
func masterLog(run int) string { return fmt.Sprintf("master-%d.log", run) }

func agentID(i int) string { return fmt.Sprintf("bench-agent-%04d", i) }

// onboard starts every agent at once and waits until each one's start
// event is stored.
func onboard(ctx context.Context, o options, fl *fleet.Fleet, live *tally, pid int) (Onboarding, time.Time, error) {
	ob := Onboarding{Agents: o.agents}
	readyAt := make([]time.Duration, o.agents)
	m0, s0 := report.ProcCPU(pid), report.ProcCPU(0)
	fl.Logs.Reset()
	t0 := time.Now()
	fl.Start(ctx)
	allReady := time.Duration(0)
	err := poll(ctx, o.PhaseTimeout, func() bool {
		now := time.Since(t0)
		if markReady(fl, readyAt, now) == o.agents && allReady == 0 {
			allReady = now
		}
		return allReady != 0 && live.started() == o.agents
	})
	done := time.Since(t0)
	m1, s1 := report.ProcCPU(pid), report.ProcCPU(0)
	ob.Seconds, ob.AllReadySeconds = done.Seconds(), allReady.Seconds()
	ob.MasterCPUSeconds, ob.AgentsCPUSeconds = (m1 - m0).Seconds(), (s1 - s0).Seconds()
	ob.MasterCPUMsPerAgnt = float64(m1-m0) / float64(time.Millisecond) / float64(o.agents)
	var ready, stored []time.Duration
	for _, d := range readyAt {
		if d != 0 {
			ready = append(ready, d)
		}
	}
	live.mu.Lock()
	for _, set := range live.starts {
		first := time.Time{}
		for _, at := range set {
			if first.IsZero() || at.Before(first) {
				first = at
			}
		}
		stored = append(stored, first.Sub(t0))
	}
	ob.AuthEvents = live.auth
	live.mu.Unlock()
	ob.ReadyMs, ob.StartStoredMs = report.DistOf(ready), report.DistOf(stored)
	if err != nil {
		ob.AgentLog = fl.Logs.Snapshot()
		starts, _, _, _ := live.counts()
		return ob, t0, fmt.Errorf("onboarding: %d of %d agents ready, %d start events stored after %s: %w", len(ready), o.agents, starts, done.Round(time.Millisecond), err)
	}
	// Settled: every outbox delivered (minion_start too) and mine sent
	// (sent before the outbox is drained).
	err = poll(ctx, o.PhaseTimeout, func() bool {
		_, ms, _, _ := live.counts()
		return ms >= o.agents && fl.Queued() == 0
	})
	ob.SettledSeconds = time.Since(t0).Seconds()
	ob.AgentLog = fl.Logs.Snapshot()
	if err != nil {
		return ob, t0, fmt.Errorf("onboarding: outboxes not delivered: %d items left: %w", fl.Queued(), err)
	}
	return ob, t0, nil
}

// storm stops the master, has every agent queue events while it is down,
// starts it again and waits until everything is back.
func storm(ctx context.Context, o options, fl *fleet.Fleet, live *tally, m *fleet.Master) (Storm, error) {
	st := Storm{Agents: o.agents, EventsPerAgent: o.events, RandomReauthDelay: o.reauthDelay}
	expected := map[string]bool{}
	for i := range fl.Agents {
		for k := range o.events {
			expected[payloadKey(agentID(i), i*o.events+k)] = true
		}
	}
	live.beginStorm(expected)
	fl.Logs.Reset()

	tTerm := time.Now()
	stopDur, err := m.Proc.Stop(60 * time.Second)
	st.MasterStopSeconds = stopDur.Seconds()
	if err != nil {
		return st, fmt.Errorf("storm: stopping the master: %w", err)
	}
	tExit := time.Now()
	if err := poll(ctx, 30*time.Second, func() bool { return fl.Ready() == 0 }); err != nil {
		return st, fmt.Errorf("storm: %d agents still ready after the master stopped: %w", fl.Ready(), err)
	}
	st.DroppedSeconds = time.Since(tTerm).Seconds()

	// Every agent queues K events, all at once, as applications on a
	// thousand machines would.
	tq := time.Now()
	var (
		wg   sync.WaitGroup
		qerr atomic.Int64
	)
	for i, a := range fl.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range o.events {
				data := map[string]any{"agent": a.ID(), "seq": i*o.events + k, "k": k}
				if err := a.FireMaster(ctx, stormTag, data); err != nil {
					qerr.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	st.QueueSeconds, st.QueueErrors = time.Since(tq).Seconds(), int(qerr.Load())

	// Restart on the same data directory and ports.
	tRestart := time.Now()
	st.DownSeconds = tRestart.Sub(tExit).Seconds()
	s0 := report.ProcCPU(0)
	if err := m.Restart(masterLog(len(m.Logs) + 1)); err != nil {
		return st, err
	}
	answering := make(chan time.Duration, 1)
	go func() {
		dctx, cancel := context.WithTimeout(ctx, o.PhaseTimeout)
		defer cancel()
		c, err := gateway.Dial(dctx, m.Setup.ReqAddr(), m.Key)
		if err != nil {
			answering <- -1
			return
		}
		answering <- time.Since(tRestart)
		c.Close()
	}()
	readyAt := make([]time.Duration, o.agents)
	var allReady, allStored time.Duration
	err = poll(ctx, o.PhaseTimeout, func() bool {
		now := time.Since(tRestart)
		if markReady(fl, readyAt, now) == o.agents && allReady == 0 {
			allReady = now
		}
		_, _, restarted, payloads := live.counts()
		if restarted == o.agents && payloads >= len(expected) && allStored == 0 {
			allStored = now
		}
		return allReady != 0 && allStored != 0
	})
	done := time.Since(tRestart)
	st.MasterCPUSeconds = report.ProcCPU(m.PID()).Seconds()
	st.AgentsCPUSeconds = (report.ProcCPU(0) - s0).Seconds()
	st.AllReadySeconds, st.AllStoredSeconds, st.Seconds = allReady.Seconds(), allStored.Seconds(), done.Seconds()
	st.OutageSeconds = time.Since(tTerm).Seconds()
	select {
	case d := <-answering:
		st.MasterAnsweringSeconds = d.Seconds()
	default:
	}
	var ready []time.Duration
	for _, d := range readyAt {
		if d != 0 {
			ready = append(ready, d)
		}
	}
	st.ReadyMs = report.DistOf(ready)
	live.mu.Lock()
	var stored []time.Duration
	for _, at := range live.payloadAt {
		stored = append(stored, at.Sub(tRestart))
	}
	live.mu.Unlock()
	st.StoredMs = report.DistOf(stored)
	if err != nil {
		st.Live = live.verdict(expected)
		st.AgentLog = fl.Logs.Snapshot()
		return st, fmt.Errorf("storm: after %s: %d of %d agents ready, %d agents restarted, %d of %d events stored: %w",
			done.Round(time.Millisecond), len(ready), o.agents, st.Live.AgentsRestarted, st.Live.Stored, len(expected), err)
	}

	// A grace for late copies, then the verdicts: what the watch saw, and
	// the whole stored log.
	if !masterproc.Sleep(ctx, 3*time.Second) {
		return st, ctx.Err()
	}
	st.Live = live.verdict(expected)
	st.OutboxLeft = fl.Queued()
	st.AgentLog = fl.Logs.Snapshot()
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, err := gateway.Dial(dctx, m.Setup.ReqAddr(), m.Key)
	if err != nil {
		return st, fmt.Errorf("storm: dialling the master for the replay: %w", err)
	}
	defer c.Close()
	all := newTally()
	all.startsBefore(live.baseline(), expected)
	if _, err := replayAll(dctx, c, all); err != nil {
		return st, fmt.Errorf("storm: replaying the log: %w", err)
	}
	st.Stored = all.verdict(expected)
	return st, nil
}

// poll calls done every 10 ms until it is true, ctx ends or timeout passes.
func poll(ctx context.Context, timeout time.Duration, done func() bool) error {
	return masterproc.Poll(ctx, timeout, 10*time.Millisecond, done)
}

// waitFor is poll for a condition read under mu.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool, mu *sync.Mutex) error {
	return poll(ctx, timeout, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return cond()
	})
}
