package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/modules"
)

// runFig is one state run (or show_lowstate) and what its return says.
type runFig struct {
	// Via is "cli" (`brine exec` through the master) or "function" (the
	// agent's state function called in this process).
	Via string `json:"via"`
	// WallMs is the CLI's wall time from exec to exit, or the function
	// call's.
	WallMs float64 `json:"wall_ms"`
	// StatesSpanMs runs from the first state's start to the last state's
	// end (start_time + duration in the return); StatesSumMs is the sum
	// of the states' durations.
	StatesSpanMs float64 `json:"states_span_ms,omitempty"`
	StatesSumMs  float64 `json:"states_duration_sum_ms,omitempty"`
	// States is the results (or low chunks) returned, ResultTrue those
	// whose result is True, Changed those with changes.
	States     int `json:"states"`
	ResultTrue int `json:"result_true,omitempty"`
	Changed    int `json:"changed,omitempty"`
	Exit       int `json:"exit_status"`
	// ReturnKiB is the CLI's JSON output (the whole return).
	ReturnKiB float64 `json:"return_kib,omitempty"`
	// FSCreateMs is probeCreate's time for as many files as the tree
	// manages, on the target's filesystem just before a first run.
	FSCreateMs float64 `json:"fs_create_probe_ms,omitempty"`
	// CPU over the call: the master process's, this process's (the agent,
	// and the engine), the CLI process's.
	MasterCPUMs float64 `json:"master_cpu_ms"`
	BenchCPUMs  float64 `json:"bench_cpu_ms"`
	CLICPUMs    float64 `json:"cli_cpu_ms,omitempty"`
}

// cli runs `brine exec <agent> fun key=value… --json` (each value as
// JSON, which the CLI reads as YAML) and returns the agent's return.
func (b *bench) cli(ctx context.Context, fun string, kwargs map[string]any) (runFig, any, error) {
	f := runFig{Via: "cli"}
	args := []string{"-t", fmt.Sprint(int(b.o.PhaseTimeout.Seconds())), b.agent.ID(), fun}
	for k, v := range kwargs {
		j, err := json.Marshal(v)
		if err != nil {
			return f, nil, err
		}
		args = append(args, k+"="+string(j))
	}
	c, err := b.m.CLI(ctx, "exec", append(args, "--json")...)
	if err != nil {
		return f, nil, fmt.Errorf("%s: %w", fun, err)
	}
	f.WallMs = ms(c.Wall())
	f.MasterCPUMs, f.BenchCPUMs, f.CLICPUMs = msCPU(c.MasterCPU), msCPU(c.BenchCPU), msCPU(c.CLICPU)
	f.Exit = c.Exit
	stdout, stderr := &c.Stdout, &c.Stderr
	f.ReturnKiB = report.Round(float64(stdout.Len())/1024, 1)
	var rets map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &rets); err != nil {
		return f, nil, fmt.Errorf("brine exec %s (exit %d): its JSON output: %w: %q; stderr: %s", fun, f.Exit, err, report.Clip(stdout.Bytes(), 300), report.Clip(stderr.Bytes(), 300))
	}
	ret, ok := rets[b.agent.ID()]
	if !ok {
		return f, nil, fmt.Errorf("brine exec %s (exit %d): no return from %s; stderr: %s", fun, f.Exit, b.agent.ID(), report.Clip(stderr.Bytes(), 300))
	}
	return f, ret, nil
}

// function calls the agent's state function fun in this process, as a
// job would run it but without the master's publish and return: the
// pillar refresh, the top file and SLS files fetched through the master's
// file server, the compile and the run.
func (b *bench) function(ctx context.Context, fun string, kwargs map[string]any) (runFig, any, error) {
	f := runFig{Via: "function"}
	rctx, rc := modules.WithRetcode(ctx)
	m0, s0 := report.ProcCPU(b.m.PID()), report.ProcCPU(0)
	t0 := time.Now()
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	v, err := b.agent.Functions().Call(rctx, fun, nil, kwargs, nil)
	f.WallMs = ms(time.Since(t0))
	f.MasterCPUMs = msCPU(report.ProcCPU(b.m.PID()) - m0)
	f.BenchCPUMs = msCPU(report.ProcCPU(0) - s0)
	f.Exit = int(rc.Load())
	if err != nil {
		return f, nil, fmt.Errorf("%s: %w", fun, err)
	}
	// Through JSON, as the CLI's return arrives: the same analysis reads
	// both.
	raw, err := json.Marshal(v)
	if err != nil {
		return f, nil, err
	}
	var ret any
	err = json.Unmarshal(raw, &ret)
	return f, ret, err
}

// highstate reads a state return: every result's outcome and the span of
// the states' times. want is "changed" (the first run: every state True
// with changes) or "unchanged" (every state True, no changes); what
// differs is returned as a problem.
func highstate(f *runFig, ret any, want string, states int) (problem string) {
	m, ok := ret.(map[string]any)
	if !ok {
		return fmt.Sprintf("the return is not a state return: %s", clipAny(ret))
	}
	f.States = len(m)
	var first, last time.Duration
	seen := false
	var bad []string
	for tag, v := range m {
		res, _ := v.(map[string]any)
		if res["result"] == true {
			f.ResultTrue++
		} else if len(bad) < 3 {
			bad = append(bad, fmt.Sprintf("%s: result %v: %v", tag, res["result"], res["comment"]))
		}
		if ch, _ := res["changes"].(map[string]any); len(ch) > 0 {
			f.Changed++
		}
		start, err := time.Parse("15:04:05.000000", fmt.Sprint(res["start_time"]))
		dur, ok := res["duration"].(float64)
		if err != nil || !ok {
			if len(bad) < 3 {
				bad = append(bad, fmt.Sprintf("%s: start_time %v duration %v", tag, res["start_time"], res["duration"]))
			}
			continue
		}
		s := start.Sub(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))
		d := time.Duration(dur * float64(time.Millisecond))
		f.StatesSumMs += dur
		if !seen || s < first {
			first, seen = s, true
		}
		last = max(last, s+d)
	}
	// A run across midnight starts late in the day and ends early.
	if last < first {
		last += 24 * time.Hour
	}
	f.StatesSpanMs = ms(last - first)
	f.StatesSumMs = report.Round(f.StatesSumMs, 3)
	switch {
	case len(bad) > 0:
		return fmt.Sprintf("%d of %d states not True, e.g. %s", f.States-f.ResultTrue, f.States, strings.Join(bad, "; "))
	case f.States != states:
		return fmt.Sprintf("%d states returned, %d expected", f.States, states)
	case want == "changed" && f.Changed != states:
		return fmt.Sprintf("first run: %d of %d states changed, all expected to", f.Changed, states)
	case want == "unchanged" && f.Changed != 0:
		return fmt.Sprintf("second run: %d of %d states reported changes, none expected", f.Changed, states)
	}
	return ""
}

// lowstate reads show_lowstate's return: the low chunks.
func lowstate(f *runFig, ret any, states int) string {
	list, ok := ret.([]any)
	if !ok {
		return fmt.Sprintf("show_lowstate returned %s, not a list of low chunks", clipAny(ret))
	}
	f.States = len(list)
	if f.States != states {
		return fmt.Sprintf("show_lowstate: %d low chunks, %d expected", f.States, states)
	}
	return ""
}

// checkFiles reads every managed file under dir after a first run: each
// must hold what its template, the pillar and the grains make of it.
func checkFiles(t Tree, dir, id string) error {
	for i := range t.SLSFiles {
		sls := slsName(i)
		for j := range t.StatesPerSLS {
			p := filepath.Join(dir, sls, fmt.Sprintf("f%d.conf", j))
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			want := []string{fmt.Sprintf("# %s file %d of brine-bench, written for %s\n", sls, j, id),
				fmt.Sprintf("listen = %d\n", 8000+j), "env = bench\n"}
			if j%2 == 0 {
				want = append(want, "log_level = info\ntimeout = 30\nworkers = 4")
			} else {
				want = append(want, "host = "+id)
			}
			for _, w := range want {
				if !bytes.Contains(b, []byte(w)) {
					return fmt.Errorf("%s does not hold %q:\n%s", p, w, b)
				}
			}
		}
	}
	return nil
}

// clean removes the managed files under dir, so that the next run is a
// first run, and syncs, so that the removal's writes are not the run's.
func clean(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	syscall.Sync()
	return nil
}

// probeCreate times creating n small files (open O_CREAT|O_EXCL, write 30
// bytes, close: no fsync) in a new directory under dir, the file creation
// a first run does n times; the files are removed afterwards. On this
// machine's ext4 root the kernel's time for a create varies tenfold from
// one minute to the next, and the first run's figure with it.
func probeCreate(dir string, n int) (float64, error) {
	d, err := os.MkdirTemp(dir, "create-probe-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(d)
	data := []byte("listen = 8000\nenv = bench\nhost = x\n")
	t0 := time.Now()
	for i := range n {
		f, err := os.OpenFile(filepath.Join(d, fmt.Sprintf("f%d.conf", i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return 0, err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, err
		}
	}
	return ms(time.Since(t0)), nil
}

func msCPU(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func clipAny(v any) string {
	b, _ := json.Marshal(v)
	return report.Clip(b, 300)
}
