package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
)

// fault is one injected failure, as the report lists it.
type fault struct {
	at      time.Time
	At      string  `json:"at"` // seconds since the faults began
	Kind    string  `json:"kind"`
	Target  string  `json:"target"`
	Seconds float64 `json:"seconds"` // how long it lasted
	// Failover: for a master fault, how long each of its failover agents
	// took to be accepted by a master again (seconds): another one, or
	// for those in Back the same one, back first (restarted, continued or
	// healed before the others would take the agent).
	Failover map[string]float64 `json:"failover,omitempty"`
	Back     []string           `json:"back_on_the_same_master,omitempty"`
	// CutShort: the load ended during the fault, which was healed at
	// once; an agent that saw too short a fault to fail over is not
	// waited for.
	CutShort bool `json:"cut_short,omitempty"`
}

// injector runs the seeded schedule: one fault at a time, each after a
// pause drawn from [min, max], one master at most down at once so that
// the cluster keeps its quorum (a fault that took it would be refused
// writes, which the suite checks apart).
type injector struct {
	w     *world
	rng   *rand.Rand
	start time.Time

	mu     sync.Mutex
	faults []*fault
	wg     sync.WaitGroup // failover measurements in progress
	// down are the processes a fault holds down; any other found not
	// running exited on its own: a violation, and it is started again
	// (as systemd would) so that the run goes on.
	down      map[*proc]bool
	selfExits []string
}

func newInjector(w *world, seed uint64) *injector {
	return &injector{w: w, rng: rand.New(rand.NewPCG(seed, 1)), down: map[*proc]bool{}}
}

func (f *injector) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(f.rng.Int64N(int64(hi-lo)+1))
}

func (f *injector) run(ctx context.Context) {
	f.start = time.Now()
	kinds := []string{"kill", "stop", "partition", "agents"}
	for {
		sleep(ctx, f.between(f.w.cfg.faultMin, f.w.cfg.faultMax))
		if ctx.Err() != nil {
			return
		}
		// Every master serves again before the next fault.
		for _, m := range f.w.masters {
			if err := f.w.waitMaster(ctx, m, 2*time.Minute); err != nil && ctx.Err() == nil {
				f.w.logf("before the next fault: %v", err)
			}
		}
		kind := kinds[f.rng.IntN(len(kinds))]
		m := f.w.masters[f.rng.IntN(len(f.w.masters))]
		ft := &fault{at: time.Now(), At: fmt.Sprintf("%.1f", time.Since(f.start).Seconds()), Kind: kind, Target: m.id}
		began := time.Now()
		switch kind {
		case "kill":
			f.measureFailover(m, ft)
			f.hold(m.proc, true)
			m.proc.kill()
			f.w.logf("fault: SIGKILL %s", m.id)
			sleep(ctx, f.between(2*time.Second, 6*time.Second))
			if err := m.proc.start(); err != nil {
				f.w.logf("restart %s: %v", m.id, err)
			}
			f.hold(m.proc, false)
		case "stop":
			f.measureFailover(m, ft)
			m.proc.signal(syscall.SIGSTOP)
			f.w.logf("fault: SIGSTOP %s", m.id)
			sleep(ctx, leaseTTL+f.between(2*time.Second, 5*time.Second))
			m.proc.signal(syscall.SIGCONT)
		case "partition":
			f.measureFailover(m, ft)
			if err := setLink(m.i, false); err != nil {
				f.w.logf("%v", err)
			}
			f.w.logf("fault: link of %s down", m.id)
			sleep(ctx, f.between(8*time.Second, 15*time.Second))
			if err := setLink(m.i, true); err != nil {
				f.w.logf("%v", err)
			}
		case "agents":
			n := 1 + f.rng.IntN(3)
			perm := f.rng.Perm(len(f.w.agents))[:n]
			slices.Sort(perm)
			ft.Target = ""
			for _, k := range perm {
				a := f.w.agents[k]
				f.hold(a.proc, true)
				a.proc.kill()
				ft.Target += a.id + " "
			}
			f.w.logf("fault: SIGKILL agents %s", ft.Target)
			sleep(ctx, f.between(time.Second, 4*time.Second))
			for _, k := range perm {
				if err := f.w.agents[k].proc.start(); err != nil {
					f.w.logf("restart agent: %v", err)
				}
				f.hold(f.w.agents[k].proc, false)
			}
		}
		ft.Seconds = report.Round(time.Since(began).Seconds(), 3)
		f.mu.Lock()
		ft.CutShort = ctx.Err() != nil
		f.faults = append(f.faults, ft)
		f.mu.Unlock()
	}
}

// measureFailover times how long each failover agent connected to m
// takes to be accepted by a master again (at most a minute).
func (f *injector) measureFailover(m *master, ft *fault) {
	ft.Failover = map[string]float64{}
	var on []*agent
	for _, a := range f.w.agents {
		if a.failover && a.proc.running() && a.connectedTo() == masterAddr(m.i) {
			on = append(on, a)
		}
	}
	began := time.Now()
	for _, a := range on {
		f.wg.Go(func() {
			for time.Since(began) < time.Minute {
				f.mu.Lock()
				cut := ft.CutShort
				f.mu.Unlock()
				if cut {
					return
				}
				if at, addr, ok := a.acceptedAfter(began); ok {
					f.mu.Lock()
					ft.Failover[a.id] = report.Round(at.Sub(began).Seconds(), 3)
					if addr == masterAddr(m.i) {
						ft.Back = append(ft.Back, a.id)
					}
					f.mu.Unlock()
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
			f.mu.Lock()
			ft.Failover[a.id] = -1 // not within a minute
			f.mu.Unlock()
		})
	}
}

// heal ends every fault: masters continued, links up, every process
// running.
func (f *injector) heal() {
	for _, m := range f.w.masters {
		m.proc.signal(syscall.SIGCONT)
		_ = setLink(m.i, true)
		if !m.proc.running() {
			_ = m.proc.start()
		}
	}
	for _, a := range f.w.agents {
		if !a.proc.running() {
			_ = a.proc.start()
		}
	}
	f.wg.Wait()
}

// hold marks p as down by a fault (or no longer).
func (f *injector) hold(p *proc, down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if down {
		f.down[p] = true
	} else {
		delete(f.down, p)
	}
}

// watch starts again, every half second, a master or agent that exited
// without a fault holding it down, and records it, until ctx ends.
func (f *injector) watch(ctx context.Context) {
	var ps []*proc
	for _, m := range f.w.masters {
		ps = append(ps, m.proc)
	}
	for _, a := range f.w.agents {
		ps = append(ps, a.proc)
	}
	for ctx.Err() == nil {
		sleep(ctx, 500*time.Millisecond)
		for _, p := range ps {
			f.mu.Lock()
			held := f.down[p]
			f.mu.Unlock()
			if held || p.running() || ctx.Err() != nil {
				continue
			}
			msg := fmt.Sprintf("%s exited on its own at %s: %s", p.name, time.Now().Format("15:04:05"), lastLine(masterproc.Tail(p.logPath, 1)))
			f.w.logf("%s; starting it again", msg)
			f.mu.Lock()
			f.selfExits = append(f.selfExits, msg)
			f.mu.Unlock()
			_ = p.start()
		}
	}
}
