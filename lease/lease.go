// Package lease gives work that must have a single writer among several
// masters — the DDNS zone sync, an orchestration run, the cloud runner —
// to one master at a time, and to another when that one dies.
//
// A lease is a key in a key-value bucket whose entries expire TTL after
// their last write (the bucket's own TTL, kept by the NATS cluster, so no
// master's clock is involved). The holder rewrites its key every TTL/3; a
// master that cannot (it died, hangs, or lost its link to the quorum) loses
// the lease at the latest TTL after its last rewrite, and the work it did
// under it is cancelled (Lease.Context) once it notices, so that when
// another master takes over, the first does not carry on beside it.
//
// brine grows no consensus of its own: the compare-and-set of the key on
// the JetStream cluster is the only arbiter.
package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/brinehq/brine/bus"
)

// DefaultTTL is how long a lease outlives its holder's last renewal: a
// master that died is replaced within it (plus a poll, DefaultTTL/5).
const DefaultTTL = 10 * time.Second

// BucketName is the key-value bucket of the leases.
const BucketName = "brine_leases"

// BucketConfig is the leases' bucket for ttl (DefaultTTL when 0).
func BucketConfig(ttl time.Duration) bus.BucketConfig {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return bus.BucketConfig{Name: BucketName, Description: "brine: single-writer leases of the masters", TTL: ttl, History: 1}
}

// Holder is who holds a lease: a master's id, and the run of that master
// (a restarted master is a new incarnation and takes its old leases over).
type Holder struct {
	Master      string    `json:"master"`
	Incarnation string    `json:"incarnation"`
	Since       time.Time `json:"since"`
}

// ErrHeld: another master holds the lease.
type ErrHeld struct {
	Name   string
	Holder Holder
}

func (e *ErrHeld) Error() string {
	return fmt.Sprintf("lease %s is held by master %s since %s", e.Name, e.Holder.Master, e.Holder.Since.Format(time.RFC3339))
}

// Store acquires and renews the leases of one master.
type Store struct {
	kv   bus.Bucket
	me   Holder
	ttl  time.Duration
	poll time.Duration

	mu   sync.Mutex
	held map[string]*Lease
}

// New is the lease store of master over kv (a bucket of BucketConfig(ttl)).
func New(kv bus.Bucket, master string, ttl time.Duration) *Store {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Store{kv: kv, ttl: ttl, poll: ttl / 5, held: map[string]*Lease{},
		me: Holder{Master: master, Incarnation: uuid.NewString(), Since: time.Now().UTC()}}
}

// TTL is the leases' time to live.
func (s *Store) TTL() time.Duration { return s.ttl }

// Lease is a held lease; several users of the same master share it.
type Lease struct {
	s    *Store
	name string
	ctx  context.Context
	lose context.CancelCauseFunc
	rev  uint64
	refs int
	done chan struct{}
}

// Context ends when the lease is lost or released: work done under the
// lease runs under it.
func (l *Lease) Context() context.Context { return l.ctx }

// ErrLost is the cause of a lease's context when it was lost.
var ErrLost = errors.New("lease lost")

// Acquire takes lease name for this master, or shares it if this master
// holds it already; *ErrHeld when another master does. The lease is
// renewed until every Release (or ctx's end).
func (s *Store) Acquire(ctx context.Context, name string) (*Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.held[name]; l != nil && l.ctx.Err() == nil {
		l.refs++
		return l, nil
	}
	val, err := json.Marshal(s.me)
	if err != nil {
		return nil, err
	}
	rev, err := s.kv.Create(ctx, name, val)
	if errors.Is(err, bus.ErrKeyChanged) {
		rev, err = s.takeOver(ctx, name, val)
	}
	if err != nil {
		return nil, err
	}
	l := &Lease{s: s, name: name, rev: rev, refs: 1, done: make(chan struct{})}
	l.ctx, l.lose = context.WithCancelCause(context.WithoutCancel(ctx))
	s.held[name] = l
	go l.renew(val)
	return l, nil
}

// takeOver takes a lease its key says is held: only from an earlier run of
// this same master (it restarted before the lease ran out).
func (s *Store) takeOver(ctx context.Context, name string, val []byte) (uint64, error) {
	e, err := s.kv.Get(ctx, name)
	if errors.Is(err, bus.ErrKeyNotFound) {
		return s.kv.Create(ctx, name, val) // it expired meanwhile
	}
	if err != nil {
		return 0, err
	}
	var h Holder
	if err := json.Unmarshal(e.Value, &h); err != nil {
		return 0, fmt.Errorf("lease %s: %w", name, err)
	}
	if h.Master == s.me.Master && h.Incarnation == s.me.Incarnation {
		// Our own create, stored though its answer was lost.
		return e.Revision, nil
	}
	if h.Master != s.me.Master {
		return 0, &ErrHeld{Name: name, Holder: h}
	}
	return s.kv.Update(ctx, name, val, e.Revision)
}

// renew rewrites the key every TTL/3 until released; a rewrite refused
// (someone else's key) or impossible for a whole TTL loses the lease.
func (l *Lease) renew(val []byte) {
	defer close(l.done)
	every := l.s.ttl / 3
	t := time.NewTicker(every)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(l.ctx, every)
		rev, err := l.s.kv.Update(ctx, l.name, val, l.rev)
		cancel()
		switch {
		case err == nil:
			l.s.mu.Lock()
			l.rev = rev
			l.s.mu.Unlock()
			last = time.Now()
		case errors.Is(err, bus.ErrKeyChanged), errors.Is(err, bus.ErrKeyNotFound), time.Since(last) >= l.s.ttl:
			l.s.drop(l, fmt.Errorf("%w: %s: %w", ErrLost, l.name, err))
			return
		}
	}
}

// drop forgets l and cancels its context with cause.
func (s *Store) drop(l *Lease, cause error) {
	s.mu.Lock()
	if s.held[l.name] == l {
		delete(s.held, l.name)
	}
	s.mu.Unlock()
	l.lose(cause)
}

// Release gives up one use of the lease; the last deletes its key, so that
// another master may take it at once.
func (l *Lease) Release() {
	s := l.s
	s.mu.Lock()
	l.refs--
	last := l.refs <= 0
	lost := l.ctx.Err() != nil
	if last && s.held[l.name] == l {
		delete(s.held, l.name)
	}
	s.mu.Unlock()
	if !last {
		return
	}
	l.lose(context.Canceled)
	<-l.done
	if lost {
		return
	}
	s.mu.Lock()
	rev := l.rev
	s.mu.Unlock()
	// Delete only our own write: an entry rewritten since is another's.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if e, err := s.kv.Get(ctx, l.name); err == nil && e.Revision == rev {
		_ = s.kv.Delete(ctx, l.name)
	}
}

// Run runs fn under lease name, waiting for it while another master holds
// it, and again each time the lease is lost and won back, until ctx ends
// (then nil) or fn returns (its error). It is how a master takes part in
// single-writer work that never ends, such as the DDNS sync.
func (s *Store) Run(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	for {
		l, err := s.Wait(ctx, name)
		if err != nil {
			return nil // Wait fails only when ctx ends
		}
		lctx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(l.Context(), cancel)
		err = fn(lctx)
		stop()
		cancel()
		lost := l.Context().Err() != nil
		l.Release()
		if ctx.Err() != nil {
			return nil
		}
		if !lost {
			return err
		}
	}
}

// Wait acquires lease name, polling while another master holds it and
// while the store fails: a cluster without a quorum, electing a leader or
// just back (JetStream answers "temporarily unavailable" then) is waited
// out, not a reason to give up the work waiting for the lease. It returns
// an error only when ctx ends.
func (s *Store) Wait(ctx context.Context, name string) (*Lease, error) {
	for {
		l, err := s.Acquire(ctx, name)
		if err == nil {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(s.poll):
		}
	}
}

// Holders lists the leases held now, by name.
func (s *Store) Holders(ctx context.Context) (map[string]Holder, error) {
	entries, err := s.kv.List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]Holder{}
	for _, e := range entries {
		var h Holder
		if e.Deleted || json.Unmarshal(e.Value, &h) != nil {
			continue
		}
		out[e.Key] = h
	}
	return out, nil
}

// Held lists the leases this master holds now, sorted.
func (s *Store) Held() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.held))
}

// Me is this master as a holder.
func (s *Store) Me() Holder { return s.me }
