package natsbus

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// syncedKV makes a bucket on the embedded server as durable as the events:
// a write returns once its block is fsync'ed (group commit, as Publish).
// Reads and watches pass through.
type syncedKV struct {
	jetstream.KeyValue
	sync *syncer
}

func (kv *syncedKV) flush(ctx context.Context, rev uint64, err error) (uint64, error) {
	if err != nil {
		return rev, err
	}
	if err := kv.sync.sync(ctx, 0); err != nil {
		return rev, fmt.Errorf("key-value %s sync: %w", kv.Bucket(), err)
	}
	return rev, nil
}

func (kv *syncedKV) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := kv.KeyValue.Put(ctx, key, value)
	return kv.flush(ctx, rev, err)
}

func (kv *syncedKV) PutString(ctx context.Context, key string, value string) (uint64, error) {
	rev, err := kv.KeyValue.PutString(ctx, key, value)
	return kv.flush(ctx, rev, err)
}

func (kv *syncedKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	rev, err := kv.KeyValue.Create(ctx, key, value, opts...)
	return kv.flush(ctx, rev, err)
}

func (kv *syncedKV) Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error) {
	rev, err := kv.KeyValue.Update(ctx, key, value, revision)
	return kv.flush(ctx, rev, err)
}

func (kv *syncedKV) Delete(ctx context.Context, key string, opts ...jetstream.KVDeleteOpt) error {
	_, err := kv.flush(ctx, 0, kv.KeyValue.Delete(ctx, key, opts...))
	return err
}

func (kv *syncedKV) Purge(ctx context.Context, key string, opts ...jetstream.KVDeleteOpt) error {
	_, err := kv.flush(ctx, 0, kv.KeyValue.Purge(ctx, key, opts...))
	return err
}
