// Package runner runs a benchmark fleet's members — agents
// (bench/internal/fleet), salt-minions (bench/internal/saltfleet) — each
// in a goroutine of its own until their context ends, and stops them with
// a bound on how long that may take: a member that does not return is the
// benchmark's failure to report, not a hang of the benchmark.
package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// StopTimeout is how long Stop waits for the members to return once
// their context ended.
const StopTimeout = 30 * time.Second

// Group is members run together. Its zero value is ready to Start.
type Group struct {
	wg     sync.WaitGroup
	errs   []error
	cancel context.CancelFunc
	stop   func() bool
}

// Start runs run(ctx, i) for every i below n, each in a goroutine, until
// ctx ends or Stop is called. It is called once.
func (g *Group) Start(ctx context.Context, n int, run func(ctx context.Context, i int) error) {
	ctx, g.cancel = context.WithCancel(ctx)
	g.errs = make([]error, n)
	for i := range n {
		g.wg.Go(func() { g.errs[i] = run(ctx, i) })
	}
	g.stop = sync.OnceValue(func() bool {
		g.cancel()
		done := make(chan struct{})
		go func() {
			g.wg.Wait()
			close(done)
		}()
		select {
		case <-done:
			return true
		case <-time.After(StopTimeout):
			return false
		}
	})
}

// Stop ends the members and reports whether they all returned within
// StopTimeout. It may be called again (a deferred call after the
// benchmark's own), and before Start.
func (g *Group) Stop() bool {
	if g.stop == nil {
		return true
	}
	return g.stop()
}

// Err is the first member whose run returned an error, once stopped; the
// group's own stop (context.Canceled) is no error.
func (g *Group) Err() (int, error) {
	for i, e := range g.errs {
		if e != nil && !errors.Is(e, context.Canceled) {
			return i, e
		}
	}
	return -1, nil
}

// Each calls do(i) for every i below n, workers at a time, and returns
// the first error: a fleet's thousand key pairs or agents are made before
// anything is measured, on every core. A worker whose do failed takes no
// further i; the others finish theirs.
func Each(workers, n int, do func(i int) error) error {
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
