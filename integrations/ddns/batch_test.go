package ddns

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestTakeKeepsNamesApart: updates touching a common name (in a
// prerequisite or a change) never share a message, and order is kept.
func TestTakeKeepsNamesApart(t *testing.T) {
	upd := func(prereq string, changes ...string) *pendingUpdate {
		m := newUpdate("example.test.")
		if prereq != "" {
			m.RRsetNotUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: prereq, Rrtype: dns.TypeA}}})
		}
		for _, c := range changes {
			rr, err := dns.NewRR(c)
			if err != nil {
				t.Fatal(err)
			}
			m.Insert([]dns.RR{rr})
		}
		return &pendingUpdate{m: m, names: ownerNames(m)}
	}
	a1 := upd("a.example.test.", "a.example.test. 60 IN A 10.0.0.1")
	b := upd("", "b.example.test. 60 IN A 10.0.0.2")
	a2 := upd("a.example.test.", "a.example.test. 60 IN A 10.0.0.3")
	c := upd("", "c.example.test. 60 IN A 10.0.0.4", "A.example.test. 60 IN TXT x")
	d := upd("d.example.test.")
	bt := &batcher{queue: []*pendingUpdate{a1, b, a2, c, d}}
	for i, want := range [][]*pendingUpdate{{a1, b, d}, {a2}, {c}, nil} {
		got := bt.take()
		if len(got) != len(want) {
			t.Fatalf("batch %d has %d updates, want %d", i, len(got), len(want))
		}
		for j := range got {
			if got[j] != want[j] {
				t.Errorf("batch %d, update %d is not the expected one", i, j)
			}
		}
	}
	// At most maxBatch per message.
	bt.queue = nil
	for range maxBatch + 3 {
		bt.queue = append(bt.queue, &pendingUpdate{names: map[string]bool{}})
	}
	if n := len(bt.take()); n != maxBatch || len(bt.queue) != 3 {
		t.Errorf("took %d, left %d", n, len(bt.queue))
	}
}

// TestZoneWideFailureIsNotResent: when a combined message fails with an
// answer that concerns the whole zone (no such zone), every update in it
// gets that answer, without being sent again alone; an answer that may be
// one update's own (REFUSED by a per-name policy) makes each be resent.
func TestZoneWideFailureIsNotResent(t *testing.T) {
	const callers = 8
	for _, tc := range []struct {
		name    string
		rcode   int
		want    error
		updates int32
	}{
		// The first update goes alone; the others, sent while it is in
		// flight, form one batch.
		{"NOTAUTH", dns.RcodeNotAuth, ErrNoZone, 2},
		{"NXDOMAIN", dns.RcodeNameError, ErrNoZone, 2},
		{"REFUSED", dns.RcodeRefused, ErrRefused, 2 + callers - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, updates := answering(t, tc.rcode, 200*time.Millisecond)
			tg := target{zone: "example.test.", server: addr, timeout: time.Second}
			c := New(Config{})
			errs := make([]error, callers)
			var wg sync.WaitGroup
			call := func(i int) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rr, _ := dns.NewRR(fmt.Sprintf("h%d.example.test. 60 IN A 10.0.0.%d", i, i+1))
					m := newUpdate("example.test.")
					m.Insert([]dns.RR{rr})
					errs[i] = c.send(context.Background(), tg, m)
				}()
			}
			call(0)
			for updates.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			// The first is at the server, held there: the others queue.
			for i := 1; i < callers; i++ {
				call(i)
			}
			wg.Wait()
			for i, err := range errs {
				if !errors.Is(err, tc.want) {
					t.Errorf("caller %d: %v, want %v", i, err, tc.want)
				}
			}
			if n := updates.Load(); n != tc.updates {
				t.Errorf("%d UPDATEs sent, want %d", n, tc.updates)
			}
		})
	}
}
