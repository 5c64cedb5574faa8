package ddns_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/integrations/ddns"
	"github.com/brinehq/brine/mine"
)

// TestSyncWithMine starts the built-in sync on a zone that is out of date
// (a stale owned host, a host at an old address, a hand-made record) and a
// mine filled from salt-cloud events: the start-up reconcile fixes the zone
// from a signed AXFR, then created and destroyed events are followed.
func TestSyncWithMine(t *testing.T) {
	s := startNamed(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := config(t, s, "ddns-key")
	cfg.Ownership, cfg.Owner = true, "master1"
	cfg.Sync = &ddns.SyncConfig{Zone: "example.test", Targets: "web*"}
	c := ddns.New(cfg)

	// The zone as a previous master left it.
	for name, ip := range map[string]string{"gone": "10.20.0.91", "web1": "10.20.0.92"} {
		if _, err := c.AddHost(ctx, "example.test", name, addrs(t, ip), ddns.Settings{}); err != nil {
			t.Fatal(err)
		}
	}
	rawUpdate(t, s, "example.test", "hand.example.test. 60 IN A 10.20.0.90")

	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	kv, err := b.Bucket(ctx, mine.BucketConfig)
	if err != nil {
		t.Fatal(err)
	}
	store := mine.New(kv)
	cloud := func(tag string, data map[string]any) {
		t.Helper()
		ev, err := bus.NewEvent(tag, data, bus.Origin{Source: "brine://test/cloud"})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Apply(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	cloud("salt/cloud/web1/created", map[string]any{"name": "web1", "private_ips": []any{"10.20.0.93"}})
	cloud("salt/cloud/web2/created", map[string]any{"name": "web2", "private_ips": []any{"10.20.0.94", "2001:db8::94"}})
	cloud("salt/cloud/db1/created", map[string]any{"name": "db1", "private_ips": []any{"10.20.0.95"}})

	var (
		mu     sync.Mutex
		events []string
	)
	fire := func(_ context.Context, tag string, data map[string]any) error {
		mu.Lock()
		events = append(events, tag+" "+data["action"].(string))
		mu.Unlock()
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- c.Sync(ctx, store, fire) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Sync: %v", err)
		}
	}()

	want := func(name string, qtype uint16, values ...string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := lookup(t, s, name, qtype)
			if slices.Equal(got, values) || len(got) == 0 && len(values) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s = %v, want %v", name, dns.TypeToString[qtype], got, values)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	want("web1.example.test", dns.TypeA, "10.20.0.93")
	want("92.0.20.10.in-addr.arpa", dns.TypePTR)
	want("93.0.20.10.in-addr.arpa", dns.TypePTR, "web1.example.test.")
	want("web2.example.test", dns.TypeAAAA, "2001:db8::94")
	want("gone.example.test", dns.TypeA)
	want("91.0.20.10.in-addr.arpa", dns.TypePTR)
	want("db1.example.test", dns.TypeA) // not targeted
	want("hand.example.test", dns.TypeA, "10.20.0.90")

	// Live: a new host, an address change, a destroyed host.
	cloud("salt/cloud/web3/created", map[string]any{"name": "web3", "private_ips": []any{"10.20.0.96"}})
	want("web3.example.test", dns.TypeA, "10.20.0.96")
	want("96.0.20.10.in-addr.arpa", dns.TypePTR, "web3.example.test.")
	cloud("salt/cloud/web1/created", map[string]any{"name": "web1", "private_ips": []any{"10.20.0.97"}})
	want("web1.example.test", dns.TypeA, "10.20.0.97")
	want("93.0.20.10.in-addr.arpa", dns.TypePTR)
	// Changes faster than updates: the last one wins, no PTR is left over.
	cloud("salt/cloud/web4/created", map[string]any{"name": "web4", "private_ips": []any{"10.20.0.101"}})
	cloud("brine/mine/update", map[string]any{"id": "web4", "ips": []any{"10.20.0.102"}})
	cloud("brine/mine/update", map[string]any{"id": "web4", "ips": []any{"10.20.0.103"}})
	want("web4.example.test", dns.TypeA, "10.20.0.103")
	want("103.0.20.10.in-addr.arpa", dns.TypePTR, "web4.example.test.")
	want("101.0.20.10.in-addr.arpa", dns.TypePTR)
	want("102.0.20.10.in-addr.arpa", dns.TypePTR)
	// An agent reports every address of its interfaces, link-local ones
	// too (as Salt's network.ip_addrs6 does): they mean nothing off their
	// link, and get no record.
	cloud("brine/mine/update", map[string]any{"id": "web4", "ips": []any{"10.20.0.103", "fe80::250:56ff:fe00:1", "2001:db8::103", "169.254.7.7"}})
	want("web4.example.test", dns.TypeAAAA, "2001:db8::103")
	want("web4.example.test", dns.TypeA, "10.20.0.103")
	revLL, _ := dns.ReverseAddr("fe80::250:56ff:fe00:1")
	want(revLL, dns.TypePTR)

	// web2 loses its IPv6 address: its AAAA and that PTR go.
	cloud("brine/mine/update", map[string]any{"id": "web2", "ips": []any{"10.20.0.94"}})
	want("web2.example.test", dns.TypeAAAA)
	want("web2.example.test", dns.TypeA, "10.20.0.94")
	rev6, _ := dns.ReverseAddr("2001:db8::94")
	want(rev6, dns.TypePTR)
	cloud("salt/cloud/web2/destroyed", map[string]any{"name": "web2", "event": "destroyed instance"})
	want("web2.example.test", dns.TypeA)
	want("web2.example.test", dns.TypeAAAA)
	want("94.0.20.10.in-addr.arpa", dns.TypePTR)

	for _, e := range []string{"brine/ddns/example.test/updated reconcile", "brine/ddns/example.test/updated add_host",
		"brine/ddns/example.test/updated delete_host"} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			seen := slices.Clone(events)
			mu.Unlock()
			if slices.Contains(seen, e) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("no %q event in %v", e, seen)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
