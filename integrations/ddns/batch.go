package ddns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// maxBatch bounds how many updates one combined message carries.
const maxBatch = 64

// Updates to one zone that callers make at the same time are sent as one
// UPDATE message: BIND writes and syncs its journal once per message, so a
// burst of registrations costs one disk sync per batch instead of one per
// host (group commit). A caller alone is sent at once; callers arriving
// while a message is in flight form the next batch.
//
// Two rules keep batching invisible. Updates touching a common name never
// share a message: RFC 2136 checks every prerequisite before making any
// change, so two writers of one name in one message would both pass their
// "nothing changed since I read it" checks. And when a combined message
// fails, each update is sent again alone, so that each caller gets its own
// answer (the prerequisite, the policy or the key that failed is its own).

type batchKey struct{ server, zone, key string }

type pendingUpdate struct {
	m     *dns.Msg
	t     target
	names map[string]bool
	done  chan error
}

type batcher struct {
	mu    sync.Mutex
	queue []*pendingUpdate
	busy  bool
}

// send sends an UPDATE, batched with concurrent ones to the same zone. A
// caller whose ctx ends gets ctx.Err() at once, but an update already
// queued is still sent (as an update whose answer was lost would be).
func (c *Client) send(ctx context.Context, t target, m *dns.Msg) error {
	k := batchKey{server: t.server, zone: t.zone}
	if t.key != nil {
		k.key = t.key.id()
	}
	c.mu.Lock()
	b := c.batchers[k]
	if b == nil {
		b = &batcher{}
		c.batchers[k] = b
	}
	c.mu.Unlock()
	p := &pendingUpdate{m: m, t: t, names: ownerNames(m), done: make(chan error, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, p)
	if !b.busy {
		b.busy = true
		go b.run()
	}
	b.mu.Unlock()
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run sends batches until the queue is empty.
func (b *batcher) run() {
	for {
		b.mu.Lock()
		batch := b.take()
		if len(batch) == 0 {
			b.busy = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.sendBatch(batch)
	}
}

// take removes from the queue the oldest updates whose names are disjoint,
// at most maxBatch of them.
func (b *batcher) take() []*pendingUpdate {
	var batch, rest []*pendingUpdate
	used := map[string]bool{}
	for _, p := range b.queue {
		if len(batch) == maxBatch || overlaps(used, p.names) {
			rest = append(rest, p)
			continue
		}
		for n := range p.names {
			used[n] = true
		}
		batch = append(batch, p)
	}
	b.queue = rest
	return batch
}

func overlaps(used, names map[string]bool) bool {
	for n := range names {
		if used[n] {
			return true
		}
	}
	return false
}

func (b *batcher) sendBatch(batch []*pendingUpdate) {
	ctx := context.Background() // each exchange is bounded by the target's timeout and retries
	if len(batch) == 1 {
		_, err := exchange(ctx, batch[0].t, batch[0].m)
		batch[0].done <- err
		return
	}
	m := newUpdate(batch[0].t.zone)
	for _, p := range batch {
		m.Answer = append(m.Answer, p.m.Answer...)
		m.Ns = append(m.Ns, p.m.Ns...)
	}
	_, err := exchange(ctx, batch[0].t, m)
	if err == nil || zoneWide(err) {
		// The same answer for all: asking again alone would only repeat it.
		for _, p := range batch {
			p.done <- err
		}
		return
	}
	var wg sync.WaitGroup
	for _, p := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := exchange(ctx, p.t, p.m)
			p.done <- err
		}()
	}
	wg.Wait()
}

// zoneWide reports whether err answers every update to the zone alike,
// whatever names it touches: no server answered, the server does not serve
// the zone, or it rejected the key. A refusal, a NOTZONE or a failed
// prerequisite may be one update's own and is not.
func zoneWide(err error) bool {
	return errors.Is(err, ErrUnreachable) || errors.Is(err, ErrNoZone) || errors.Is(err, ErrKeyRejected)
}

// ownerNames are the names an update's prerequisites and changes touch.
func ownerNames(m *dns.Msg) map[string]bool {
	names := map[string]bool{}
	for _, rr := range append(m.Answer[:len(m.Answer):len(m.Answer)], m.Ns...) {
		names[strings.ToLower(rr.Header().Name)] = true
	}
	return names
}

// id tells keys apart by name, algorithm and secret without showing it.
func (k *Key) id() string {
	sum := sha256.Sum256(k.secret)
	return k.Name + k.Algorithm + hex.EncodeToString(sum[:8])
}
