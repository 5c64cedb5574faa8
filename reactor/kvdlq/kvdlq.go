// Package kvdlq keeps the reactor's dead letters in a key-value bucket of
// the bus, next to the events, so they survive restarts and are shared by
// every master on the bus.
package kvdlq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/reactor"
)

// BucketConfig describes the bucket the master keeps dead letters in
// (natsbus.Bus.Bucket opens it).
var BucketConfig = bus.BucketConfig{Name: "reactor_dlq", Description: "brine reactor dead letters"}

// Bucket is the key-value storage the dead letters live in
// (*natsbus.Bucket is one).
type Bucket interface {
	Get(ctx context.Context, key string) (bus.Entry, error)
	Put(ctx context.Context, key string, value []byte) (uint64, error)
	Purge(ctx context.Context, key string) error
	Keys(ctx context.Context) ([]string, error)
}

// Store implements reactor.DeadLetters over a key-value bucket; keys are
// dead-letter ids (JIDs).
type Store struct{ kv Bucket }

var _ reactor.DeadLetters = (*Store)(nil)

// New wraps an open bucket.
func New(kv Bucket) *Store { return &Store{kv: kv} }

// Put stores or replaces dl.
func (s *Store) Put(ctx context.Context, dl *reactor.DeadLetter) error {
	b, err := json.Marshal(dl)
	if err != nil {
		return fmt.Errorf("dead letter %s: %w", dl.ID, err)
	}
	if _, err := s.kv.Put(ctx, dl.ID, b); err != nil {
		return fmt.Errorf("dead letter %s: %w", dl.ID, err)
	}
	return nil
}

// Get returns the dead letter id, or reactor.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*reactor.DeadLetter, error) {
	e, err := s.kv.Get(ctx, id)
	if errors.Is(err, bus.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: %s", reactor.ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("dead letter %s: %w", id, err)
	}
	return reactor.DecodeDeadLetter(e.Value)
}

// Len counts the dead letters.
func (s *Store) Len(ctx context.Context) (int, error) {
	keys, err := s.kv.Keys(ctx)
	if err != nil {
		return 0, fmt.Errorf("dead letters: %w", err)
	}
	return len(keys), nil
}

// List returns every dead letter, oldest first (JIDs sort by time).
func (s *Store) List(ctx context.Context) ([]*reactor.DeadLetter, error) {
	keys, err := s.kv.Keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	sort.Strings(keys)
	out := make([]*reactor.DeadLetter, 0, len(keys))
	for _, k := range keys {
		dl, err := s.Get(ctx, k)
		if errors.Is(err, reactor.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, dl)
	}
	return out, nil
}

// Delete removes the dead letter id.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.kv.Purge(ctx, id); err != nil {
		return fmt.Errorf("dead letter %s: %w", id, err)
	}
	return nil
}
