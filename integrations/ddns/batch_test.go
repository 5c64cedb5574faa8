package ddns

import (
	"testing"

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
