package natsbus

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/brinehq/brine/bus"
)

// publishConcurrently publishes n events tagged by tag(i) from n goroutines
// at once, so that they queue up and leave in batches.
func publishConcurrently(t *testing.T, b *Bus, n int, tag func(int) string) []*bus.Event {
	t.Helper()
	evs := make([]*bus.Event, n)
	for i := range evs {
		evs[i] = mustEvent(t, tag(i), map[string]any{"i": i})
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, ev := range evs {
		wg.Go(func() { errs <- b.Publish(context.Background(), ev) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return evs
}

func streamMessages(t *testing.T, b *Bus) uint64 {
	t.Helper()
	info, err := b.stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// collect subscribes with opts and returns a function that waits for n
// events and then checks that no more arrive.
func collect(t *testing.T, b *Bus, opts bus.SubscribeOptions) func(n int) []*bus.Event {
	t.Helper()
	var mu sync.Mutex
	var got []*bus.Event
	sub, err := b.Subscribe(context.Background(), opts, func(ev *bus.Event) {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	return func(n int) []*bus.Event {
		t.Helper()
		waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= n })
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		if len(got) != n {
			t.Fatalf("%s: got %d events, want %d", opts.Pattern, len(got), n)
		}
		return append([]*bus.Event(nil), got...)
	}
}

func TestBatchedPublishKeepsEveryEventOnceInOrder(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	all := collect(t, b, bus.SubscribeOptions{})
	odd := collect(t, b, bus.SubscribeOptions{Pattern: "app/odd/*"})
	const n = 400
	sent := publishConcurrently(t, b, n, func(i int) string { return fmt.Sprintf("app/%s/%d", []string{"even", "odd"}[i%2], i) })

	if msgs := streamMessages(t, b); msgs >= n {
		t.Fatalf("%d concurrent events took %d messages: nothing was batched", n, msgs)
	}
	got := all(n)
	ids := map[string]bool{}
	for i, ev := range got {
		if ids[ev.ID] {
			t.Fatalf("event %s delivered twice", ev.ID)
		}
		ids[ev.ID] = true
		if i > 0 && ev.Seq <= got[i-1].Seq {
			t.Fatalf("position %d after %d", ev.Seq, got[i-1].Seq)
		}
	}
	for _, ev := range sent {
		if !ids[ev.ID] {
			t.Fatalf("event %s (%s) lost", ev.ID, ev.Tag)
		}
	}
	for _, ev := range odd(n / 2) {
		if ev.Tag[:8] != "app/odd/" {
			t.Fatalf("app/odd/* got %s", ev.Tag)
		}
	}
	last, err := b.LastSeq(context.Background())
	if err != nil || last != got[n-1].Seq {
		t.Fatalf("LastSeq = %d, %v; want the newest event's position %d", last, err, got[n-1].Seq)
	}

	// Resuming from any position, also one inside a batch, gives exactly
	// what follows it; so does resuming from an id.
	var inside int
	for i := 1; i < n; i++ {
		if _, idx := splitPosition(got[i].Seq); idx > 0 {
			inside = i
			break
		}
	}
	if inside == 0 {
		t.Fatal("no event stored inside a batch")
	}
	for name, since := range map[string]bus.Since{
		"position": {AfterSeq: got[inside].Seq},
		"id":       {AfterID: got[inside].ID},
	} {
		t.Run(name, func(t *testing.T) {
			rest := collect(t, b, bus.SubscribeOptions{Since: since})(n - inside - 1)
			if rest[0].ID != got[inside+1].ID {
				t.Fatalf("resumed at %s (%d), want %s (%d)", rest[0].ID, rest[0].Seq, got[inside+1].ID, got[inside+1].Seq)
			}
		})
	}
}

func TestBatchedEventsAreDeduplicatedAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	b := openBus(t, dir)
	sent := publishConcurrently(t, b, 200, func(i int) string { return fmt.Sprintf("dup/%d", i) })
	before := streamMessages(t, b)
	if before >= 200 {
		t.Fatalf("200 concurrent events took %d messages: nothing was batched", before)
	}
	resend := func(b *Bus) {
		t.Helper()
		var wg sync.WaitGroup
		for _, ev := range sent {
			wg.Go(func() {
				if err := b.Publish(context.Background(), ev); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if after := streamMessages(t, b); after != before {
			t.Fatalf("re-sending stored events added %d messages", after-before)
		}
	}
	resend(b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openBus(t, dir)
	defer b.Close()
	resend(b)
	// A new event is still stored.
	if err := b.Publish(context.Background(), mustEvent(t, "dup/new", nil)); err != nil {
		t.Fatal(err)
	}
	if after := streamMessages(t, b); after != before+1 {
		t.Fatalf("a new event after the re-sends: %d messages, want %d", after, before+1)
	}
}

func TestConsumeBatchRedeliversOnlyWhatWasNotAcked(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	const n = 300
	publishConcurrently(t, b, n, func(i int) string { return fmt.Sprintf("job/%d", i) })
	if msgs := streamMessages(t, b); msgs >= n {
		t.Fatalf("%d concurrent events took %d messages: nothing was batched", n, msgs)
	}
	var mu sync.Mutex
	count := map[string]int{}
	total := 0
	sub, err := b.Consume(context.Background(), bus.ConsumerConfig{Name: "batch", Pattern: "job/*", AckWait: 5 * time.Second},
		func(_ context.Context, d *bus.Delivery) {
			mu.Lock()
			count[d.Event.Tag]++
			total++
			first := count[d.Event.Tag] == 1
			mu.Unlock()
			if d.Event.Tag == "job/7" && first {
				_ = d.Nak(0)
				return
			}
			_ = d.Ack()
		})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return total >= n+1 })
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for tag, c := range count {
		if want := map[bool]int{true: 2, false: 1}[tag == "job/7"]; c != want {
			t.Errorf("%s delivered %d times, want %d", tag, c, want)
		}
	}
	if len(count) != n {
		t.Errorf("%d distinct events delivered, want %d", len(count), n)
	}
}

func TestIDIndex(t *testing.T) {
	x := newIDIndex(time.Minute)
	t0 := time.Unix(1000, 0)
	steps := []struct {
		op   string
		id   string
		at   time.Duration
		want bool
	}{
		{"add", "a", 0, true},
		{"add", "a", time.Second, false},
		{"add", "b", time.Second, true},
		{"remove", "b", time.Second, true},
		{"add", "b", 2 * time.Second, true},
		{"add", "a", 61 * time.Second, true}, // out of the window
		{"add", "b", 61 * time.Second, false},
	}
	for i, s := range steps {
		if s.op == "remove" {
			x.remove(s.id)
			continue
		}
		if got := x.add(s.id, t0.Add(s.at)); got != s.want {
			t.Errorf("step %d: add(%s) at +%s = %v, want %v", i, s.id, s.at, got, s.want)
		}
	}
}

// FuzzDecodeMessage feeds stored messages, single or batch, to the reader:
// whatever it accepts has the declared number of events at increasing
// positions, and nothing panics.
func FuzzDecodeMessage(f *testing.F) {
	ev1, _ := bus.NewEvent("a/b", map[string]any{"x": 1}, bus.Origin{})
	ev2, _ := bus.NewEvent("c", nil, bus.Origin{})
	e1, _ := ev1.Validate(0)
	e2, _ := ev2.Validate(0)
	f.Add("", e1)
	f.Add("2", append(append(append([]byte{}, e1...), '\n'), e2...))
	f.Add("3", append(append(append([]byte{}, e1...), '\n'), e2...))
	f.Add("x", e1)
	f.Fuzz(func(t *testing.T, count string, data []byte) {
		h := nats.Header{}
		if count != "" {
			h.Set(batchHeader, count)
		}
		evs, err := decodeMessage(h, data, 7)
		if err != nil {
			return
		}
		if count != "" && strconv.Itoa(len(evs)) != count {
			t.Fatalf("header %q, %d events", count, len(evs))
		}
		for i, ev := range evs {
			if ev.Seq != Position(7, i) {
				t.Fatalf("event %d at %d", i, ev.Seq)
			}
		}
	})
}
