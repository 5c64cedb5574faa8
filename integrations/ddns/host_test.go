package ddns

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/integrations/ddns/named"
)

// TestReplacedAddressLeavesNoPTR plays, step by step, the interleaving of
// two add_host calls on one name that the forward-first order opens: the
// slow writer has written its A record but not yet its PTR when the fast
// one replaces the address, finds no PTR to remove, and finishes. The slow
// writer's PTR must not outlive its address.
func TestReplacedAddressLeavesNoPTR(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := named.Start(ctx, named.Config{Zones: []string{"example.test", "0.20.10.in-addr.arpa"}, Keys: []named.Key{{Name: "k"}}})
	if err != nil {
		t.Fatalf("starting BIND: %v", err)
	}
	defer s.Close()
	host, port, _ := net.SplitHostPort(s.Addr)
	p, _ := strconv.Atoi(port)
	cfg := Config{Settings: Settings{Nameserver: host, Port: p, Keyname: "k", Timeout: 2}, Keys: map[string]InlineKey{"k": {Secret: s.Key("k").Secret}}}
	slow, fast := New(cfg), New(cfg)
	old, cur := netip.MustParseAddr("10.20.0.1"), netip.MustParseAddr("10.20.0.2")

	k, err := slow.prepare("example.test", "race", "", "", Settings{}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint16][]dns.RR{dns.TypeA: {addrRR(k.fq, k.t.ttl, old)}}
	if _, _, err := slow.setForward(ctx, k.t, k.fq, want, []uint16{dns.TypeA}, k.ch); err != nil {
		t.Fatal(err)
	}
	if _, err := fast.AddHost(ctx, "example.test", "race", []netip.Addr{cur}, Settings{}); err != nil {
		t.Fatal(err)
	}
	ch := &Change{}
	if _, err := slow.linkPTRs(ctx, Settings{}, k.t, k.fq, []netip.Addr{old}, ch); err != nil {
		t.Fatal(err)
	}

	ptr := func(a netip.Addr) []string {
		rev, _ := dns.ReverseAddr(a.String())
		m := new(dns.Msg)
		m.SetQuestion(rev, dns.TypePTR)
		r, _, err := new(dns.Client).Exchange(m, s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, rr := range r.Answer {
			if p, ok := rr.(*dns.PTR); ok {
				out = append(out, p.Ptr)
			}
		}
		return out
	}
	if got := ptr(old); len(got) != 0 {
		t.Errorf("PTR of the replaced address %s: %v", old, got)
	}
	if got := ptr(cur); !slices.Equal(got, []string{"race.example.test."}) {
		t.Errorf("PTR of the current address %s: %v", cur, got)
	}
	if len(ch.Removed) != 1 {
		t.Errorf("change %+v: the PTR written and removed again should be reported", ch)
	}
}
