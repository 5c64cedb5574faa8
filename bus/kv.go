package bus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brinehq/brine/internal/backoff"
)

// BucketConfig describes a durable key-value bucket kept beside the events
// (the mine, jobs, dead letters, Slack threads). Opening a bucket that
// exists applies the configuration to it.
type BucketConfig struct {
	// Name identifies the bucket on the server: letters, digits, - and _.
	Name string
	// Description is shown by the server's tools.
	Description string
	// TTL expires each value this long after it was written (0: never).
	TTL time.Duration
	// History is how many values are kept per key (default 1).
	History int
}

// Entry is one value of a bucket.
type Entry struct {
	Key   string
	Value []byte
	// Revision orders every write of the bucket; an update names the one it
	// read so that concurrent writers cannot lose each other's changes.
	Revision uint64
	// Deleted marks a removal (seen by watchers); Value is empty.
	Deleted bool
}

// Errors of key-value buckets; test them with errors.Is.
var (
	// ErrKeyNotFound: no value for that key (never written, deleted or expired).
	ErrKeyNotFound = errors.New("key not found")
	// ErrKeyChanged: a create found the key present, or an update found it
	// at another revision than the one it named.
	ErrKeyChanged = errors.New("key changed concurrently")
	// ErrNotStored: the store did not acknowledge a write in time (a
	// cluster without a quorum); it may not be stored, and the writer
	// keeps it to write again. Events fail with it too.
	ErrNotStored = errors.New("not stored: the event store did not acknowledge it (is a quorum of the cluster up?)")
)

// Record is one change of a bucket's decoded records, as WatchRecords
// reports it.
type Record[T any] struct {
	Key string
	// Value is the new record; nil when it was removed, or could not be
	// decoded (a record no reader can decode counts as removed rather
	// than stopping every watcher).
	Value *T
	// Synced marks the end of the records that existed when the watch
	// started; Key and Value are empty. Later changes are live.
	Synced bool
}

// Bucket is a durable key-value bucket as the stores that keep records in
// one (the mine, agent keys) use it; natsbus.Bus.Bucket opens one.
type Bucket interface {
	Get(ctx context.Context, key string) (Entry, error)
	// Create writes a new key (ErrKeyChanged when it exists) and Update
	// one at the revision read (ErrKeyChanged when it moved on).
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error)
	Delete(ctx context.Context, key string) error
	List(ctx context.Context) ([]Entry, error)
	EntryWatcher
}

// EntryWatcher is a bucket as WatchRecords needs it.
type EntryWatcher interface {
	// Watch calls fn with every entry stored now, then nil, then every
	// change, until ctx ends.
	Watch(ctx context.Context, fn func(*Entry)) error
}

// WatchRecords watches kv, decoding each entry with decode: the stored
// records, a Synced record, then every change, on one goroutine, in
// revision order, until ctx ends (then it returns nil). An entry decode
// refuses is reported to bad and passed on as removed.
func WatchRecords[T any](ctx context.Context, kv EntryWatcher, decode func(Entry) (*T, error), bad func(key string, err error), fn func(Record[T])) error {
	return kv.Watch(ctx, func(e *Entry) {
		switch {
		case e == nil:
			fn(Record[T]{Synced: true})
		case e.Deleted:
			fn(Record[T]{Key: e.Key})
		default:
			v, err := decode(*e)
			if err != nil {
				bad(e.Key, err)
				fn(Record[T]{Key: e.Key})
				return
			}
			fn(Record[T]{Key: e.Key, Value: v})
		}
	})
}

// RevisionWriter is a bucket as WriteAt writes to it.
type RevisionWriter interface {
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error)
}

// WriteAt writes value to key if the key is still at revision, the one its
// writer read (0: the key must not exist), and returns the new revision;
// otherwise ErrKeyChanged, and nothing is written.
func WriteAt(ctx context.Context, kv RevisionWriter, key string, value []byte, revision uint64) (uint64, error) {
	if revision == 0 {
		return kv.Create(ctx, key, value)
	}
	return kv.Update(ctx, key, value, revision)
}

// MaxChangeAttempts is how many times Change reads, changes and writes a
// key before it gives up: sixteen conflicts in a row take several writers
// hammering one key, which is a bug to report rather than wait out.
const MaxChangeAttempts = 16

// Change is optimistic concurrency over one key: attempt reads the key,
// changes what it read and writes it at the revision read (WriteAt), and
// Change runs it again, up to MaxChangeAttempts times, while the write
// finds the key changed (ErrKeyChanged) by another writer. Concurrent
// writers thus never lose each other's changes, and writers that keep
// colliding step apart with a random wait that grows with each conflict,
// so that one cannot starve another. It returns attempt's first other
// result (the record as written, say); after the last conflict, the zero
// value and ErrKeyChanged saying it gave up.
func Change[T any](ctx context.Context, attempt func() (T, error)) (T, error) {
	var zero T
	var err error
	for n := range MaxChangeAttempts {
		if n > 0 && !backoff.Sleep(ctx, rand.N(time.Duration(n)*time.Millisecond)) {
			return zero, ctx.Err()
		}
		var v T
		if v, err = attempt(); !errors.Is(err, ErrKeyChanged) {
			return v, err
		}
	}
	return zero, fmt.Errorf("gave up after %d attempts: %w", MaxChangeAttempts, err)
}
