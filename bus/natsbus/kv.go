package natsbus

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/backoff"
)

// Bucket is a durable key-value bucket on the bus's server, for state that
// belongs next to the events (the mine, jobs, dead letters, Slack threads).
// On a lone embedded server a write returns once its block is fsync'ed
// (group commit, as Publish), so nothing acknowledged is lost with the
// machine's power; in a cluster every member fsyncs before it acknowledges
// (sync_always), and a replicated bucket's reads go to its leader (Get);
// watches pass through. Errors are the bus's (bus.ErrKeyNotFound,
// bus.ErrKeyChanged, bus.ErrNotStored), so that no package but this one
// knows JetStream.
type Bucket struct {
	b  *Bus
	kv jetstream.KeyValue
	// leader reads the bucket's values at its leader (replicated buckets;
	// nil: reads through kv).
	leader jetstream.Stream
	sync   *syncer // nil on an external server: durability is its business
}

// Bucket opens (creating if needed) the bucket cfg describes, with the bus's
// replicas, and applies cfg to a bucket that exists.
func (b *Bus) Bucket(ctx context.Context, cfg bus.BucketConfig) (*Bucket, error) {
	have, err := b.streamReplicas(ctx, "KV_"+cfg.Name)
	if err != nil {
		return nil, err
	}
	if err := b.checkReplicas("the key-value bucket", cfg.Name, have); err != nil {
		return nil, err
	}
	var kv jetstream.KeyValue
	err = b.admin(ctx, func(ctx context.Context) (err error) {
		kv, err = b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      cfg.Name,
			Description: cfg.Description,
			TTL:         cfg.TTL,
			History:     uint8(max(cfg.History, 1)),
			Storage:     jetstream.FileStorage,
			Replicas:    b.cfg.Replicas,
		})
		return err
	})
	var leader jetstream.Stream
	if err == nil && b.cfg.Replicas > 1 {
		leader, err = b.leaderReads(ctx, cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("key-value bucket %s: %w", cfg.Name, err)
	}
	if b.ns == nil || b.cfg.Cluster != nil {
		return &Bucket{b: b, kv: kv, leader: leader}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	sy, ok := b.kvSync[cfg.Name]
	if !ok {
		sy = newSyncer(filepath.Join(b.cfg.Dir, "jetstream", server.DEFAULT_GLOBAL_ACCOUNT, "streams", "KV_"+cfg.Name, "msgs"))
		b.kvSync[cfg.Name] = sy
	}
	return &Bucket{b: b, kv: kv, sync: sy}, nil
}

// leaderReads turns a replicated bucket's direct reads off and returns a
// handle on its stream that reads at the leader. With direct reads any
// replica answers, and one that is behind (back from a partition) answers
// with what it had: a master would not see a write another master was told
// is stored (a Slack thread's parent, a job record's revision, a lease).
// Creating the bucket turns them on, so a master starting beside another
// may find them on again: it looks until the handle it keeps has them off.
//
// A bucket just created can be reported missing: a replica the cluster
// lets answer for a new stream may not have built its copy yet (the server
// allows for it with a 10 ms wait, too short on a loaded machine). The
// bucket exists, so it asks again.
func (b *Bus) leaderReads(ctx context.Context, name string) (jetstream.Stream, error) {
	var st jetstream.Stream
	err := b.admin(ctx, func(ctx context.Context) error {
		for range 5 {
			s, err := b.js.Stream(ctx, "KV_"+name)
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				return fmt.Errorf("%w (just created, not yet built on the replica that answered): %w", err, errAgain)
			}
			if err != nil {
				return err
			}
			// The handle reads directly or not as its info said when
			// fetched, whatever the stream's setting is later.
			cfg := s.CachedInfo().Config
			if !cfg.AllowDirect {
				st = s
				return nil
			}
			cfg.AllowDirect = false
			if _, err := b.js.UpdateStream(ctx, cfg); err != nil {
				return err
			}
		}
		return fmt.Errorf("its direct reads were turned on again five times (masters starting with other settings?)")
	})
	return st, err
}

// Name is the bucket's name.
func (kv *Bucket) Name() string { return kv.kv.Bucket() }

// SyncRounds counts the fsync rounds that made the bucket's writes durable
// (0 on an external server); tests observe the flush through it.
func (kv *Bucket) SyncRounds() uint64 {
	if kv.sync == nil {
		return 0
	}
	kv.sync.mu.Lock()
	defer kv.sync.mu.Unlock()
	return kv.sync.rounds
}

// flush makes a write the server acknowledged durable before it is
// acknowledged to the caller.
func (kv *Bucket) flush(ctx context.Context, rev uint64, err error) (uint64, error) {
	if err != nil {
		return rev, notStored(kvError(err))
	}
	if kv.sync == nil {
		return rev, nil
	}
	if err := kv.sync.sync(ctx, 0); err != nil {
		return rev, fmt.Errorf("key-value %s sync: %w", kv.Name(), err)
	}
	return rev, nil
}

// write runs a write again while the cluster elects the bucket's leader
// (Bus.untilStored). A write whose answer was lost but which was stored
// fails its retry as a conflict (ErrKeyChanged), which callers handle by
// reading the key again.
func (kv *Bucket) write(ctx context.Context, w func() (uint64, error)) (rev uint64, err error) {
	err = kv.b.untilStored(ctx, func() error {
		var werr error
		rev, werr = w()
		return werr
	})
	return rev, err
}

// kvError turns JetStream's key-value errors into the bus's.
func kvError(err error) error {
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return fmt.Errorf("%w: %w", bus.ErrKeyNotFound, err)
	case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return fmt.Errorf("%w: %w", bus.ErrKeyChanged, err)
	}
	return err
}

func entry(e jetstream.KeyValueEntry) bus.Entry {
	return bus.Entry{Key: e.Key(), Value: e.Value(), Revision: e.Revision(), Deleted: e.Operation() != jetstream.KeyValuePut}
}

// Get returns the value of key, or bus.ErrKeyNotFound (also for a key no
// value can have).
//
// Reads go to the bucket's leader (leaderReads): while the cluster elects
// another in place of a lost one, a read is tried again, each attempt
// bounded, until the caller's context ends or PublishTimeout has passed,
// rather than failing at its first attempt's timeout.
func (kv *Bucket) Get(ctx context.Context, key string) (bus.Entry, error) {
	if kv.leader == nil {
		e, err := kv.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrInvalidKey):
			return bus.Entry{}, fmt.Errorf("%w: %q is not a valid key", bus.ErrKeyNotFound, key)
		case err != nil:
			return bus.Entry{}, kvError(err)
		}
		return entry(e), nil
	}
	m, err := kv.last(ctx, key)
	if err != nil {
		return bus.Entry{}, err
	}
	if removal(m) {
		return bus.Entry{}, fmt.Errorf("%w: %s", bus.ErrKeyNotFound, key)
	}
	return bus.Entry{Key: key, Value: m.Data, Revision: m.Sequence}, nil
}

// last reads key's newest message at a replicated bucket's leader: its
// value or its removal marker, or bus.ErrKeyNotFound if it never had one.
func (kv *Bucket) last(ctx context.Context, key string) (*jetstream.RawStreamMsg, error) {
	if !validKey(key) {
		return nil, fmt.Errorf("%w: %q is not a valid key", bus.ErrKeyNotFound, key)
	}
	var m *jetstream.RawStreamMsg
	err := kv.b.untilAnswered(ctx, func() (err error) {
		actx, cancel := context.WithTimeout(ctx, readAttempt)
		defer cancel()
		m, err = kv.leader.GetLastMsgForSubject(actx, "$KV."+kv.Name()+"."+key)
		return err
	}, unanswered)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, fmt.Errorf("%w: %s", bus.ErrKeyNotFound, key)
	}
	return m, err
}

// removal reports a key's removal marker (Delete, Purge).
func removal(m *jetstream.RawStreamMsg) bool {
	op := m.Header.Get("KV-Operation")
	return op == "DEL" || op == "PURGE"
}

// validKey is JetStream's rule for key names (a key that breaks it can
// have no value).
func validKey(key string) bool {
	return key != "" && key[0] != '.' && key[len(key)-1] != '.' && keyChars.MatchString(key)
}

var keyChars = regexp.MustCompile(`^[-/_=\.a-zA-Z0-9]+$`)

// readAttempt bounds one read: far above a read's time with a leader,
// short enough to ask again soon after an election.
const readAttempt = 2 * time.Second

// Put stores value under key, whatever was there, and returns its revision.
func (kv *Bucket) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := kv.write(ctx, func() (uint64, error) { return kv.kv.Put(ctx, key, value) })
	return kv.flush(ctx, rev, err)
}

// Create stores value under a key that has none, or fails with
// bus.ErrKeyChanged.
//
// In a replicated bucket the leader refuses a create while another write
// of the key is still being replicated (another master's, or this one's
// first attempt whose answer was lost), before anyone can read that write.
// Create waits for it rather than report a conflict with a key that reads
// as absent, which would leave the caller, reading it next, with neither
// the key nor the right to create it. A removed key is created over its
// removal marker, read at the leader too.
func (kv *Bucket) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	if kv.leader == nil {
		rev, err := kv.write(ctx, func() (uint64, error) { return kv.kv.Create(ctx, key, value) })
		return kv.flush(ctx, rev, err)
	}
	deadline := time.Now().Add(kv.b.cfg.PublishTimeout)
	var after uint64 // the removal marker to write over; 0: none
	for {
		rev, err := kv.write(ctx, func() (uint64, error) { return kv.kv.Update(ctx, key, value, after) })
		rev, err = kv.flush(ctx, rev, err)
		if !errors.Is(err, bus.ErrKeyChanged) {
			return rev, err
		}
		m, lerr := kv.last(ctx, key)
		switch {
		case lerr == nil && removal(m):
			after = m.Sequence
			continue
		case lerr == nil || !errors.Is(lerr, bus.ErrKeyNotFound) || time.Now().After(deadline):
			return rev, err
		}
		after = 0
		select {
		case <-ctx.Done():
			return rev, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Update stores value under key if its value is still at revision, or
// fails with bus.ErrKeyChanged.
func (kv *Bucket) Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error) {
	rev, err := kv.write(ctx, func() (uint64, error) { return kv.kv.Update(ctx, key, value, revision) })
	return kv.flush(ctx, rev, err)
}

// Delete removes key's value; watchers see the removal.
func (kv *Bucket) Delete(ctx context.Context, key string) error {
	_, err := kv.write(ctx, func() (uint64, error) { return 0, kv.kv.Delete(ctx, key) })
	_, err = kv.flush(ctx, 0, err)
	return err
}

// Purge removes key's value and its history.
func (kv *Bucket) Purge(ctx context.Context, key string) error {
	_, err := kv.write(ctx, func() (uint64, error) { return 0, kv.kv.Purge(ctx, key) })
	_, err = kv.flush(ctx, 0, err)
	return err
}

// Keys lists the keys that have a value (none is not an error).
func (kv *Bucket) Keys(ctx context.Context) ([]string, error) {
	keys, err := kv.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	return keys, err
}

// List returns every value now in the bucket, in revision order.
func (kv *Bucket) List(ctx context.Context) ([]bus.Entry, error) {
	var out []bus.Entry
	err := kv.watch(ctx, func(e *bus.Entry) bool {
		if e == nil {
			return false
		}
		out = append(out, *e)
		return true
	}, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Watch calls fn with every value now in the bucket, then with nil, then
// with each change as it is made (removals with Deleted set), in revision
// order on one goroutine, until ctx ends (it returns nil then).
//
// A watch whose start the cluster does not answer (this master cut off
// from the others, or the bucket between leaders) is started again until
// it is, rather than ending: the master's work that follows a bucket (the
// mine's DNS and DHCP, agent keys) must outlive a partition. Once started
// the watch follows the bucket across such faults itself (JetStream's
// ordered consumer recreates itself), so fn has seen nothing before a
// start succeeds. Other errors (the bucket gone, the connection closed)
// are returned.
func (kv *Bucket) Watch(ctx context.Context, fn func(*bus.Entry)) error {
	live := false
	for failures := 1; ; failures++ {
		err := kv.watch(ctx, func(e *bus.Entry) bool {
			switch {
			case e == nil:
				live = true
			case e.Deleted && !live:
				return true // the marker of a value removed before the watch began
			}
			fn(e)
			return true
		})
		switch {
		case ctx.Err() != nil:
			return nil
		case !unanswered(err):
			return err
		}
		wait := backoff.Delay(time.Second, 8*time.Second, failures)
		kv.b.cfg.Logger.Warn("natsbus: the start of a key-value watch was not answered; starting it again",
			"bucket", kv.Name(), "in", wait, "err", err)
		if !backoff.Sleep(ctx, wait) {
			return nil
		}
	}
}

// watch feeds fn until it returns false (then it returns nil) or ctx ends
// (then ctx's error).
func (kv *Bucket) watch(ctx context.Context, fn func(*bus.Entry) bool, opts ...jetstream.WatchOpt) error {
	w, err := kv.kv.WatchAll(ctx, opts...)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		fn(nil)
		return nil
	}
	if err != nil {
		return fmt.Errorf("key-value %s: watch: %w", kv.Name(), err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("key-value %s: watch ended: the connection closed", kv.Name())
			}
			var be *bus.Entry
			if e != nil {
				v := entry(e)
				be = &v
			}
			if !fn(be) {
				return nil
			}
		}
	}
}
