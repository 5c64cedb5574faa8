package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/bench/masterproc"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/jobs"
)

// writeSLS writes the orchestration files under root/orch.
func writeSLS(root string, o options) error {
	var chain, ping, sleep strings.Builder
	for i := range o.steps {
		fmt.Fprintf(&chain, "step%03d:\n  salt.function:\n    - name: test.ping\n    - tgt: '*'\n", i)
		if i > 0 {
			fmt.Fprintf(&chain, "    - require:\n      - salt: step%03d\n", i-1)
		}
	}
	for i := range o.branches {
		fmt.Fprintf(&ping, "branch%02d:\n  salt.function:\n    - name: test.ping\n    - tgt: '*'\n    - parallel: True\n", i)
		fmt.Fprintf(&sleep, "branch%02d:\n  salt.function:\n    - name: test.sleep\n    - tgt: '*'\n    - arg: [%g]\n    - parallel: True\n", i, o.sleep)
	}
	dir := filepath.Join(root, "orch")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, text := range map[string]string{"chain.sls": chain.String(), "branches.sls": ping.String(), "branches_sleep.sls": sleep.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cliRun is one `brine run state.orchestrate` through the CLI.
type cliRun struct {
	jid       string
	t0, end   time.Time
	exit      int
	steps     []step
	masterCPU float64
	benchCPU  float64
	cliCPU    float64
}

// step is one step's result in the orchestration's return.
type step struct {
	tag    string
	runNum int
	start  time.Time
	dur    time.Duration
	result bool
	// trueRets counts the agents whose return (changes.ret) is True.
	trueRets int
	comment  string
}

func (s step) end() time.Time { return s.start.Add(s.dur) }

// orchestrate runs `brine run state.orchestrate mods --json` and reads its
// return; the step's start times are placed on the day of the
// orchestration's new event.
func (b *bench) orchestrate(ctx context.Context, mods string) (cliRun, error) {
	var r cliRun
	c, err := b.m.CLI(ctx, "run", "--timeout", b.o.PhaseTimeout.String(), "state.orchestrate", mods, "--json")
	if err != nil {
		return r, fmt.Errorf("state.orchestrate %s: %w", mods, err)
	}
	r.t0, r.end, r.exit = c.Start, c.End, c.Exit
	r.masterCPU, r.benchCPU, r.cliCPU = msCPU(c.MasterCPU), msCPU(c.BenchCPU), msCPU(c.CLICPU)
	stdout, stderr := &c.Stdout, &c.Stderr
	// --json prints the reply alone on stdout; a failed run's error goes
	// to stderr.
	line := stdout.Bytes()
	var reply struct {
		JID    string `json:"jid"`
		Return struct {
			Data    map[string]map[string]map[string]any `json:"data"`
			Retcode int                                  `json:"retcode"`
		} `json:"return"`
		Success bool `json:"success"`
	}
	if err := json.Unmarshal(line, &reply); err != nil {
		return r, fmt.Errorf("brine run state.orchestrate %s (exit %d): its JSON output: %w: %q; stderr: %s", mods, r.exit, err, report.Clip(stdout.Bytes(), 300), report.Clip(stderr.Bytes(), 300))
	}
	r.jid = reply.JID
	results, ok := reply.Return.Data["bench_master"]
	if !ok {
		return r, fmt.Errorf("brine run state.orchestrate %s (exit %d, job %s): no bench_master in the return: %q", mods, r.exit, r.jid, report.Clip(line, 300))
	}
	// The day of the start times: the orchestration's new event, which
	// the watch may deliver a moment after the CLI exited.
	if err := masterproc.Poll(ctx, 10*time.Second, 5*time.Millisecond, func() bool {
		run, _ := b.seen.orchestration(r.jid)
		return !run.newT.IsZero()
	}); err != nil {
		return r, fmt.Errorf("orchestration %s: its new event: %w", r.jid, err)
	}
	run, _ := b.seen.orchestration(r.jid)
	for tag, res := range results {
		s := step{tag: tag, result: res["result"] == true, comment: fmt.Sprint(res["comment"])}
		n, _ := res["__run_num__"].(float64)
		s.runNum = int(n)
		clock, _ := res["start_time"].(string)
		if s.start, err = clockAt(run.newT, clock); err != nil {
			return r, fmt.Errorf("orchestration %s: step %s: start_time %v: %w", r.jid, tag, res["start_time"], err)
		}
		d, _ := res["duration"].(float64)
		s.dur = time.Duration(math.Round(d*1000)) * time.Microsecond
		if ch, _ := res["changes"].(map[string]any); ch != nil {
			rets, _ := ch["ret"].(map[string]any)
			for _, v := range rets {
				if v == true {
					s.trueRets++
				}
			}
		}
		r.steps = append(r.steps, s)
	}
	slices.SortFunc(r.steps, func(a, b step) int { return a.runNum - b.runNum })
	return r, nil
}

// check fails the run unless it succeeded with want steps, each True with
// every agent's return True, and the watch saw each step's job returned
// once by every agent.
func (b *bench) check(what string, r cliRun, want int) {
	if r.exit != 0 {
		b.fail("%s (job %s): exit status %d", what, r.jid, r.exit)
	}
	if len(r.steps) != want {
		b.fail("%s (job %s): %d steps returned, %d expected", what, r.jid, len(r.steps), want)
	}
	for _, s := range r.steps {
		if !s.result || s.trueRets != b.o.agents {
			b.fail("%s (job %s): step %s: result %v, %d of %d agents' returns True: %s", what, r.jid, s.tag, s.result, s.trueRets, b.o.agents, s.comment)
			break
		}
	}
	_, js := b.seen.orchestration(r.jid)
	if len(js) != want {
		b.fail("%s (job %s): the watch saw %d step jobs, %d expected", what, r.jid, len(js), want)
	}
	for _, j := range js {
		if j.minions != b.o.agents || j.rets != b.o.agents || j.copies+j.notTrue > 0 {
			b.fail("%s (job %s): step job %s: %d minions targeted, %d returns stored (%d copies, %d not True), %d expected",
				what, r.jid, j.jid, j.minions, j.rets, j.copies, j.notTrue, b.o.agents)
			break
		}
	}
}

// clockAt places Salt's start_time (local clock time, microseconds) on
// the day of ref, the nearest such instant to it.
func clockAt(ref time.Time, clock string) (time.Time, error) {
	c, err := time.ParseInLocation("15:04:05.000000", clock, time.Local)
	if err != nil {
		return time.Time{}, err
	}
	day := ref.In(time.Local)
	t := time.Date(day.Year(), day.Month(), day.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), time.Local)
	switch {
	case t.Sub(ref) > 12*time.Hour:
		t = t.AddDate(0, 0, -1)
	case ref.Sub(t) > 12*time.Hour:
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

// Chain is orch.chain run several times.
type Chain struct {
	Steps   int    `json:"steps"`
	Agents  int    `json:"agents"`
	Command string `json:"command"`
	// WallSeconds is the CLI's wall time (the target on its median);
	// FirstWallSeconds the first run's. OrchestrationSeconds runs from
	// the runner job's start (its JID's time) to its ret event.
	WallSeconds          report.Summary `json:"wall_seconds"`
	FirstWallSeconds     float64        `json:"first_wall_seconds"`
	OrchestrationSeconds report.Summary `json:"orchestration_seconds"`
	// Per step, pooled over the runs (see the notes).
	StepOverheadMs        report.Dist `json:"step_overhead_ms"`
	StepPreMs             report.Dist `json:"step_pre_ms"`
	StepPostMs            report.Dist `json:"step_post_ms"`
	StepFanOutMs          report.Dist `json:"step_fan_out_ms"`
	StepDurationMs        report.Dist `json:"step_duration_ms"`
	GapMs                 report.Dist `json:"inter_step_gap_ms"`
	GapRecordMs           report.Dist `json:"gap_record_ms"`
	GapAfterProgMs        report.Dist `json:"gap_after_prog_ms"`
	StepOverheadWithGapMs report.Dist `json:"step_overhead_with_gap_ms"`
	// Per run: the runner job's start (its JID's time) → the first
	// step's start.
	RenderCompileMs report.Summary `json:"render_compile_ms"`
	MasterCPUMs     report.Summary `json:"master_cpu_ms"`
	Runs            []chainRun     `json:"runs"`
}

// chainRun is one run of the chain: where its wall time went. to_start +
// render_compile + steps_span + tail + ret_to_exit is the wall time, and
// steps_span is the sums of the fan-outs, overheads and gaps.
type chainRun struct {
	JID                  string      `json:"jid"`
	WallSeconds          float64     `json:"wall_seconds"`
	OrchestrationSeconds float64     `json:"orchestration_seconds"`
	Exit                 int         `json:"exit_status"`
	Steps                int         `json:"steps"`
	ToStartMs            float64     `json:"to_start_ms"`
	RenderCompileMs      float64     `json:"render_compile_ms"`
	StepsSpanMs          float64     `json:"steps_span_ms"`
	FanOutSumMs          float64     `json:"fan_out_sum_ms"`
	OverheadSumMs        float64     `json:"step_overhead_sum_ms"`
	GapSumMs             float64     `json:"inter_step_gap_sum_ms"`
	TailMs               float64     `json:"tail_ms"`
	RetToExitMs          float64     `json:"ret_to_exit_ms"`
	StepOverheadMs       report.Dist `json:"step_overhead_ms"`
	GapMs                report.Dist `json:"inter_step_gap_ms"`
	MasterCPUMs          float64     `json:"master_cpu_ms"`
	MasterCPUPerStepMs   float64     `json:"master_cpu_per_step_ms"`
	BenchCPUMs           float64     `json:"bench_cpu_ms"`
	CLICPUMs             float64     `json:"cli_cpu_ms"`
	// CPUBusyPercent is the master's, this process's and the CLI's CPU
	// over the run's wall time, as a share of every core of the machine.
	CPUBusyPercent float64 `json:"cpu_busy_percent_of_machine"`
}

// stepTimes are the per-step figures pooled over the runs.
type stepTimes struct {
	overhead, pre, post, fanOut, dur, gap, gapRecord, gapAfterProg, withGap []time.Duration
}

func (b *bench) chain(ctx context.Context) (Chain, error) {
	c := Chain{Steps: b.o.steps, Agents: b.o.agents, Command: "brine run -c <master dir> state.orchestrate orch.chain --json"}
	var all stepTimes
	var wall, orch, compile, cpu []float64
	for i := range b.o.reps {
		r, err := b.orchestrate(ctx, "orch.chain")
		if err != nil {
			return c, err
		}
		if err := masterproc.Poll(ctx, b.o.PhaseTimeout, 5*time.Millisecond, func() bool { return b.seen.complete(r.jid, b.o.steps, b.o.agents) }); err != nil {
			b.fail("chain run %d (job %s): the watch did not see every step's job, return and progress event: %v", i+1, r.jid, err)
		}
		b.check(fmt.Sprintf("chain run %d", i+1), r, b.o.steps)
		cr, st := b.chainFigures(r)
		c.Runs = append(c.Runs, cr)
		wall, orch, compile, cpu = append(wall, cr.WallSeconds), append(orch, cr.OrchestrationSeconds), append(compile, cr.RenderCompileMs), append(cpu, cr.MasterCPUMs)
		for _, x := range []struct{ to, from *[]time.Duration }{{&all.overhead, &st.overhead}, {&all.pre, &st.pre}, {&all.post, &st.post},
			{&all.fanOut, &st.fanOut}, {&all.dur, &st.dur}, {&all.gap, &st.gap}, {&all.gapRecord, &st.gapRecord},
			{&all.gapAfterProg, &st.gapAfterProg}, {&all.withGap, &st.withGap}} {
			*x.to = append(*x.to, *x.from...)
		}
		fmt.Fprintf(os.Stderr, "bench/orchestrate: chain run %d: %.3f s (compile %.1f ms, fan-out %.1f ms, overhead %.1f ms, gaps %.1f ms)\n",
			i+1, cr.WallSeconds, cr.RenderCompileMs, cr.FanOutSumMs, cr.OverheadSumMs, cr.GapSumMs)
		if err := b.settle(ctx, r.jid); err != nil {
			return c, err
		}
	}
	c.WallSeconds, c.FirstWallSeconds = report.Summarize(wall, 4), wall[0]
	c.OrchestrationSeconds, c.RenderCompileMs, c.MasterCPUMs = report.Summarize(orch, 4), report.Summarize(compile, 3), report.Summarize(cpu, 0)
	c.StepOverheadMs, c.StepPreMs, c.StepPostMs = report.DistOf(all.overhead), report.DistOf(all.pre), report.DistOf(all.post)
	c.StepFanOutMs, c.StepDurationMs = report.DistOf(all.fanOut), report.DistOf(all.dur)
	c.GapMs, c.GapRecordMs, c.GapAfterProgMs = report.DistOf(all.gap), report.DistOf(all.gapRecord), report.DistOf(all.gapAfterProg)
	c.StepOverheadWithGapMs = report.DistOf(all.withGap)
	return c, nil
}

// chainFigures pairs each step with its job (both in order) and takes
// the figures of the notes.
func (b *bench) chainFigures(r cliRun) (chainRun, stepTimes) {
	run, js := b.seen.orchestration(r.jid)
	start := runStart(r.jid, run)
	cr := chainRun{JID: r.jid, WallSeconds: report.Round(r.end.Sub(r.t0).Seconds(), 4), Exit: r.exit, Steps: len(r.steps),
		MasterCPUMs: r.masterCPU, BenchCPUMs: r.benchCPU, CLICPUMs: r.cliCPU}
	if wall := r.end.Sub(r.t0); wall > 0 {
		cr.CPUBusyPercent = report.Round(100*(r.masterCPU+r.benchCPU+r.cliCPU)/(msCPU(wall)*float64(runtime.NumCPU())), 1)
	}
	var st stepTimes
	if len(r.steps) == 0 || len(js) != len(r.steps) {
		return cr, st
	}
	cr.MasterCPUPerStepMs = report.Round(r.masterCPU/float64(len(r.steps)), 3)
	first, last := r.steps[0], r.steps[len(r.steps)-1]
	cr.OrchestrationSeconds = report.Round(run.retT.Sub(start).Seconds(), 4)
	cr.ToStartMs = ms(start.Sub(r.t0))
	cr.RenderCompileMs = ms(first.start.Sub(start))
	cr.StepsSpanMs = ms(last.end().Sub(first.start))
	cr.TailMs = ms(run.retT.Sub(last.end()))
	cr.RetToExitMs = ms(r.end.Sub(run.retT))
	var fanSum, overSum, gapSum time.Duration
	var over, gaps []time.Duration
	for i, s := range r.steps {
		j := js[i]
		// The job must be this step's: published inside it (1 µs of
		// rounding either way).
		if j.newT.Before(s.start.Add(-time.Microsecond)) || j.newT.After(s.end().Add(time.Microsecond)) || j.lastRet.IsZero() {
			b.fail("chain job %s: step %s (%s + %s) and its job %s (new %s, last return %s) do not nest",
				r.jid, s.tag, s.start.Format(time.StampMicro), s.dur, j.jid, j.newT.Local().Format(time.StampMicro), j.lastRet.Local().Format(time.StampMicro))
			return cr, stepTimes{}
		}
		fan := j.lastRet.Sub(j.newT)
		oh := s.dur - fan
		st.fanOut, st.dur, st.overhead = append(st.fanOut, fan), append(st.dur, s.dur), append(st.overhead, oh)
		st.pre, st.post = append(st.pre, j.newT.Sub(s.start)), append(st.post, s.end().Sub(j.lastRet))
		fanSum, overSum = fanSum+fan, overSum+oh
		over = append(over, oh)
		if i+1 < len(r.steps) {
			gap := r.steps[i+1].start.Sub(s.end())
			st.gap, st.withGap = append(st.gap, gap), append(st.withGap, oh+gap)
			gaps, gapSum = append(gaps, gap), gapSum+gap
			if p, ok := run.prog[s.runNum]; ok {
				st.gapRecord, st.gapAfterProg = append(st.gapRecord, p.Sub(s.end())), append(st.gapAfterProg, r.steps[i+1].start.Sub(p))
			}
		}
	}
	cr.FanOutSumMs, cr.OverheadSumMs, cr.GapSumMs = ms(fanSum), ms(overSum), ms(gapSum)
	cr.StepOverheadMs, cr.GapMs = report.DistOf(over), report.DistOf(gaps)
	return cr, st
}

// Branches is orch.branches or orch.branches_sleep run several times.
type Branches struct {
	Steps        int     `json:"steps"`
	Agents       int     `json:"agents"`
	Fun          string  `json:"fun"`
	SleepSeconds float64 `json:"sleep_seconds,omitempty"`
	Command      string  `json:"command"`
	// SerialSeconds is what the steps' sleeps alone would take one after
	// the other.
	SerialSeconds        float64        `json:"serial_seconds,omitempty"`
	WallSeconds          report.Summary `json:"wall_seconds"`
	OrchestrationSeconds report.Summary `json:"orchestration_seconds"`
	StepsSpanMs          report.Summary `json:"steps_span_ms"`
	StepDurationSumMs    report.Summary `json:"step_duration_sum_ms"`
	Overlap              report.Summary `json:"overlap"`
	MaxConcurrentMin     int            `json:"max_concurrent_min"`
	// StepDurationMs and JobFanOutMs (each step job's new event → its
	// last return) pool the runs' steps.
	StepDurationMs report.Dist `json:"step_duration_ms"`
	JobFanOutMs    report.Dist `json:"job_fan_out_ms"`
	Runs           []branchRun `json:"runs"`
}

// branchRun is one run of the branches.
type branchRun struct {
	JID                  string  `json:"jid"`
	WallSeconds          float64 `json:"wall_seconds"`
	OrchestrationSeconds float64 `json:"orchestration_seconds"`
	Exit                 int     `json:"exit_status"`
	Steps                int     `json:"steps"`
	StepsSpanMs          float64 `json:"steps_span_ms"`
	StepDurationSumMs    float64 `json:"step_duration_sum_ms"`
	Overlap              float64 `json:"overlap"`
	MaxConcurrent        int     `json:"max_concurrent"`
	// PublishSpreadMs is the first step job's new event → the last's:
	// how long the master took to publish every branch's job.
	PublishSpreadMs float64 `json:"publish_spread_ms"`
	MasterCPUMs     float64 `json:"master_cpu_ms"`
	BenchCPUMs      float64 `json:"bench_cpu_ms"`
}

func (b *bench) branches(ctx context.Context, mods, fun string, sleep float64) (Branches, error) {
	br := Branches{Steps: b.o.branches, Agents: b.o.agents, Fun: fun, SleepSeconds: sleep,
		Command: "brine run -c <master dir> state.orchestrate " + mods + " --json", MaxConcurrentMin: b.o.branches}
	if sleep > 0 {
		br.SerialSeconds = report.Round(sleep*float64(b.o.branches), 3)
	}
	var wall, orch, span, sum, overlap []float64
	var durs, fans []time.Duration
	for i := range b.o.reps {
		r, err := b.orchestrate(ctx, mods)
		if err != nil {
			return br, err
		}
		if err := masterproc.Poll(ctx, b.o.PhaseTimeout, 5*time.Millisecond, func() bool { return b.seen.complete(r.jid, b.o.branches, b.o.agents) }); err != nil {
			b.fail("%s run %d (job %s): the watch did not see every step's job, return and progress event: %v", mods, i+1, r.jid, err)
		}
		b.check(fmt.Sprintf("%s run %d", mods, i+1), r, b.o.branches)
		run, js := b.seen.orchestration(r.jid)
		x := branchRun{JID: r.jid, WallSeconds: report.Round(r.end.Sub(r.t0).Seconds(), 4), OrchestrationSeconds: report.Round(run.retT.Sub(runStart(r.jid, run)).Seconds(), 4),
			Exit: r.exit, Steps: len(r.steps), MasterCPUMs: r.masterCPU, BenchCPUMs: r.benchCPU}
		if len(r.steps) > 0 {
			var lo, hi time.Time
			var total time.Duration
			for k, s := range r.steps {
				if k == 0 || s.start.Before(lo) {
					lo = s.start
				}
				if s.end().After(hi) {
					hi = s.end()
				}
				total += s.dur
				durs = append(durs, s.dur)
			}
			x.StepsSpanMs, x.StepDurationSumMs = ms(hi.Sub(lo)), ms(total)
			if hi.After(lo) {
				x.Overlap = report.Round(float64(total)/float64(hi.Sub(lo)), 2)
			}
			x.MaxConcurrent = maxConcurrent(r.steps)
		}
		if len(js) > 0 {
			x.PublishSpreadMs = ms(js[len(js)-1].newT.Sub(js[0].newT))
		}
		for _, j := range js {
			if !j.lastRet.IsZero() {
				fans = append(fans, j.lastRet.Sub(j.newT))
			}
		}
		if x.MaxConcurrent < 2 {
			b.fail("%s run %d (job %s): the parallel steps did not overlap (at most %d at once)", mods, i+1, r.jid, x.MaxConcurrent)
		}
		br.Runs = append(br.Runs, x)
		br.MaxConcurrentMin = min(br.MaxConcurrentMin, x.MaxConcurrent)
		wall, orch, span, sum, overlap = append(wall, x.WallSeconds), append(orch, x.OrchestrationSeconds), append(span, x.StepsSpanMs), append(sum, x.StepDurationSumMs), append(overlap, x.Overlap)
		fmt.Fprintf(os.Stderr, "bench/orchestrate: %s run %d: %.3f s, steps span %.1f ms, sum %.1f ms, %d at once\n",
			mods, i+1, x.WallSeconds, x.StepsSpanMs, x.StepDurationSumMs, x.MaxConcurrent)
		if err := b.settle(ctx, r.jid); err != nil {
			return br, err
		}
	}
	br.WallSeconds, br.OrchestrationSeconds = report.Summarize(wall, 4), report.Summarize(orch, 4)
	br.StepsSpanMs, br.StepDurationSumMs, br.Overlap = report.Summarize(span, 3), report.Summarize(sum, 3), report.Summarize(overlap, 2)
	br.StepDurationMs, br.JobFanOutMs = report.DistOf(durs), report.DistOf(fans)
	return br, nil
}

// runStart is when the master started orchestration jid: its JID's time
// (taken as the runner job is made, before the function is called). The
// new event is no reference for it: it is fired beside the function, and
// may be stamped after the compile began.
func runStart(jid string, run runSeen) time.Time {
	if t, err := jobs.JIDTime(jid); err == nil {
		return t
	}
	return run.newT
}

// maxConcurrent is the most steps running at one instant: a sweep over
// their [start, end] intervals (an end at the instant another starts
// counts as before it).
func maxConcurrent(steps []step) int {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(steps))
	for _, s := range steps {
		edges = append(edges, edge{s.start, 1}, edge{s.end(), -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

func msCPU(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
