// Package kvdlq keeps the reactor's dead letters in a JetStream key-value
// bucket, next to the events, so they survive restarts and are shared by
// every master on the bus.
package kvdlq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/brinehq/brine/reactor"
)

// Bucket is the key-value bucket the master uses.
const Bucket = "reactor_dlq"

// Store implements reactor.DeadLetters over a key-value bucket; keys are
// dead-letter ids (JIDs).
type Store struct{ kv jetstream.KeyValue }

var _ reactor.DeadLetters = (*Store)(nil)

// New wraps an open bucket.
func New(kv jetstream.KeyValue) *Store { return &Store{kv: kv} }

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
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrInvalidKey) {
		return nil, fmt.Errorf("%w: %s", reactor.ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("dead letter %s: %w", id, err)
	}
	return reactor.DecodeDeadLetter(e.Value())
}

// List returns every dead letter, oldest first (JIDs sort by time).
func (s *Store) List(ctx context.Context) ([]*reactor.DeadLetter, error) {
	keys, err := s.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
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
