package mine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/brinehq/brine/bus"
)

// BucketName is the key-value bucket the master keeps the mine in.
const BucketName = "mine"

// BucketConfig describes the mine's bucket (natsbus.Bus.Bucket opens it).
var BucketConfig = bus.BucketConfig{Name: BucketName, Description: "brine mine: host inventory"}

// Bucket is the key-value storage the mine lives in (*natsbus.Bucket is one).
type Bucket = bus.Bucket

// Errors returned by the store; test them with errors.Is.
var (
	// ErrNotFound: no record for that id.
	ErrNotFound = errors.New("host not in the mine")
	// ErrConflict: the record changed since the revision the writer read
	// (the bucket's bus.ErrKeyChanged).
	ErrConflict = bus.ErrKeyChanged
	// ErrStale: the write comes from an event older (in the log) than one
	// already applied to the record, e.g. a redelivered event.
	ErrStale = errors.New("stale host information")
)

// Store is the mine over a JetStream key-value bucket; keys are host ids.
// It works the same on the embedded server and on a NATS cluster, and it is
// safe for concurrent use by any number of writers in any number of masters.
type Store struct {
	kv  Bucket
	now func() time.Time
}

// New wraps an open bucket (natsbus.Bus.Bucket(ctx, BucketConfig)).
func New(kv Bucket) *Store { return &Store{kv: kv, now: time.Now} }

// Get returns the record of id with its revision, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*Host, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	e, err := s.kv.Get(ctx, id)
	if errors.Is(err, bus.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("mine: get %s: %w", id, err)
	}
	return decode(e)
}

// List returns every record, sorted by id.
func (s *Store) List(ctx context.Context) ([]*Host, error) {
	entries, err := s.kv.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("mine: list: %w", err)
	}
	out := make([]*Host, 0, len(entries))
	for _, e := range entries {
		h, err := decode(e)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b *Host) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Put stores h if its record is still at h.Revision (0: h must be new) and
// sets h.Revision to the new one; otherwise it returns ErrConflict and
// changes nothing. Updated is set to now when zero.
func (s *Store) Put(ctx context.Context, h *Host) error {
	if err := ValidateID(h.ID); err != nil {
		return err
	}
	if h.Updated.IsZero() {
		h.Updated = s.now().UTC()
	}
	stored := *h
	stored.Revision = 0
	b, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("mine: %s: %w", h.ID, err)
	}
	rev, err := bus.WriteAt(ctx, s.kv, h.ID, b, h.Revision)
	switch {
	case errors.Is(err, ErrConflict) && h.Revision == 0:
		return fmt.Errorf("mine: %s exists: %w", h.ID, err)
	case errors.Is(err, ErrConflict):
		return fmt.Errorf("mine: %s is no longer at revision %d: %w", h.ID, h.Revision, err)
	case err != nil:
		return fmt.Errorf("mine: put %s: %w", h.ID, err)
	}
	h.Revision = rev
	return nil
}

// Write is one change to a host record.
type Write struct {
	ID string
	// Source names the writer (an event tag, a function), stored in the record.
	Source string
	// Seq is the log position of the event the write comes from: a write
	// from an event older than the one the record already reflects is
	// refused with ErrStale. Zero (a runner call) is never stale and leaves
	// the record's Seq as it is.
	Seq uint64
	// Mutate changes the current record (a new, empty one when the host is
	// not in the mine). It may run more than once when writers race, each
	// time on the then current record.
	Mutate func(h *Host) error
}

// Update applies w with optimistic concurrency: read, mutate, write at the
// revision read, and again on a conflict. Concurrent writers therefore
// never lose each other's changes.
func (s *Store) Update(ctx context.Context, w Write) (*Host, error) {
	if err := ValidateID(w.ID); err != nil {
		return nil, err
	}
	return bus.Change(ctx, func() (*Host, error) {
		h, err := s.Get(ctx, w.ID)
		switch {
		case errors.Is(err, ErrNotFound):
			h = &Host{ID: w.ID}
		case err != nil:
			return nil, err
		case w.Seq != 0 && h.Seq > w.Seq:
			return nil, fmt.Errorf("%w: %s reflects event #%d, after #%d", ErrStale, w.ID, h.Seq, w.Seq)
		}
		if err := w.Mutate(h); err != nil {
			return nil, fmt.Errorf("mine: %s: %w", w.ID, err)
		}
		h.ID, h.Source, h.Updated, h.Seq = w.ID, w.Source, s.now().UTC(), max(h.Seq, w.Seq)
		if err := s.Put(ctx, h); err != nil {
			return nil, err
		}
		return h, nil
	})
}

// Delete removes the record of id and reports whether there was one.
func (s *Store) Delete(ctx context.Context, id string) (bool, error) {
	if err := ValidateID(id); err != nil {
		return false, err
	}
	_, err := s.kv.Get(ctx, id)
	existed := err == nil
	if err != nil && !errors.Is(err, bus.ErrKeyNotFound) {
		return false, fmt.Errorf("mine: delete %s: %w", id, err)
	}
	if !existed {
		return false, nil
	}
	if err := s.kv.Delete(ctx, id); err != nil {
		return false, fmt.Errorf("mine: delete %s: %w", id, err)
	}
	return existed, nil
}

// Change is one change seen by Watch.
type Change struct {
	ID string
	// Host is the new record; nil when the host was removed.
	Host *Host
	// Synced marks the end of the records that existed when Watch started;
	// ID and Host are empty. Later changes are live.
	Synced bool
}

// Watch calls fn with every record stored now, then a Synced change, then
// every change as it is made, until ctx ends (it returns nil then). fn
// runs on one goroutine, in revision order. The records are to read, not
// to change: their grains' values are shared with other records
// (decodeShared).
func (s *Store) Watch(ctx context.Context, fn func(Change)) error {
	err := bus.WatchRecords(ctx, s.kv, decodeShared, func(string, error) {}, func(r bus.Record[Host]) {
		fn(Change{ID: r.Key, Host: r.Value, Synced: r.Synced})
	})
	if err != nil {
		return fmt.Errorf("mine: watch: %w", err)
	}
	return nil
}
