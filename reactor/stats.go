package reactor

import "sync/atomic"

// Stats counts what the reactor did since it started; /metrics exports it.
type Stats struct {
	Events       atomic.Uint64 // events that matched the mapping
	Reactions    atomic.Uint64 // reaction runs started (jobs)
	Succeeded    atomic.Uint64
	Failed       atomic.Uint64 // runs that failed after their last attempt
	Retries      atomic.Uint64
	DeadLettered atomic.Uint64
	Skipped      atomic.Uint64 // not run because of require/onfail
	Errors       atomic.Uint64 // brine/reactor/error events fired
	LoopsCut     atomic.Uint64 // brine/reactor/loop events fired
}

// Snapshot returns the counters by name.
func (s *Stats) Snapshot() map[string]uint64 {
	return map[string]uint64{
		"events": s.Events.Load(), "reactions": s.Reactions.Load(), "succeeded": s.Succeeded.Load(),
		"failed": s.Failed.Load(), "retries": s.Retries.Load(), "dead_lettered": s.DeadLettered.Load(),
		"skipped": s.Skipped.Load(), "errors": s.Errors.Load(), "loops_cut": s.LoopsCut.Load(),
	}
}

// Stats returns the reactor's counters.
func (r *Reactor) Stats() *Stats { return &r.stats }
