package natsbus

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/fnmatch"
)

func openBus(t *testing.T, dir string) *Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Open(ctx, Config{Dir: dir})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return b
}

func mustEvent(t *testing.T, tag string, data map[string]any) *bus.Event {
	t.Helper()
	ev, err := bus.NewEvent(tag, data, bus.Origin{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestSubjectInjective(t *testing.T) {
	tags := []string{"a/b", "a.b", "a/b/", "a//b", "a%2Fb", "a/b c", "a*b", "a/>/b", "a/%", "a/%25", "a/", "/a", "salt/cloud/web1.example.com/created", "ü/x"}
	seen := map[string]string{}
	for _, tag := range tags {
		s := Subject(tag)
		if other, dup := seen[s]; dup {
			t.Errorf("Subject(%q) = Subject(%q) = %q", tag, other, s)
		}
		seen[s] = tag
	}
	cases := map[string]string{
		"salt/job/1/new":   "ev.salt.job.1.new",
		"a.b/c d":          "ev.a%2Eb.c%20d",
		"a//b":             "ev.a.%.b",
		"x/*/>":            "ev.x.%2A.%3E",
		"salt/cloud/vm/x%": "ev.salt.cloud.vm.x%25",
	}
	for tag, want := range cases {
		if got := Subject(tag); got != want {
			t.Errorf("Subject(%q) = %q, want %q", tag, got, want)
		}
	}
}

func TestFilterSubject(t *testing.T) {
	cases := map[string]string{
		"":                     "ev.>",
		"salt/job/*":           "ev.salt.job.>",
		"salt/job*":            "ev.salt.>",
		"salt/cloud/*/created": "ev.salt.cloud.>",
		"salt/auth":            "ev.salt.auth",
		"*":                    "ev.>",
		"[sb]alt/x":            "ev.>",
		"my.co/app/*":          "ev.my%2Eco.app.>",
	}
	for pat, want := range cases {
		var g *fnmatch.Glob
		if pat != "" {
			g = fnmatch.Compile(pat)
		}
		if got := filterSubject(g); got != want {
			t.Errorf("filterSubject(%q) = %q, want %q", pat, got, want)
		}
	}
}

func TestPublishSubscribeDedupReplay(t *testing.T) {
	dir := t.TempDir()
	b := openBus(t, dir)
	ctx := context.Background()

	var mu sync.Mutex
	var got []*bus.Event
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: "salt/cloud/*/created"}, func(ev *bus.Event) {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()

	tags := []string{"salt/cloud/web1/created", "salt/cloud/web1/creating", "salt/cloud/a.b c/created", "other/salt/cloud/x/created"}
	var sent []*bus.Event
	for _, tag := range tags {
		ev := mustEvent(t, tag, map[string]any{"name": "web1"})
		if err := b.Publish(ctx, ev); err != nil {
			t.Fatalf("publish %s: %v", tag, err)
		}
		sent = append(sent, ev)
	}
	// A re-sent event is stored once.
	if err := b.Publish(ctx, sent[0]); err != nil {
		t.Fatalf("re-publish: %v", err)
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 2 })
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	if len(got) != 2 || got[0].ID != sent[0].ID || got[1].ID != sent[2].ID {
		t.Fatalf("subscriber got %d events %v, want web1/created and 'a.b c'/created once each", len(got), tagsOf(got))
	}
	if got[0].Seq == 0 || got[1].Seq <= got[0].Seq {
		t.Errorf("sequences not increasing: %d, %d", got[0].Seq, got[1].Seq)
	}
	mu.Unlock()
	last, err := b.LastSeq(ctx)
	if err != nil || last != Position(4, 0) {
		t.Fatalf("LastSeq = %d, %v; want %d (the duplicate not stored)", last, err, Position(4, 0))
	}

	// Survives a restart, and replays from an id, a seq and a time.
	if err := b.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	b = openBus(t, dir)
	defer b.Close()
	for _, tc := range []struct {
		name  string
		since bus.Since
		want  []string
	}{
		{"after id", bus.Since{AfterID: sent[0].ID}, []string{tags[1], tags[2], tags[3]}},
		{"after seq", bus.Since{AfterSeq: Position(2, 0)}, []string{tags[2], tags[3]}},
		{"time", bus.Since{Time: sent[0].Time.Add(-time.Second)}, tags},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := make(chan *bus.Event, 10)
			sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Since: tc.since}, func(ev *bus.Event) { ch <- ev })
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Stop()
			for i, want := range tc.want {
				select {
				case ev := <-ch:
					if ev.Tag != want {
						t.Fatalf("event %d: tag %q, want %q", i, ev.Tag, want)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("event %d (%s) not replayed", i, want)
				}
			}
		})
	}
	if _, err := b.Subscribe(ctx, bus.SubscribeOptions{Since: bus.Since{AfterID: mustEvent(t, "x", nil).ID}}, func(*bus.Event) {}); err == nil {
		t.Error("subscribing after an id that was never stored succeeded")
	}
}

func TestConsumeRedeliversUntilAcked(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	ctx := context.Background()
	for i := range 5 {
		if err := b.Publish(ctx, mustEvent(t, fmt.Sprintf("salt/job/%d/new", i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Publish(ctx, mustEvent(t, "salt/auth", nil)); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		tag     string
		attempt int
	}
	ch := make(chan seen, 100)
	consume := func() bus.Subscription {
		sub, err := b.Consume(ctx, bus.ConsumerConfig{Name: "test", Pattern: "salt/job/*", AckWait: time.Second}, func(ctx context.Context, d *bus.Delivery) {
			ch <- seen{d.Event.Tag, d.Attempt}
			switch {
			case d.Event.Tag == "salt/job/1/new" && d.Attempt == 1:
				_ = d.Nak(0)
			case d.Event.Tag == "salt/job/2/new":
				// never acked in the first session: redelivered later
			default:
				_ = d.Ack()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return sub
	}
	sub := consume()
	counts := map[string]int{}
	deadline := time.After(10 * time.Second)
	for counts["salt/job/1/new"] < 2 || len(counts) < 5 {
		select {
		case s := <-ch:
			if s.tag == "salt/auth" {
				t.Fatal("consumer got an event its pattern does not match")
			}
			counts[s.tag]++
		case <-deadline:
			t.Fatalf("deliveries so far: %v", counts)
		}
	}
	sub.Stop()
	// A new consumer session with the same name gets the unacked event again.
	sub = consume()
	defer sub.Stop()
	for {
		select {
		case s := <-ch:
			if s.tag == "salt/job/2/new" && s.attempt >= 2 {
				return
			}
			if s.tag != "salt/job/2/new" {
				t.Fatalf("acked event %s delivered again (attempt %d)", s.tag, s.attempt)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("unacked event not redelivered to the next session")
		}
	}
}

func TestPublishRejectsInvalid(t *testing.T) {
	b, err := Open(context.Background(), Config{Dir: t.TempDir(), MaxEventSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	big := mustEvent(t, "x/big", map[string]any{"blob": string(make([]byte, 2000))})
	if err := b.Publish(context.Background(), big); err == nil {
		t.Fatal("oversize event accepted")
	}
	bad := mustEvent(t, "x", nil)
	bad.Tag = ""
	if err := b.Publish(context.Background(), bad); err == nil {
		t.Fatal("empty tag accepted")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tagsOf(evs []*bus.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Tag
	}
	return out
}
