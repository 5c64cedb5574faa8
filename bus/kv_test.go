package bus

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
)

// revBucket is a bucket's revision check and nothing else, as WriteAt and
// Change rely on it.
type revBucket struct {
	mu   sync.Mutex
	rev  uint64
	val  map[string][]byte
	revs map[string]uint64
}

func (b *revBucket) get(key string) ([]byte, uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.val[key], b.revs[key]
}

func (b *revBucket) Create(_ context.Context, key string, value []byte) (uint64, error) {
	return b.write(key, value, 0)
}

func (b *revBucket) Update(_ context.Context, key string, value []byte, revision uint64) (uint64, error) {
	return b.write(key, value, revision)
}

func (b *revBucket) write(key string, value []byte, at uint64) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.revs[key] != at {
		return 0, ErrKeyChanged
	}
	b.rev++
	b.val[key], b.revs[key] = value, b.rev
	return b.rev, nil
}

func TestWriteAt(t *testing.T) {
	ctx := context.Background()
	kv := &revBucket{val: map[string][]byte{}, revs: map[string]uint64{}}
	rev, err := WriteAt(ctx, kv, "k", []byte("a"), 0)
	if err != nil || rev != 1 {
		t.Fatalf("create = %d, %v", rev, err)
	}
	if _, err := WriteAt(ctx, kv, "k", []byte("b"), 0); !errors.Is(err, ErrKeyChanged) {
		t.Fatalf("creating a key that exists = %v, want ErrKeyChanged", err)
	}
	if rev, err := WriteAt(ctx, kv, "k", []byte("b"), 1); err != nil || rev != 2 {
		t.Fatalf("update at the revision read = %d, %v", rev, err)
	}
	if _, err := WriteAt(ctx, kv, "k", []byte("c"), 1); !errors.Is(err, ErrKeyChanged) {
		t.Fatalf("update at a stale revision = %v, want ErrKeyChanged", err)
	}
	if v, _ := kv.get("k"); string(v) != "b" {
		t.Fatalf("value %q after a refused write, want b", v)
	}
}

// TestChangeLosesNoIncrement: writers incrementing one counter at once
// each see their increment stored.
func TestChangeLosesNoIncrement(t *testing.T) {
	ctx := context.Background()
	kv := &revBucket{val: map[string][]byte{}, revs: map[string]uint64{}}
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			_, err := Change(ctx, func() (uint64, error) {
				v, rev := kv.get("n")
				n, _ := strconv.Atoi(string(v))
				return WriteAt(ctx, kv, "n", []byte(strconv.Itoa(n+1)), rev)
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if v, _ := kv.get("n"); string(v) != strconv.Itoa(writers) {
		t.Fatalf("counter %s after %d increments", v, writers)
	}
}

func TestChangeStops(t *testing.T) {
	other := errors.New("refused")
	for _, c := range []struct {
		name     string
		results  []error
		want     error
		attempts int
	}{
		{"success", []error{nil}, nil, 1},
		{"after conflicts", []error{ErrKeyChanged, ErrKeyChanged, nil}, nil, 3},
		{"another error", []error{ErrKeyChanged, other}, other, 2},
		{"gives up", nil, ErrKeyChanged, MaxChangeAttempts},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			got, err := Change(context.Background(), func() (int, error) {
				n++
				if n <= len(c.results) {
					return n, c.results[n-1]
				}
				return n, ErrKeyChanged
			})
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) || n != c.attempts {
				t.Errorf("Change = %v after %d attempts, want %v after %d", err, n, c.want, c.attempts)
			}
			// The value of the attempt that ended it; none when it gave up.
			if want := map[bool]int{true: 0, false: n}[errors.Is(err, ErrKeyChanged)]; got != want {
				t.Errorf("Change returned %d, want %d", got, want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Change(ctx, func() (int, error) { return 1, ErrKeyChanged }); !errors.Is(err, context.Canceled) {
		t.Errorf("Change after its context ended = %v", err)
	}
}
