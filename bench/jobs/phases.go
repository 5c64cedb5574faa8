package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
)

// Ping is test.ping to every agent through `brine exec`, run several
// times.
type Ping struct {
	Agents  int       `json:"agents"`
	Command string    `json:"command"`
	Runs    []pingRun `json:"runs"`
	// Seconds is the median run's wall time (the target), MaxSeconds the
	// slowest, FirstSeconds the first (the master's job path cold).
	Seconds      float64 `json:"seconds"`
	MaxSeconds   float64 `json:"max_seconds"`
	FirstSeconds float64 `json:"first_seconds"`
	// ReturnedMin is the fewest returns a run printed.
	ReturnedMin int `json:"returned_min"`
	// LatencyMs is every run's returns together.
	LatencyMs report.Dist `json:"latency_ms"`
}

// pingRun is one `brine exec`.
type pingRun struct {
	JID     string  `json:"jid"`
	Seconds float64 `json:"seconds"`
	Exit    int     `json:"exit_status"`
	// Returned is the agents whose return the CLI printed as True;
	// Stored the returns the bench's watch saw stored.
	Returned int `json:"returned"`
	Stored   int `json:"stored"`
	// Where the wall time went (see the notes).
	ToNewMs            float64 `json:"to_new_ms"`
	NewToLastReturnMs  float64 `json:"new_to_last_return_ms"`
	LastReturnToExitMs float64 `json:"last_return_to_exit_ms"`
	// RecordMs is exec until the job's record (jobs.show) held every
	// return; the next run waits for it, to start from rest.
	RecordMs    float64     `json:"record_complete_ms"`
	LatencyMs   report.Dist `json:"latency_ms"`
	MasterCPUMs float64     `json:"master_cpu_ms"`
	BenchCPUMs  float64     `json:"bench_cpu_ms"`
}

func (b *bench) ping(ctx context.Context) (Ping, error) {
	p := Ping{Agents: b.o.agents, Command: "brine exec -c <master dir> '*' test.ping --static --out json --show-jid"}
	var all []time.Duration
	var secs []float64
	p.ReturnedMin = b.o.agents
	for i := range b.o.pings {
		if err := b.quiet(ctx); err != nil {
			return p, fmt.Errorf("ping %d: %w", i+1, err)
		}
		if !masterproc.Sleep(ctx, time.Second) {
			return p, ctx.Err()
		}
		r, lat, err := b.pingOnce(ctx)
		if err != nil {
			return p, fmt.Errorf("ping %d: %w", i+1, err)
		}
		p.Runs = append(p.Runs, r)
		all = append(all, lat...)
		secs = append(secs, r.Seconds)
		p.ReturnedMin = min(p.ReturnedMin, r.Returned)
		if r.Returned < b.o.agents {
			b.failures = append(b.failures, fmt.Sprintf("ping run %d (jid %s): the CLI printed %d of %d returns as True (exit %d), %d stored",
				i+1, r.JID, r.Returned, b.o.agents, r.Exit, r.Stored))
		}
	}
	p.Seconds, p.MaxSeconds, p.FirstSeconds = report.Median(secs), slices.Max(secs), secs[0]
	p.LatencyMs = report.DistOf(all)
	return p, nil
}

// pingOnce runs the CLI once and reads what the watch saw of its job.
func (b *bench) pingOnce(ctx context.Context) (pingRun, []time.Duration, error) {
	var r pingRun
	c, err := b.m.CLI(ctx, "exec", "*", "test.ping", "--static", "--out", "json", "--show-jid")
	if err != nil {
		return r, nil, err
	}
	t0, end := c.Start, c.End
	r.MasterCPUMs = float64(c.MasterCPU) / float64(time.Millisecond)
	r.BenchCPUMs = float64(c.BenchCPU) / float64(time.Millisecond)
	r.Seconds = report.Round(c.Wall().Seconds(), 4)
	r.Exit = c.Exit
	jid, rets, perr := c.Returns()
	r.JID = jid
	if perr != nil {
		return r, nil, fmt.Errorf("brine exec (exit %d): %w; stderr: %s", r.Exit, perr, report.Clip(c.Stderr.Bytes(), 500))
	}
	for _, v := range rets {
		if v == true {
			r.Returned++
		}
	}
	// The CLI saw every return stored; the bench's watch may be a moment
	// behind it.
	_ = masterproc.Poll(ctx, 10*time.Second, 10*time.Millisecond, func() bool { return b.live.returned(jid) >= r.Returned })
	r.Stored = b.live.returned(jid)
	tm := b.live.timing([]string{jid})
	r.LatencyMs = report.DistOf(tm.latency)
	b.live.mu.Lock()
	newTime := time.Time{}
	if j := b.live.jobs[jid]; j != nil {
		newTime = j.newTime
	}
	b.live.mu.Unlock()
	if !newTime.IsZero() && len(tm.retTimes) > 0 {
		last := tm.retTimes[len(tm.retTimes)-1]
		r.ToNewMs = report.Round(float64(newTime.Sub(t0))/float64(time.Millisecond), 3)
		r.NewToLastReturnMs = report.Round(float64(last.Sub(newTime))/float64(time.Millisecond), 3)
		r.LastReturnToExitMs = report.Round(float64(end.Sub(last))/float64(time.Millisecond), 3)
	}
	if err := masterproc.Poll(ctx, b.o.PhaseTimeout, 20*time.Millisecond, b.recordsComplete(ctx, []string{jid}, r.Stored)); err != nil {
		return r, tm.latency, fmt.Errorf("the record of job %s: %w", jid, err)
	}
	r.RecordMs = report.Round(float64(time.Since(t0))/float64(time.Millisecond), 1)
	return r, tm.latency, nil
}

// Stream is J jobs to every agent of a fleet published back to back.
type Stream struct {
	// Fleet is which agents: "agents" (agent.Agent) or "wire" (wireFleet).
	Fleet      string `json:"fleet"`
	Target     string `json:"target"`
	Agents     int    `json:"agents"`
	Jobs       int    `json:"jobs"`
	Publishers int    `json:"publishers"`
	Expected   int    `json:"expected_returns"`
	// PublishSeconds runs until every exec.publish call answered;
	// PublishMs is each call's time.
	PublishSeconds float64     `json:"publish_seconds"`
	PublishMs      report.Dist `json:"publish_ms"`
	// Seconds runs from the first publish until the watch saw the last
	// return.
	Seconds                   float64     `json:"seconds"`
	ReturnsPerSecond          float64     `json:"returns_per_second"`
	SustainedReturnsPerSecond float64     `json:"sustained_returns_per_second"`
	LatencyMs                 report.Dist `json:"latency_ms"`
	MasterCPUSeconds          float64     `json:"master_cpu_seconds"`
	MasterCPUPercent          float64     `json:"master_cpu_percent_of_one_core"`
	MasterCPUusPerReturn      float64     `json:"master_cpu_us_per_return"`
	BenchCPUSeconds           float64     `json:"bench_cpu_seconds"`
	BenchCPUusPerReturn       float64     `json:"bench_cpu_us_per_return"`
	// What the master and this process (the agents) wrote to storage
	// over the phase (/proc/<pid>/io write_bytes), in all and per return.
	MasterWriteMiB       float64 `json:"master_disk_write_mib"`
	MasterWriteKiBPerRet float64 `json:"master_disk_write_kib_per_return"`
	BenchWriteMiB        float64 `json:"bench_disk_write_mib"`
	BenchWriteKiBPerRet  float64 `json:"bench_disk_write_kib_per_return"`
	// The master records every job (jobs.show) from the stored events
	// by a consumer of its own, behind them: RecordsSeconds runs from
	// the first publish until every job's record held every return, and
	// the master's CPU and writes to then are the whole cost of a return.
	RecordsSeconds              float64 `json:"job_records_complete_seconds"`
	MasterCPUusPerReturnRecords float64 `json:"master_cpu_us_per_return_with_records"`
	MasterWriteKiBPerRetRecords float64 `json:"master_disk_write_kib_per_return_with_records"`
	// Live is what the watch saw, Stored a replay of the log afterwards.
	Live     check               `json:"live_watch"`
	Stored   check               `json:"stored"`
	AgentLog masterproc.LogTally `json:"agent_log,omitempty"`
	// WireDropped and WireFailed are jobs a wire agent could not queue
	// and returns the master did not acknowledge.
	WireDropped int64  `json:"wire_jobs_dropped,omitempty"`
	WireFailed  int64  `json:"wire_returns_failed,omitempty"`
	Perf        string `json:"master_perf_data,omitempty"`
}

// fleetUnderTest is what a stream runs against: the agents' ids, the glob
// that selects them, and how to wait until they delivered everything.
type fleetUnderTest struct {
	name, tgt string
	ids       []string
	quiet     func(context.Context) error
}

func (b *bench) stream(ctx context.Context, f fleetUnderTest) (Stream, error) {
	o := b.o
	n := len(f.ids)
	st := Stream{Fleet: f.name, Target: f.tgt, Agents: n, Jobs: o.streamJobs, Publishers: o.publishers, Expected: n * o.streamJobs}
	if err := f.quiet(ctx); err != nil {
		return st, fmt.Errorf("stream %s: %w", f.name, err)
	}
	if !masterproc.Sleep(ctx, time.Second) {
		return st, ctx.Err()
	}
	b.fl.Logs.Reset()
	jids := make([]string, o.streamJobs)
	for i := range jids {
		jids[i] = jobs.NewJID()
	}
	stopPerf := func() error { return nil }
	if o.perf != "" {
		path := o.perf + "-stream-" + f.name + ".data"
		var err error
		if stopPerf, err = perfRecord(b.m.PID(), path); err != nil {
			return st, err
		}
		st.Perf = path
	}
	m0, s0 := report.ProcCPU(b.m.PID()), report.ProcCPU(0)
	mw0, sw0 := writeBytes(b.m.PID()), writeBytes(0)
	t0 := time.Now()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		pubErr  error
		pubDur  []time.Duration
		pubNext = make(chan string, len(jids))
	)
	for _, jid := range jids {
		pubNext <- jid
	}
	close(pubNext)
	for range o.publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jid := range pubNext {
				c0 := time.Now()
				pub, err := b.publish(ctx, jid, f.tgt, n, "test.ping", nil)
				d := time.Since(c0)
				mu.Lock()
				pubDur = append(pubDur, d)
				if err == nil && len(pub.NotConnected) > 0 {
					err = fmt.Errorf("job %s: %d agents not connected", jid, len(pub.NotConnected))
				}
				if err != nil && pubErr == nil {
					pubErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	st.PublishSeconds = report.Round(time.Since(t0).Seconds(), 3)
	st.PublishMs = report.DistOf(pubDur)
	if pubErr != nil {
		_ = stopPerf()
		return st, fmt.Errorf("stream %s: %w", f.name, pubErr)
	}
	werr := masterproc.Poll(ctx, o.PhaseTimeout, 5*time.Millisecond, func() bool { return b.live.allReturned(jids, n) })
	m1, s1 := report.ProcCPU(b.m.PID()), report.ProcCPU(0)
	mw1, sw1 := writeBytes(b.m.PID()), writeBytes(0)
	rerr := masterproc.Poll(ctx, o.PhaseTimeout, 200*time.Millisecond, b.recordsComplete(ctx, jids, n))
	st.RecordsSeconds = report.Round(time.Since(t0).Seconds(), 3)
	m2, mw2 := report.ProcCPU(b.m.PID()), writeBytes(b.m.PID())
	if err := stopPerf(); err != nil {
		b.rep.Notes = append(b.rep.Notes, "stream "+f.name+": "+err.Error())
	}
	if rerr != nil {
		b.failures = append(b.failures, fmt.Sprintf("stream %s: job records not complete after %s: %v", f.name, o.PhaseTimeout, rerr))
	}
	tm := b.live.timing(jids)
	got := len(tm.retTimes)
	if got > 0 {
		st.Seconds = report.Round(tm.lastSeen.Sub(t0).Seconds(), 4)
		st.ReturnsPerSecond = report.Round(float64(got)/tm.lastSeen.Sub(t0).Seconds(), 1)
		lo, hi := tm.retTimes[got/10], tm.retTimes[got*9/10]
		if span := hi.Sub(lo).Seconds(); span > 0 {
			st.SustainedReturnsPerSecond = report.Round(float64(got*9/10-got/10)/span, 1)
		}
	}
	st.LatencyMs = report.DistOf(tm.latency)
	st.MasterCPUSeconds = (m1 - m0).Seconds()
	st.BenchCPUSeconds = (s1 - s0).Seconds()
	if st.Seconds > 0 {
		st.MasterCPUPercent = report.Round(100*st.MasterCPUSeconds/st.Seconds, 1)
	}
	if got > 0 {
		st.MasterCPUusPerReturn = report.Round(float64(m1-m0)/float64(time.Microsecond)/float64(got), 1)
		st.BenchCPUusPerReturn = report.Round(float64(s1-s0)/float64(time.Microsecond)/float64(got), 1)
		st.MasterWriteKiBPerRet = report.Round(float64(mw1-mw0)/1024/float64(got), 2)
		st.BenchWriteKiBPerRet = report.Round(float64(sw1-sw0)/1024/float64(got), 2)
		st.MasterCPUusPerReturnRecords = report.Round(float64(m2-m0)/float64(time.Microsecond)/float64(got), 1)
		st.MasterWriteKiBPerRetRecords = report.Round(float64(mw2-mw0)/1024/float64(got), 2)
	}
	st.MasterWriteMiB, st.BenchWriteMiB = report.Round(float64(mw1-mw0)/(1<<20), 1), report.Round(float64(sw1-sw0)/(1<<20), 1)
	st.Live = b.live.verdict(jids, f.ids)
	if werr != nil {
		b.failures = append(b.failures, fmt.Sprintf("stream %s: %d of %d returns seen after %s", f.name, got, st.Expected, o.PhaseTimeout))
	}
	// The stored truth: a replay of the jobs' events from the log.
	if !masterproc.Sleep(ctx, time.Second) {
		return st, ctx.Err()
	}
	if f.name == "agents" {
		st.AgentLog = b.fl.Logs.Snapshot()
	}
	stored := newJobTally()
	rctx, cancel := context.WithTimeout(ctx, b.o.PhaseTimeout)
	defer cancel()
	if err := replay(rctx, b.m.Op, "salt/job/*", t0.Add(-time.Second), stored); err != nil {
		return st, fmt.Errorf("stream %s: %w", f.name, err)
	}
	st.Stored = stored.verdict(jids, f.ids)
	return st, nil
}

// recordsComplete is a poll condition: every job of jids has a record
// (jobs.show) with n returns.
func (b *bench) recordsComplete(ctx context.Context, jids []string, n int) func() bool {
	done := map[string]bool{}
	return func() bool {
		for _, jid := range jids {
			if done[jid] {
				continue
			}
			var rec struct {
				Returns map[string]json.RawMessage `json:"returns"`
			}
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := b.m.Op.Call(cctx, rpc.JobsShow, rpc.JobRequest{JID: jid}, &rec)
			cancel()
			if err != nil || len(rec.Returns) < n {
				return false
			}
			done[jid] = true
		}
		return true
	}
}

// publish publishes fun to the n agents tgt selects under jid through the
// operator connection, as `brine exec` does.
func (b *bench) publish(ctx context.Context, jid, tgt string, n int, fun string, args []any) (jobs.Published, error) {
	var pub jobs.Published
	job := jobs.Targeted{JID: jid, Fun: fun, Arg: jobs.PackArgs(args, nil), Tgt: tgt, TgtType: "glob", User: "bench"}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := b.m.Op.Call(cctx, "exec.publish", job, &pub); err != nil {
		return pub, fmt.Errorf("exec.publish %s: %w", jid, err)
	}
	if len(pub.Minions) != n {
		return pub, fmt.Errorf("exec.publish %s: %d agents selected, want %d", jid, len(pub.Minions), n)
	}
	return pub, nil
}

// Kill is a master SIGKILLed while every agent runs a job.
type Kill struct {
	Agents           int     `json:"agents"`
	JID              string  `json:"jid"`
	SleepSeconds     float64 `json:"sleep_seconds"`
	KillAfterSeconds float64 `json:"kill_after_seconds"`
	// StoredBeforeKill is the returns stored before SIGKILL (none is
	// expected: the job outlasts the master); RunningAtKill the agents
	// running the job then (saltutil.find_job on each), every one
	// expected: the kill is to hit returns in flight, not jobs never
	// received.
	StoredBeforeKill int `json:"stored_before_kill"`
	RunningAtKill    int `json:"running_at_kill"`
	// DroppedSeconds is SIGKILL until every agent saw its connection go,
	// when the master is started again.
	DroppedSeconds float64 `json:"agents_dropped_seconds"`
	// The rest run from the restart (the master's exec).
	AllReadySeconds  float64 `json:"all_ready_seconds"`
	AllStoredSeconds float64 `json:"all_stored_seconds"`
	// StoredMs is when each return was seen stored, from the restart.
	StoredMs   report.Dist         `json:"stored_ms"`
	Live       check               `json:"live_watch"`
	Stored     check               `json:"stored"`
	OutboxLeft int                 `json:"outbox_items_left"`
	AgentLog   masterproc.LogTally `json:"agent_log"`
}

func (b *bench) kill(ctx context.Context) (Kill, error) {
	o := b.o
	k := Kill{Agents: o.agents, SleepSeconds: o.sleep, KillAfterSeconds: o.killAfter.Seconds()}
	if err := b.quiet(ctx); err != nil {
		return k, fmt.Errorf("master kill: %w", err)
	}
	if !masterproc.Sleep(ctx, time.Second) {
		return k, ctx.Err()
	}
	b.fl.Logs.Reset()
	k.JID = jobs.NewJID()
	tPub := time.Now()
	if _, err := b.publish(ctx, k.JID, agentGlob, o.agents, "test.sleep", []any{o.sleep}); err != nil {
		return k, fmt.Errorf("master kill: %w", err)
	}
	if !masterproc.Sleep(ctx, time.Until(tPub.Add(o.killAfter))) {
		return k, ctx.Err()
	}
	k.StoredBeforeKill = b.live.returned(k.JID)
	k.RunningAtKill = running(ctx, b.fl, k.JID)
	tKill := time.Now()
	b.m.Proc.Kill()
	if err := masterproc.Poll(ctx, 30*time.Second, 5*time.Millisecond, func() bool { return b.fl.Ready() == 0 }); err != nil {
		return k, fmt.Errorf("master kill: %d agents still ready after SIGKILL: %w", b.fl.Ready(), err)
	}
	k.DroppedSeconds = report.Round(time.Since(tKill).Seconds(), 3)

	tRestart := time.Now()
	if err := b.m.Restart(masterLog(len(b.m.Logs) + 1)); err != nil {
		return k, err
	}
	var allReady, allStored time.Duration
	err := masterproc.Poll(ctx, o.PhaseTimeout, 10*time.Millisecond, func() bool {
		now := time.Since(tRestart)
		if allReady == 0 && b.fl.Ready() == o.agents {
			allReady = now
		}
		if allStored == 0 && b.live.returned(k.JID) == o.agents {
			allStored = now
		}
		return allReady != 0 && allStored != 0
	})
	k.AllReadySeconds, k.AllStoredSeconds = report.Round(allReady.Seconds(), 3), report.Round(allStored.Seconds(), 3)
	b.live.mu.Lock()
	var stored []time.Duration
	if j := b.live.jobs[k.JID]; j != nil {
		for _, at := range j.seen {
			stored = append(stored, at.Sub(tRestart))
		}
	}
	b.live.mu.Unlock()
	k.StoredMs = report.DistOf(stored)
	if err != nil {
		b.failures = append(b.failures, fmt.Sprintf("master kill: after %s, %d of %d agents ready and %d of %d returns seen",
			o.PhaseTimeout, b.fl.Ready(), o.agents, b.live.returned(k.JID), o.agents))
	}

	// A grace for late copies, then the verdicts: what the watch saw, and
	// the stored log.
	if !masterproc.Sleep(ctx, 3*time.Second) {
		return k, ctx.Err()
	}
	k.Live = b.live.verdict([]string{k.JID}, b.fl.IDs)
	k.OutboxLeft = b.fl.Queued()
	k.AgentLog = b.fl.Logs.Snapshot()
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, err := gateway.Dial(dctx, b.m.Setup.ReqAddr(), b.m.Key)
	if err != nil {
		return k, fmt.Errorf("master kill: dialling the restarted master: %w", err)
	}
	defer c.Close()
	all := newJobTally()
	if err := replay(dctx, c, "salt/job/"+k.JID+"/*", tPub.Add(-time.Second), all); err != nil {
		return k, fmt.Errorf("master kill: %w", err)
	}
	k.Stored = all.verdict([]string{k.JID}, b.fl.IDs)
	if k.RunningAtKill < o.agents {
		b.rep.Notes = append(b.rep.Notes, fmt.Sprintf("master_kill: only %d of %d agents were running the job when the master was killed", k.RunningAtKill, o.agents))
	}
	if k.OutboxLeft > 0 {
		b.failures = append(b.failures, fmt.Sprintf("master kill: %d items left in the agents' outboxes", k.OutboxLeft))
	}
	return k, nil
}
