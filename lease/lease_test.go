package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
)

func bucket(t *testing.T, ttl time.Duration) *natsbus.Bucket {
	t.Helper()
	ctx := context.Background()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	kv, err := b.Bucket(ctx, BucketConfig(ttl))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func TestOneHolderAtATime(t *testing.T) {
	const ttl = time.Second
	kv := bucket(t, ttl)
	ctx := context.Background()
	a, b := New(kv, "m1", ttl), New(kv, "m2", ttl)

	la, err := a.Acquire(ctx, "ddns")
	if err != nil {
		t.Fatal(err)
	}
	var held *ErrHeld
	if _, err := b.Acquire(ctx, "ddns"); !errors.As(err, &held) || held.Holder.Master != "m1" {
		t.Fatalf("second master: %v, want held by m1", err)
	}
	// Shared within a master; renewed past the TTL.
	la2, err := a.Acquire(ctx, "ddns")
	if err != nil || la2 != la {
		t.Fatalf("same master again: %v", err)
	}
	time.Sleep(3 * ttl)
	if la.Context().Err() != nil {
		t.Fatalf("lost while renewed: %v", context.Cause(la.Context()))
	}
	if _, err := b.Acquire(ctx, "ddns"); !errors.As(err, &held) {
		t.Fatalf("renewed lease taken: %v", err)
	}
	h, err := b.Holders(ctx)
	if err != nil || h["ddns"].Master != "m1" {
		t.Fatalf("holders: %v %v", h, err)
	}
	// Released by both uses: the other master takes it at once.
	la2.Release()
	if _, err := b.Acquire(ctx, "ddns"); err == nil {
		t.Fatal("taken while one use remained")
	}
	la.Release()
	lb, err := b.Acquire(ctx, "ddns")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	lb.Release()
}

func TestRestartedMasterTakesItsLeaseOver(t *testing.T) {
	kv := bucket(t, time.Second)
	ctx := context.Background()
	if _, err := New(kv, "m1", time.Second).Acquire(ctx, "master.m1"); err != nil {
		t.Fatal(err)
	}
	// The same id, a new run: takes over without waiting for the TTL; the
	// first run's lease is lost at its next renewal.
	if _, err := New(kv, "m1", time.Second).Acquire(ctx, "master.m1"); err != nil {
		t.Fatalf("restarted master: %v", err)
	}
}

func TestDeadHolderIsReplacedAndFenced(t *testing.T) {
	const ttl = time.Second
	kv := bucket(t, ttl)
	ctx := context.Background()
	a, b := New(kv, "m1", ttl), New(kv, "m2", ttl)
	la, err := a.Acquire(ctx, "orch.1")
	if err != nil {
		t.Fatal(err)
	}
	// m1 hangs: its renewals stop (as a SIGSTOPped master's would).
	la.lose(errors.New("hung"))
	<-la.done
	start := time.Now()
	lb, err := b.Wait(ctx, "orch.1")
	if err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	if waited > 2*ttl {
		t.Fatalf("took over after %v, want within the TTL (%v) and a poll", waited, ttl)
	}

	// Run: fn runs only while the lease is held, again after it is won back.
	runs := 0
	rctx, cancel := context.WithTimeout(ctx, 4*ttl)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- a.Run(rctx, "orch.1", func(ctx context.Context) error { runs++; <-ctx.Done(); return nil })
	}()
	time.Sleep(ttl / 2)
	if runs != 0 {
		t.Fatal("ran while another master held the lease")
	}
	lb.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Fatalf("ran %d times after the holder released, want 1", runs)
	}
}

// racyBucket loses the first creates of every key to another writer, as
// two masters taking one lease at the same moment do: the create finds
// the key present, and the read after it finds it gone again (expired).
type racyBucket struct {
	bus.Bucket
	lose int
	err  error // what a lost create returns (ErrKeyChanged when nil)
}

func (r *racyBucket) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	if r.lose > 0 {
		r.lose--
		if r.err != nil {
			return 0, r.err
		}
		return 0, fmt.Errorf("create %s: %w", key, bus.ErrKeyChanged)
	}
	return r.Bucket.Create(ctx, key, value)
}

// TestWaitSurvivesALostRace: a master that loses the race for a key, or
// finds the store unavailable for a moment, polls again rather than
// failing the work that waits for the lease (the chaos suite saw masters
// exit on both).
func TestWaitSurvivesALostRace(t *testing.T) {
	const ttl = time.Second
	kv := &racyBucket{Bucket: bucket(t, ttl), lose: 2}
	s := New(kv, "m1", ttl)
	if _, err := s.Acquire(context.Background(), "ddns"); !errors.Is(err, bus.ErrKeyChanged) {
		t.Fatalf("Acquire after a lost race: %v, want ErrKeyChanged", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kv.lose = 2
	l, err := s.Wait(ctx, "ddns")
	if err != nil {
		t.Fatalf("Wait after lost races: %v", err)
	}
	l.Release()

	kv.lose, kv.err = 3, errors.New("nats: API error: code=503 err_code=10008 description=JetStream system temporarily unavailable")
	if l, err = s.Wait(ctx, "ddns"); err != nil {
		t.Fatalf("Wait while the store is unavailable: %v", err)
	}
	l.Release()
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	kv.lose = 1000
	if _, err := s.Wait(ctx, "other"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on a store that keeps failing: %v, want the context's end", err)
	}
}
