package keys

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Tags the store fires: Salt's.
const (
	TagAuth = "salt/auth"
	TagKey  = "salt/key"
)

// Salt's salt/auth acts (accept and reject, and delete, are also
// salt/key's).
const (
	ActAccept = "accept"
	ActPend   = "pend"
	ActReject = "reject"
	ActDenied = "denied"
	ActDelete = "delete"
)

// Result is the outcome of an agent's hello.
type Result struct {
	ID string
	// State is the state of the key presented: Accepted, Pending,
	// Rejected, or Denied when the id has another key.
	State State
	// Act is salt/auth's act: accept, pend, reject or denied.
	Act string
	// Allowed: the agent may proceed (its key is accepted). A pending
	// agent tries again later; a rejected or denied one is refused.
	Allowed bool
	// Reason says why, for the agent's log and the master's.
	Reason string
}

// Authenticate decides on the hello of agent id presenting the public key
// pub (a brine agent's Z85 Curve25519 key, or a salt-minion's RSA key in
// PEM, compared as NormalizePub makes it), as Salt's master does
// (channel/server.py _auth), and fires salt/auth {act, id, pub, result}:
//
//   - an unknown id's key is rejected when autoreject_file lists it,
//     accepted when auto_accept, autosign_file or autosign_grains_dir
//     (with the agent's autosign_grains) says so, and pending otherwise;
//   - a known id presenting its key gets its key's state; a pending key
//     is rejected by autoreject_file, or accepted by the auto-accept
//     policies, as on its first hello;
//   - a known id presenting another key is denied: the key is recorded
//     beside the id's own, which keeps its state (an impostor cannot
//     displace an accepted agent); a rejected id stays rejected, whatever
//     key it presents.
//
// Keys accepted by policy fire no salt/key, as in Salt. salt/auth for keys
// that are not accepted is bounded (see WithFloodLimit and Stats).
func (s *Store) Authenticate(ctx context.Context, id, pub string, grains map[string]any) (Result, error) {
	if err := validateID(id); err != nil {
		return Result{}, fmt.Errorf("keys: hello: %w", err)
	}
	pub = NormalizePub(pub)
	if err := ValidatePub(pub); err != nil {
		return Result{}, fmt.Errorf("keys: hello from %s: %w", id, err)
	}
	pol := s.rules()
	if err := s.roomForPending(ctx, pol, id, pub, grains); err != nil {
		return Result{}, err
	}
	var res Result
	_, err := s.update(ctx, id, func(cur *Key) (*Key, error) {
		var next *Key
		res, next = decide(pol, id, pub, grains, cur)
		return next, nil
	})
	if err != nil {
		return Result{}, err
	}
	s.log.Debug("keys: hello", "id", id, "act", res.Act, "reason", res.Reason)
	if pol.AuthEvents && s.flood.allow(s.now(), id, pub, res.Act) {
		data := map[string]any{"act": res.Act, "id": id, "pub": pub, "result": res.Act == ActAccept || res.Act == ActPend}
		if err := s.events.Fire(ctx, TagAuth, data); err != nil && ctx.Err() == nil {
			// The decision is stored; only its notice is lost.
			s.log.Error("keys: cannot fire salt/auth", "id", id, "act", res.Act, "err", err)
		}
	}
	return res, nil
}

// ErrTooManyPending turns away a new id's hello while max_pending_keys keys
// wait in pending: the agent is told to try again later, and nothing is
// stored.
var ErrTooManyPending = errors.New("too many keys pending")

// roomForPending refuses the hello of an id without a key, that the policy
// would leave pending, while MaxPending keys are pending already; it fires
// salt/auth (act reject, result False, with the reason) within the flood
// bound, and logs it as often. Two new ids at once may both pass the
// count: the bound is approximate by a few, never by a flood.
func (s *Store) roomForPending(ctx context.Context, pol *rules, id, pub string, grains map[string]any) error {
	if pol.MaxPending <= 0 || pol.autoreject(id) || pol.autosign(id, grains) != "" {
		return nil
	}
	cur, err := s.get(ctx, id)
	if err != nil || cur != nil && cur.State != "" {
		return err
	}
	l, err := s.List(ctx, Pending)
	if err != nil {
		return err
	}
	n := len(l[ListName(Pending)])
	if n < pol.MaxPending {
		return nil
	}
	reason := fmt.Sprintf("%d keys are pending (max_pending_keys: %d): accept, reject or delete some "+
		"(brine key --delete-pending-older-than 24h), or raise max_pending_keys", n, pol.MaxPending)
	if s.flood.allow(s.now(), id, pub, ActReject) {
		s.log.Warn("keys: hello turned away", "id", id, "reason", reason)
		if pol.AuthEvents {
			data := map[string]any{"act": ActReject, "id": id, "pub": pub, "result": false, "reason": reason}
			if err := s.events.Fire(ctx, TagAuth, data); err != nil && ctx.Err() == nil {
				s.log.Error("keys: cannot fire salt/auth", "id", id, "act", ActReject, "err", err)
			}
		}
	}
	return fmt.Errorf("%w: %s", ErrTooManyPending, reason)
}

// PendingOlderThan lists the keys that have waited in pending, unchanged,
// for age or longer: what `brine key --delete-pending-older-than` deletes.
func (s *Store) PendingOlderThan(ctx context.Context, age time.Duration) (Listing, error) {
	all, err := s.all(ctx)
	if err != nil {
		return nil, err
	}
	cutoff := s.now().Add(-age)
	ids := []string{}
	for _, k := range all {
		if k.State == Pending && !k.Updated.After(cutoff) {
			ids = append(ids, k.ID)
		}
	}
	return Listing{ListName(Pending): ids}, nil
}

// decide is _auth's decision for a hello on the record cur (nil: unknown
// id): the result, and the record to store (nil: unchanged). pub is
// normalised, so comparing texts compares keys of either kind; a key of
// the other kind than the id's is simply another key, and denied.
func decide(pol *rules, id, pub string, grains map[string]any, cur *Key) (Result, *Key) {
	res := func(st State, act, reason string, args ...any) Result {
		return Result{ID: id, State: st, Act: act, Allowed: act == ActAccept, Reason: fmt.Sprintf(reason, args...)}
	}
	deny := func(st State) (Result, *Key) {
		var next *Key
		if !slices.Contains(cur.Denied, pub) {
			next = cur
			next.Denied = append(next.Denied, pub)
		}
		return res(Denied, ActDenied, "%s already has a %s key, and this is another one: denied (possibly an impostor; "+
			"`brine key -d %s` removes the recorded key if the agent was rebuilt)", id, st, id), next
	}
	switch {
	case cur == nil || cur.State == "":
		next := cur
		if next == nil {
			next = &Key{}
		}
		// A key denied before the id's key was deleted is now just new.
		next.Pub = pub
		next.Denied = slices.DeleteFunc(next.Denied, func(d string) bool { return d == pub })
		if pol.autoreject(id) {
			next.State = Rejected
			return res(Rejected, ActReject, "new key rejected by autoreject_file"), next
		}
		if why := pol.autosign(id, grains); why != "" {
			next.State = Accepted
			return res(Accepted, ActAccept, "new key accepted by %s", why), next
		}
		next.State = Pending
		return res(Pending, ActPend, "new key pending: accept it with `brine key -a %s`", id), next
	case cur.State == Rejected:
		return res(Rejected, ActReject, "the key of %s is rejected", id), nil
	case cur.State == Accepted:
		if cur.Pub != pub {
			return deny(Accepted)
		}
		return res(Accepted, ActAccept, "key accepted"), nil
	case cur.State == Pending:
		if pol.autoreject(id) {
			// Salt rejects a pending id listed in autoreject_file whatever
			// key it presents.
			next := cur
			next.State = Rejected
			return res(Rejected, ActReject, "pending key rejected by autoreject_file"), next
		}
		if cur.Pub != pub {
			return deny(Pending)
		}
		if why := pol.autosign(id, grains); why != "" {
			next := cur
			next.State = Accepted
			return res(Accepted, ActAccept, "pending key accepted by %s", why), next
		}
		return res(Pending, ActPend, "key pending: accept it with `brine key -a %s`", id), nil
	}
	return res(cur.State, "error", "key in unknown state %q", cur.State), nil
}

// The default bound on salt/auth events of keys that are not accepted. A
// pending agent says hello every 10 s (Salt's acceptance_wait_time), so a
// window of a minute fires its pend once a minute, not six times; a burst
// of 500 new agents (an autoscaling group) is fired at once, and a flood
// of hellos from ever new ids or keys at most 50 events a second.
const (
	DefaultRepeatWindow = time.Minute
	DefaultAuthRate     = 50
	DefaultAuthBurst    = 500
)

// maxTracked bounds the memory of recent attempts: past it, repeats are
// still bounded by the rate.
const maxTracked = 10000

// limiter bounds the salt/auth events of keys that are not accepted, so
// that a flood of hellos from unaccepted keys floods neither the bus nor
// the master's memory. Accepted keys' events are never held back: only an
// operator or a policy makes keys accepted, so their number is the fleet's.
//
// Two bounds apply, in order: an attempt identical to the last one fired
// for its id (same key and act) within the window is not fired again; and
// a token bucket caps the rest. An attempt held back by the bucket is not
// remembered, so its next repeat is fired when the bucket allows: a pend a
// reaction waits for is delayed by a flood, never lost for good.
type limiter struct {
	window time.Duration
	bucket *rate.Limiter

	mu       sync.Mutex
	last     map[string]attempt // id -> last attempt fired
	swept    time.Time
	fired    atomic.Uint64
	repeats  atomic.Uint64
	overRate atomic.Uint64
}

type attempt struct {
	pub, act string
	at       time.Time
}

func newLimiter(window time.Duration, perSecond float64, burst int) *limiter {
	return &limiter{window: window, bucket: rate.NewLimiter(rate.Limit(perSecond), burst),
		last: map[string]attempt{}}
}

// allow reports whether the salt/auth event of this attempt is fired.
func (l *limiter) allow(now time.Time, id, pub, act string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if act == ActAccept {
		delete(l.last, id)
		l.fired.Add(1)
		return true
	}
	if a, ok := l.last[id]; ok && a.pub == pub && a.act == act && now.Sub(a.at) < l.window {
		l.repeats.Add(1)
		return false
	}
	if !l.bucket.AllowN(now, 1) {
		l.overRate.Add(1)
		return false
	}
	if _, ok := l.last[id]; !ok && len(l.last) >= maxTracked {
		l.sweep(now)
	}
	if _, ok := l.last[id]; ok || len(l.last) < maxTracked {
		l.last[id] = attempt{pub: pub, act: act, at: now}
	}
	l.fired.Add(1)
	return true
}

// sweep forgets attempts older than the window, at most once per tenth of
// it, so that a full table does not cost a scan per hello.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < l.window/10 {
		return
	}
	l.swept = now
	for id, a := range l.last {
		if now.Sub(a.at) >= l.window {
			delete(l.last, id)
		}
	}
}

// Stats count the salt/auth events fired and held back since the store
// was made, for metrics.
type Stats struct {
	// AuthEvents is the number of salt/auth events fired.
	AuthEvents uint64
	// SuppressedRepeats are attempts identical to one fired for the same
	// id within the window.
	SuppressedRepeats uint64
	// SuppressedRate are attempts held back by the rate bound.
	SuppressedRate uint64
	// Tracked is the number of ids whose last attempt is remembered.
	Tracked int
}

// Suppressed is the number of salt/auth events held back.
func (s Stats) Suppressed() uint64 { return s.SuppressedRepeats + s.SuppressedRate }

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	s.flood.mu.Lock()
	tracked := len(s.flood.last)
	s.flood.mu.Unlock()
	return Stats{AuthEvents: s.flood.fired.Load(), SuppressedRepeats: s.flood.repeats.Load(),
		SuppressedRate: s.flood.overRate.Load(), Tracked: tracked}
}
