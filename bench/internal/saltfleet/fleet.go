// Package saltfleet is a protocol-level fleet of salt-minions for the
// benchmarks (bench/saltminions): each simulated minion has its own RSA
// key (2048 bits, as Salt's keysize), signs in with Salt 3006's _auth
// (saltproto's minion side, which mirrors salt.crypt.AsyncAuth), keeps its
// session Crypticle, listens on a SUB to the publish port for signed
// publishes and returns jobs meant for it with an encrypted _return on its
// REQ, over Salt's ZeroMQ framing (saltzmq's clients).
//
// Why not run salt-minion itself: a thousand Python minions need tens of
// GiB and would measure Python, not the master. What a master sees of
// this fleet is what it sees of real minions, byte for byte where
// saltproto's differential tests hold it to Salt's Python: connections,
// handshakes, sign-ins, publishes, returns; the modules a minion runs are
// left out (test.ping returns True).
package saltfleet

import (
	"context"
	"maps"
	"net"
	"sync"
	"time"

	"github.com/brinehq/brine/bench/internal/runner"
)

// StopTimeout is how long Stop waits for the minions to return once
// their context ended.
const StopTimeout = runner.StopTimeout

// Fleet is minions in one process, sharing a Config, with the returns of
// their jobs tallied by jid.
type Fleet struct {
	Minions []*Minion
	cfg     *Config

	mu      sync.Mutex
	returns map[string]*Returns

	run runner.Group
}

// Returns are a job's publish and returns as the minions saw them.
type Returns struct {
	// Received is when each minion the job was for decoded it, by id.
	Received map[string]time.Time
	// OK counts returns the master answered; Failed those given up on.
	OK, Failed int
	// Last is when the last answered return was answered.
	Last time.Time
	// At is each answered return's time, by minion id.
	At map[string]time.Time
}

// New makes a minion of keys[i] with id id(i) for each key; cfg's
// OnReturn is taken over by the fleet's tally (and called after it).
func New(cfg Config, keys []KeyPair, id func(i int) string) (*Fleet, error) {
	cfg.setDefaults()
	f := &Fleet{cfg: &cfg, returns: map[string]*Returns{}}
	cfg.onJob = f.received
	next := cfg.OnReturn
	cfg.OnReturn = func(mid, jid string, at time.Time, err error) {
		f.tally(mid, jid, at, err)
		if next != nil {
			next(mid, jid, at, err)
		}
	}
	for i, k := range keys {
		var local net.IP
		if cfg.LocalIP != nil {
			local = cfg.LocalIP(i)
		}
		m, err := NewMinion(id(i), k, local, f.cfg)
		if err != nil {
			return nil, err
		}
		f.Minions = append(f.Minions, m)
	}
	return f, nil
}

// job is jid's tally, made on first use; f.mu is held.
func (f *Fleet) job(jid string) *Returns {
	r := f.returns[jid]
	if r == nil {
		r = &Returns{At: map[string]time.Time{}, Received: map[string]time.Time{}}
		f.returns[jid] = r
	}
	return r
}

func (f *Fleet) received(id, jid string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.job(jid).Received[id] = at
}

func (f *Fleet) tally(id, jid string, at time.Time, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.job(jid)
	if err != nil {
		r.Failed++
		return
	}
	r.OK++
	r.At[id] = at
	if at.After(r.Last) {
		r.Last = at
	}
}

// Returns is a copy of job jid's tally so far.
func (f *Fleet) Returns(jid string) Returns {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.returns[jid]
	if r == nil {
		return Returns{}
	}
	c := *r
	c.At = maps.Clone(r.At)
	c.Received = maps.Clone(r.Received)
	return c
}

// Jobs is the jids the fleet returned (or failed to return) so far.
func (f *Fleet) Jobs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.returns))
	for jid := range f.returns {
		out = append(out, jid)
	}
	return out
}

// Start runs every minion until ctx ends or Stop is called; it is called
// once.
func (f *Fleet) Start(ctx context.Context) {
	f.run.Start(ctx, len(f.Minions), func(ctx context.Context, i int) error { return f.Minions[i].Run(ctx) })
}

// Stop ends the minions and reports whether they all returned within
// StopTimeout. It may be called again, and before Start.
func (f *Fleet) Stop() bool {
	return f.run.Stop()
}

// Err is the first minion whose Run ended with an error (its key
// rejected), once stopped.
func (f *Fleet) Err() (int, error) {
	return f.run.Err()
}

// Accepted is how many minions have been accepted (a session key
// received) so far.
func (f *Fleet) Accepted() int {
	n := 0
	for _, m := range f.Minions {
		if !m.AcceptedAt().IsZero() {
			n++
		}
	}
	return n
}

// Subscribed is how many minions' SUBs are connected now.
func (f *Fleet) Subscribed() int {
	n := 0
	for _, m := range f.Minions {
		if m.Subscribed() {
			n++
		}
	}
	return n
}

// Counts sums the minions' counters.
func (f *Fleet) Counts() Counts {
	var c Counts
	for _, m := range f.Minions {
		mc := m.Counts()
		c.SignIns += mc.SignIns
		c.Pending += mc.Pending
		c.Jobs += mc.Jobs
		c.Returned += mc.Returned
		c.Failed += mc.Failed
		c.ReqReconnects += mc.ReqReconnects
		c.SubReconnects += mc.SubReconnects
		c.LateReplies += mc.LateReplies
	}
	return c
}
