package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// workload is the bounded load the suite runs while faults are injected:
// events (half of them matched by a reaction), remote jobs, cloud creates
// and destroys on the simulator, and orchestrations, each sent to a master
// picked at random. It records what was acknowledged, to be checked at the
// end.
type workload struct {
	w   *world
	rng *rand.Rand
	// ctx ends the operations in flight (the run was interrupted); the
	// load's own end lets them finish.
	ctx context.Context
	mu  sync.Mutex

	acked    []ackedEvent // events whose send was acknowledged
	refused  int          // sends that failed (not acknowledged)
	jobs     int          // exec runs started
	jobFails int          // exec runs that exited non-zero
	creates  int
	destroys int
	cloudErr int
	orchs    int
	exists   map[string]bool // VMs believed to exist (the last successful op)
}

type ackedEvent struct {
	ID, Tag string
	Matched bool
	At      time.Time
}

func newWorkload(ctx context.Context, w *world, seed uint64) *workload {
	return &workload{w: w, ctx: ctx, rng: rand.New(rand.NewPCG(seed, 2)), exists: map[string]bool{}}
}

func (l *workload) pick() *master {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.masters[l.rng.IntN(len(l.w.masters))]
}

// run drives the load until ctx ends, then waits for what is in flight.
func (l *workload) run(ctx context.Context) {
	var wg sync.WaitGroup
	var n int64
	var nmu sync.Mutex
	next := func() int64 {
		nmu.Lock()
		defer nmu.Unlock()
		n++
		return n
	}
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				l.event(next())
				sleep(ctx, 200*time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for k := 1; ctx.Err() == nil; k++ {
			l.job(k)
			sleep(ctx, 2*time.Second)
		}
	})
	wg.Go(func() {
		for ctx.Err() == nil {
			l.cloud()
			sleep(ctx, 4*time.Second)
		}
	})
	wg.Go(func() {
		sleep(ctx, 10*time.Second)
		for ctx.Err() == nil {
			wg.Go(l.orchestrate)
			sleep(ctx, l.w.cfg.orchEvery)
		}
	})
	wg.Wait()
}

// event sends one event; it counts as acknowledged only when the CLI
// printed its id and exited 0.
func (l *workload) event(n int64) {
	matched := n%2 == 0
	tag := fmt.Sprintf("chaos/plain/%d", n)
	if matched {
		tag = fmt.Sprintf("chaos/react/%d", n)
	}
	m := l.pick()
	out, _, err := l.w.brine(l.ctx, m, 30*time.Second, "event", "send", tag, fmt.Sprintf(`{"n": %d}`, n), "--timeout", "10s")
	l.mu.Lock()
	defer l.mu.Unlock()
	id := strings.TrimSpace(out)
	if err != nil || id == "" {
		l.refused++
		return
	}
	l.acked = append(l.acked, ackedEvent{ID: id, Tag: tag, Matched: matched, At: time.Now()})
}

// job runs `brine exec '*' test.arg chaos-job-K` (found again in the log
// by its argument).
func (l *workload) job(k int) {
	m := l.pick()
	_, _, err := l.w.brine(l.ctx, m, 90*time.Second, "exec", "*", "test.arg", fmt.Sprintf("chaos-job-%d", k), "--json", "-t", "10")
	l.mu.Lock()
	defer l.mu.Unlock()
	l.jobs++
	if err != nil {
		l.jobFails++
	}
}

// cloud creates or destroys one of six VMs.
func (l *workload) cloud() {
	l.mu.Lock()
	vm := fmt.Sprintf("vm%02d", 1+l.rng.IntN(6))
	destroy := l.exists[vm]
	l.mu.Unlock()
	m := l.pick()
	args := []string{"cloud", "-p", "chaos", vm}
	if destroy {
		args = []string{"cloud", "-d", vm, "-y"}
	}
	_, errs, err := l.w.brine(l.ctx, m, 2*time.Minute, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		l.cloudErr++
		l.w.logf("cloud %s via %s: %v: %s", strings.Join(args[1:], " "), m.id, err, lastLine(errs))
	case destroy:
		l.destroys++
		delete(l.exists, vm)
	default:
		l.creates++
		l.exists[vm] = true
	}
}

// orchestrate runs orch.chaos (its master may die under it: another
// resumes it).
func (l *workload) orchestrate() {
	m := l.pick()
	l.mu.Lock()
	l.orchs++
	l.mu.Unlock()
	_, errs, err := l.w.brine(l.ctx, m, 3*time.Minute, "run", "state.orchestrate", "orch.chaos", "--json")
	if err != nil {
		l.w.logf("orchestration via %s: %v: %s", m.id, err, lastLine(errs))
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
