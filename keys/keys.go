// Package keys is the master's durable record of every agent key and its
// state, Salt's pki_dir/minions* directories (or its keys cache) kept in a
// key-value bucket on the bus instead: pending, accepted and rejected, and
// beside them the denied keys, other keys presented for an id that already
// has one. One id may therefore be listed both as accepted and as denied,
// as in Salt.
//
// Authenticate is Salt's _auth decision for an agent's hello, with the
// auto_accept, autosign_file, autoreject_file and autosign_grains_dir
// policies, and fires salt/auth; Accept, Reject and Delete are salt-key's,
// and fire salt/key; Funcs are the wheel key.* functions that `brine key`
// and `wheel.key.*` reactions call. Every write names the revision it read,
// so masters sharing the bucket never lose each other's changes, and Watch
// tells each of them of every change at once.
package keys

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/target"
)

// BucketName is the key-value bucket the master keeps agent keys in.
const BucketName = "brine_keys"

// BucketConfig describes the keys' bucket (natsbus.Bus.Bucket opens it).
var BucketConfig = bus.BucketConfig{Name: BucketName, Description: "brine agent keys and their states"}

// Bucket is the key-value storage the keys live in (*natsbus.Bucket is one).
type Bucket = bus.Bucket

// State is the state of an agent's key.
type State string

// Key states. Denied is never a record's State: denied keys are kept in
// Key.Denied beside the id's key, whatever its state.
const (
	Pending  State = "pending"
	Accepted State = "accepted"
	Rejected State = "rejected"
	Denied   State = "denied"
)

// States are the states in salt-key's order of listing.
var States = []State{Accepted, Denied, Pending, Rejected}

// Salt's names of the key lists (its pki_dir subdirectories), the keys of a
// Listing.
const (
	ListAccepted = "minions"
	ListDenied   = "minions_denied"
	ListPending  = "minions_pre"
	ListRejected = "minions_rejected"
	// ListLocal lists the master's own keys in key.finger and key.print
	// (salt-key's "Local Keys"); it is no state's.
	ListLocal = "local"
)

// ListName is Salt's name of the list of keys in state st.
func ListName(st State) string {
	switch st {
	case Accepted:
		return ListAccepted
	case Pending:
		return ListPending
	case Rejected:
		return ListRejected
	case Denied:
		return ListDenied
	}
	return ""
}

// ListState is the state a Listing key (a list name) names, "" for an
// unknown one.
func ListState(list string) State {
	for _, st := range States {
		if ListName(st) == list {
			return st
		}
	}
	return ""
}

// Listing is salt-key's answer: ids by list name (ListAccepted…), each list
// sorted ignoring case.
type Listing map[string][]string

// Errors returned by the store; test them with errors.Is.
var (
	// ErrNotFound: no key for that id.
	ErrNotFound = errors.New("no key for that id")
	// ErrConflict: the record kept changing under every attempt to write it
	// (the bucket's bus.ErrKeyChanged).
	ErrConflict = bus.ErrKeyChanged
	// ErrInvalidID: an id no agent may have (mine.ErrInvalidID).
	ErrInvalidID = mine.ErrInvalidID
)

// maxDenied bounds the denied keys kept per id: an impostor presenting a
// new key at every hello would otherwise grow the record without end. The
// oldest are dropped; `brine key -f` shows what is kept.
const maxDenied = 16

// Key is the record of one agent id. Its keys are of either kind (Kind):
// a brine agent's and a salt-minion's share the lists, as the two kinds of
// agent share the master.
type Key struct {
	ID string `json:"-"`
	// State is Pending, Accepted or Rejected; empty when only denied keys
	// are recorded for the id.
	State State `json:"state,omitempty"`
	// Pub is the key in State: a brine agent's Curve25519 key as Z85
	// text, or a salt-minion's RSA key as PEM (NormalizePub'd).
	Pub string `json:"pub,omitempty"`
	// Denied are other keys presented for the id, oldest first.
	Denied []string `json:"denied,omitempty"`
	// Updated is when the record last changed.
	Updated time.Time `json:"updated"`
	// Revision is the record's key-value revision.
	Revision uint64 `json:"-"`
}

// Allows reports whether an agent holding pub may stay connected as the
// record's id: the key is accepted and it is the one presented.
func (k *Key) Allows(pub string) bool {
	return k != nil && k.State == Accepted && k.Pub == pub
}

// empty reports whether nothing is left to keep.
func (k *Key) empty() bool { return k.State == "" && len(k.Denied) == 0 }

// Store is the keys over a key-value bucket; keys are agent ids. It is safe
// for concurrent use, in any number of masters sharing the bucket.
type Store struct {
	kv     Bucket
	events bus.Emitter
	log    *slog.Logger
	now    func() time.Time

	mu     sync.Mutex
	policy *rules // nil until SetPolicy

	flood *limiter

	// local are the master's own public keys by file name (WithLocal).
	local map[string]string
}

// Option configures a Store.
type Option func(*Store)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithFloodLimit sets the bound on salt/auth events of keys that are not
// accepted: a repeat of the same attempt (id, key and outcome) within
// window is not fired again, and at most perSecond such events are fired
// (burst at once). The defaults are DefaultRepeatWindow, DefaultAuthRate
// and DefaultAuthBurst.
func WithFloodLimit(window time.Duration, perSecond float64, burst int) Option {
	return func(s *Store) { s.flood = newLimiter(window, perSecond, burst) }
}

// LocalRSA is the name key.finger and key.print list the master's RSA
// public key under: Salt's master.pub, which a salt-minion pins with
// master_finger. brine's own "master.pub" is the master's Curve25519 key,
// which the client derives from the key it holds.
const LocalRSA = "master.rsa.pub"

// WithLocal adds a public key of the master's own, pub, under name to
// key.finger's and key.print's "local" list (salt-key's "Local Keys"),
// when their match selects name (or is "master"). The client cannot
// derive the master's RSA key from the key it holds, so the master tells
// it: WithLocal(LocalRSA, text of master.pub). An empty pub adds nothing.
func WithLocal(name, pub string) Option {
	return func(s *Store) {
		if pub == "" {
			return
		}
		if s.local == nil {
			s.local = map[string]string{}
		}
		s.local[name] = NormalizePub(pub)
	}
}

// New wraps an open bucket (natsbus.Bus.Bucket(ctx, BucketConfig)); events
// fires salt/auth and salt/key. Until SetPolicy, new keys are pending and
// salt/auth is fired.
func New(kv Bucket, events bus.Emitter, opts ...Option) *Store {
	s := &Store{kv: kv, events: events, log: slog.Default(), now: time.Now}
	for _, o := range opts {
		o(s)
	}
	if s.flood == nil {
		s.flood = newLimiter(DefaultRepeatWindow, DefaultAuthRate, DefaultAuthBurst)
	}
	return s
}

// validateID checks an agent id: mine.ValidateID's rule (letters, digits,
// "-_." in non-empty dot-separated labels), which every host name and Salt
// minion id in practice follows and every bucket key accepts.
func validateID(id string) error { return mine.ValidateID(id) }

// Everywhere selects id in every list, for the *_dict changes: a machine's
// keys whatever their state (a valid id holds no glob character).
func Everywhere(id string) (Listing, error) {
	if err := validateID(id); err != nil {
		return nil, err
	}
	l := Listing{}
	for _, st := range States {
		l[ListName(st)] = []string{id}
	}
	return l, nil
}

func decode(e bus.Entry) (*Key, error) {
	var k Key
	dec := json.NewDecoder(bytes.NewReader(e.Value))
	if err := dec.Decode(&k); err != nil {
		return nil, fmt.Errorf("keys: record %s (revision %d): %w", e.Key, e.Revision, err)
	}
	k.ID, k.Revision = e.Key, e.Revision
	return &k, nil
}

// Get returns the record of id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*Key, error) {
	if err := validateID(id); err != nil {
		return nil, err
	}
	k, err := s.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return k, nil
}

// get returns the record of id, nil when there is none.
func (s *Store) get(ctx context.Context, id string) (*Key, error) {
	e, err := s.kv.Get(ctx, id)
	if errors.Is(err, bus.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("keys: get %s: %w", id, err)
	}
	return decode(e)
}

// all returns every record, sorted by id ignoring case.
func (s *Store) all(ctx context.Context) ([]*Key, error) {
	entries, err := s.kv.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("keys: list: %w", err)
	}
	out := make([]*Key, 0, len(entries))
	for _, e := range entries {
		k, err := decode(e)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b *Key) int { return compareIDs(a.ID, b.ID) })
	return out, nil
}

// compareIDs is Salt's sorted_ignorecase order, ties broken by case.
func compareIDs(a, b string) int {
	if c := cmp.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// List returns the ids in each of states (every state when none is given),
// an empty list for a state without keys.
func (s *Store) List(ctx context.Context, states ...State) (Listing, error) {
	if len(states) == 0 {
		states = States
	}
	out := Listing{}
	for _, st := range states {
		if ListName(st) == "" {
			return nil, fmt.Errorf("keys: no key state %q (want accepted, denied, pending or rejected)", st)
		}
		out[ListName(st)] = []string{}
	}
	all, err := s.all(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range all {
		for _, st := range k.states() {
			if l, ok := out[ListName(st)]; ok {
				out[ListName(st)] = append(l, k.ID)
			}
		}
	}
	return out, nil
}

// states are the lists the record is in: its state, and Denied when it has
// denied keys.
func (k *Key) states() []State {
	var out []State
	if k.State != "" {
		out = append(out, k.State)
	}
	if len(k.Denied) > 0 {
		out = append(out, Denied)
	}
	return out
}

// matcher compiles salt-key's match: a glob, or several separated by
// commas (Salt's glob_match), or a list of globs.
func matcher(match any) (func(id string) bool, error) {
	var globs []string
	switch m := match.(type) {
	case string:
		globs = strings.Split(m, ",")
	case []string:
		globs = m
	case int64, float64: // an id of digits, as YAML reads it
		globs = []string{fmt.Sprint(m)}
	case []any:
		for _, x := range m {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("keys: match: want globs, got %v", x)
			}
			globs = append(globs, s)
		}
	default:
		return nil, fmt.Errorf("keys: match: want a glob or a list of globs, got %T", match)
	}
	var targets []*target.Target
	for _, g := range globs {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		t, err := target.Parse(g, "glob")
		if err != nil {
			return nil, fmt.Errorf("keys: match %q: %w", g, err)
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 {
		return nil, errors.New("keys: match: no glob given")
	}
	return func(id string) bool {
		for _, t := range targets {
			if t.Match(target.Facts{ID: id}) {
				return true
			}
		}
		return false
	}, nil
}

// NameMatch returns the ids match selects, by list (Salt's key.name_match):
// only lists with a match appear.
func (s *Store) NameMatch(ctx context.Context, match string) (Listing, error) {
	return s.nameMatch(ctx, match)
}

func (s *Store) nameMatch(ctx context.Context, match any) (Listing, error) {
	keep, err := matcher(match)
	if err != nil {
		return nil, err
	}
	all, err := s.all(ctx)
	if err != nil {
		return nil, err
	}
	out := Listing{}
	for _, k := range all {
		if !keep(k.ID) {
			continue
		}
		for _, st := range k.states() {
			out[ListName(st)] = append(out[ListName(st)], k.ID)
		}
	}
	return out, nil
}

// dictMatch is Salt's dict_match: the lists in which each glob of match
// (whatever list it was given under) matches a key now.
func (s *Store) dictMatch(ctx context.Context, match Listing) (Listing, error) {
	cur, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := Listing{}
	for _, list := range slices.Sorted(maps.Keys(match)) {
		globs := slices.Clone(match[list])
		slices.SortFunc(globs, compareIDs)
		for _, g := range globs {
			keep, err := matcher(g)
			if err != nil {
				return nil, err
			}
			for _, st := range []State{Accepted, Pending, Rejected, Denied} {
				if slices.ContainsFunc(cur[ListName(st)], keep) {
					out[ListName(st)] = append(out[ListName(st)], g)
				}
			}
		}
	}
	return out, nil
}

// Finger returns the fingerprints (Fingerprint) of the keys match selects,
// by list and id: a string, or for an id with several denied keys a list;
// the master's own keys (WithLocal) that match selects are under
// ListLocal.
func (s *Store) Finger(ctx context.Context, match string) (map[string]map[string]any, error) {
	return s.perKey(ctx, match, func(pub string) (string, error) { return Fingerprint(pub) })
}

// Print returns the public keys match selects, by list and id, in
// Finger's shape (Salt's key.print).
func (s *Store) Print(ctx context.Context, match string) (map[string]map[string]any, error) {
	return s.perKey(ctx, match, func(pub string) (string, error) { return pub, nil })
}

func (s *Store) perKey(ctx context.Context, match string, show func(pub string) (string, error)) (map[string]map[string]any, error) {
	keep, err := matcher(match)
	if err != nil {
		return nil, err
	}
	all, err := s.all(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	add := func(st State, id string, v any) {
		if out[ListName(st)] == nil {
			out[ListName(st)] = map[string]any{}
		}
		out[ListName(st)][id] = v
	}
	for _, name := range slices.Sorted(maps.Keys(s.local)) {
		if match != "master" && !keep(name) {
			continue
		}
		v, err := show(s.local[name])
		if err != nil {
			return nil, fmt.Errorf("keys: the master's %s: %w", name, err)
		}
		if out[ListLocal] == nil {
			out[ListLocal] = map[string]any{}
		}
		out[ListLocal][name] = v
	}
	for _, k := range all {
		if !keep(k.ID) {
			continue
		}
		if k.State != "" {
			v, err := show(k.Pub)
			if err != nil {
				return nil, fmt.Errorf("keys: %s: %w", k.ID, err)
			}
			add(k.State, k.ID, v)
		}
		if len(k.Denied) == 0 {
			continue
		}
		shown := make([]string, len(k.Denied))
		for i, pub := range k.Denied {
			if shown[i], err = show(pub); err != nil {
				return nil, fmt.Errorf("keys: %s (denied): %w", k.ID, err)
			}
		}
		// As Salt: one denied key is a string, several a list.
		if len(shown) == 1 {
			add(Denied, k.ID, shown[0])
		} else {
			add(Denied, k.ID, shown)
		}
	}
	return out, nil
}

// Change is one change seen by Watch: Key is the agent's id, Value its new
// record (nil when deleted); Synced marks the end of the records that
// existed when Watch started.
type Change = bus.Record[Key]

// Watch calls fn with every record stored now, then a Synced change, then
// every change as it is made by any master sharing the bucket, until ctx
// ends (it returns nil then). fn runs on one goroutine, in revision order.
// The gateway cuts off an agent whose key is no longer accepted
// (!Key.Allows) and admits one whose key was accepted, without a restart.
func (s *Store) Watch(ctx context.Context, fn func(Change)) error {
	bad := func(id string, err error) { s.log.Error("keys: undecodable record", "id", id, "err", err) }
	// A record no reader can decode admits nobody: it counts as removed.
	if err := bus.WatchRecords(ctx, s.kv, decode, bad, fn); err != nil {
		return fmt.Errorf("keys: watch: %w", err)
	}
	return nil
}

// update applies mutate to the record of id with optimistic concurrency:
// read, mutate, write at the revision read, and again on a conflict.
// mutate gets the current record (nil when there is none) and returns the
// record to store, nil to store nothing (no change), or a record with
// nothing left (deleted). update returns the record as stored, or the
// current one when mutate changed nothing.
func (s *Store) update(ctx context.Context, id string, mutate func(cur *Key) (*Key, error)) (*Key, error) {
	return bus.Change(ctx, func() (*Key, error) {
		cur, err := s.get(ctx, id)
		if err != nil {
			return nil, err
		}
		var prev *Key
		if cur != nil {
			c := *cur
			c.Denied = slices.Clone(cur.Denied)
			prev = &c
		}
		next, err := mutate(prev)
		if err != nil || next == nil {
			return cur, err
		}
		next.ID = id
		next.Updated = s.now().UTC()
		if len(next.Denied) > maxDenied {
			next.Denied = next.Denied[len(next.Denied)-maxDenied:]
		}
		if err := s.write(ctx, cur, next); err != nil {
			return nil, fmt.Errorf("keys: write %s: %w", id, err)
		}
		return next, nil
	})
}

// write stores next over cur (nil: the id has no record), at cur's
// revision. A record with nothing left is deleted: the bucket's delete
// takes no revision, so a deletion wins over a change made in between,
// which is what an operator deleting a key means.
func (s *Store) write(ctx context.Context, cur, next *Key) error {
	if next.empty() {
		next.Revision = 0
		if cur == nil {
			return nil
		}
		return s.kv.Delete(ctx, next.ID)
	}
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	var rev uint64
	if cur != nil {
		rev = cur.Revision
	}
	next.Revision, err = bus.WriteAt(ctx, s.kv, next.ID, b, rev)
	return err
}
