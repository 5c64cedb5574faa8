package ddns_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/integrations/ddns"
	"github.com/brinehq/brine/integrations/ddns/named"
)

// Zones of the test server: a forward zone, IPv4 and IPv6 reverse zones at
// two depths each (PTRs must land in the most specific one).
var testZones = []string{
	"example.test",
	"10.in-addr.arpa", "0.20.10.in-addr.arpa",
	"8.b.d.0.1.0.0.2.ip6.arpa", "0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa",
}

// startNamed runs BIND for one test. A machine without bind9 fails the
// test with the reason.
func startNamed(t testing.TB, keys ...named.Key) *named.Server {
	t.Helper()
	if len(keys) == 0 {
		keys = []named.Key{{Name: "ddns-key"}, {Name: "limited", Grant: "name allowed.example.test. A"},
			{Name: "ptronly", Grant: "subdomain 20.10.in-addr.arpa. PTR"}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := named.Start(ctx, named.Config{Zones: testZones, Keys: keys})
	if err != nil {
		t.Fatalf("starting BIND: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// config returns a ddns config pointing at s, signing with key name.
func config(t testing.TB, s *named.Server, key string) ddns.Config {
	t.Helper()
	host, port := splitAddr(t, s.Addr)
	k := s.Key(key)
	return ddns.Config{
		Settings: ddns.Settings{Nameserver: host, Port: port, Keyname: key, Timeout: 2, TTL: 60},
		Keys:     map[string]ddns.InlineKey{k.Name: {Algorithm: k.Algorithm, Secret: k.Secret}},
	}
}

func splitAddr(t testing.TB, addr string) (string, int) {
	t.Helper()
	i := strings.LastIndexByte(addr, ':')
	port, err := strconv.Atoi(addr[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	return addr[:i], port
}

// lookup asks the server for name's records of type qtype, as text data.
func lookup(t testing.TB, s *named.Server, name string, qtype uint16) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, s.Addr)
	if err != nil {
		t.Fatalf("query %s %s: %v", name, dns.TypeToString[qtype], err)
	}
	var out []string
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == qtype {
			out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
	}
	sort.Strings(out)
	return out
}

// zoneOf returns the zone the server puts name in (the SOA owner).
func zoneOf(t testing.TB, s *named.Server, name string) string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeSOA)
	r, _, err := new(dns.Client).Exchange(m, s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range append(r.Answer, r.Ns...) {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Hdr.Name
		}
	}
	return ""
}

// rawUpdate changes the zone directly, as another tool would.
func rawUpdate(t testing.TB, s *named.Server, zone string, insert ...string) {
	t.Helper()
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	for _, txt := range insert {
		rr, err := dns.NewRR(txt)
		if err != nil {
			t.Fatal(err)
		}
		m.Insert([]dns.RR{rr})
	}
	k := s.Key("ddns-key")
	m.SetTsig("ddns-key.", dns.HmacSHA256, 300, time.Now().Unix())
	c := &dns.Client{TsigSecret: map[string]string{"ddns-key.": k.Secret}}
	r, _, err := c.Exchange(m, s.Addr)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		t.Fatalf("raw update: %v %v", err, r)
	}
}

func addrs(t testing.TB, ss ...string) []netip.Addr {
	t.Helper()
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestAddHostAandAAAAWithPTRsInMostSpecificZone(t *testing.T) {
	s := startNamed(t)
	c := ddns.New(config(t, s, "ddns-key"))
	ctx := context.Background()
	ch, err := c.AddHost(ctx, "example.test", "web1", addrs(t, "10.20.0.11", "2001:db8::11"), ddns.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, s, "web1.example.test", dns.TypeA); !slices.Equal(got, []string{"10.20.0.11"}) {
		t.Errorf("A %v", got)
	}
	if got := lookup(t, s, "web1.example.test", dns.TypeAAAA); !slices.Equal(got, []string{"2001:db8::11"}) {
		t.Errorf("AAAA %v", got)
	}
	for _, ip := range []string{"10.20.0.11", "2001:db8::11"} {
		rev, _ := dns.ReverseAddr(ip)
		if got := lookup(t, s, rev, dns.TypePTR); !slices.Equal(got, []string{"web1.example.test."}) {
			t.Errorf("PTR of %s: %v", ip, got)
		}
	}
	// The PTRs are in the most specific reverse zones, not their parents.
	rev4, _ := dns.ReverseAddr("10.20.0.11")
	rev6, _ := dns.ReverseAddr("2001:db8::11")
	for name, want := range map[string]string{rev4: "0.20.10.in-addr.arpa.", rev6: "0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."} {
		if z := zoneOf(t, s, name); z != want {
			t.Errorf("%s is in %s, want %s", name, z, want)
		}
	}
	if len(ch.Added) != 4 || ch.FQDN != "web1.example.test." {
		t.Errorf("change %+v", ch)
	}
	// A second identical call changes nothing in the forward zone.
	ch, err = c.AddHost(ctx, "example.test", "web1.example.test", addrs(t, "10.20.0.11", "2001:db8::11"), ddns.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(ch.Messages, "\n"), "already exists") {
		t.Errorf("repeat: %v", ch.Messages)
	}
}

func TestAddHostReplacesAddressAndPTR(t *testing.T) {
	s := startNamed(t)
	c := ddns.New(config(t, s, "ddns-key"))
	ctx := context.Background()
	if _, err := c.AddHost(ctx, "example.test", "web2", addrs(t, "10.20.0.21"), ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	ch, err := c.AddHost(ctx, "example.test", "web2", addrs(t, "10.20.0.22"), ddns.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, s, "web2.example.test", dns.TypeA); !slices.Equal(got, []string{"10.20.0.22"}) {
		t.Errorf("A after the IP change: %v", got)
	}
	if got := lookup(t, s, "21.0.20.10.in-addr.arpa", dns.TypePTR); len(got) != 0 {
		t.Errorf("stale PTR of the old address: %v", got)
	}
	if got := lookup(t, s, "22.0.20.10.in-addr.arpa", dns.TypePTR); !slices.Equal(got, []string{"web2.example.test."}) {
		t.Errorf("PTR of the new address: %v", got)
	}
	if len(ch.Removed) != 2 {
		t.Errorf("removed %v, want the old A and its PTR", ch.Removed)
	}
}

func TestDeleteHostLeavesOtherRecords(t *testing.T) {
	s := startNamed(t)
	c := ddns.New(config(t, s, "ddns-key"))
	ctx := context.Background()
	if _, err := c.AddHost(ctx, "example.test", "mail", addrs(t, "10.20.0.31", "2001:db8::31"), ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, s, "example.test", `mail.example.test. 60 IN TXT "v=spf1 -all"`, "mail.example.test. 60 IN MX 10 mail.example.test.")
	// Another host's PTR in the same reverse zone is not touched either.
	if _, err := c.AddHost(ctx, "example.test", "other", addrs(t, "10.20.0.32"), ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	ch, err := c.DeleteHost(ctx, "example.test", "mail.example.test.", ddns.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []uint16{dns.TypeA, dns.TypeAAAA} {
		if got := lookup(t, s, "mail.example.test", typ); len(got) != 0 {
			t.Errorf("%s still there: %v", dns.TypeToString[typ], got)
		}
	}
	if got := lookup(t, s, "mail.example.test", dns.TypeTXT); !slices.Equal(got, []string{`"v=spf1 -all"`}) {
		t.Errorf("TXT at the name: %v", got)
	}
	if got := lookup(t, s, "mail.example.test", dns.TypeMX); len(got) != 1 {
		t.Errorf("MX at the name: %v", got)
	}
	for _, ip := range []string{"10.20.0.31", "2001:db8::31"} {
		rev, _ := dns.ReverseAddr(ip)
		if got := lookup(t, s, rev, dns.TypePTR); len(got) != 0 {
			t.Errorf("PTR of %s: %v", ip, got)
		}
	}
	if got := lookup(t, s, "32.0.20.10.in-addr.arpa", dns.TypePTR); len(got) != 1 {
		t.Errorf("the other host's PTR: %v", got)
	}
	if len(ch.Removed) != 4 {
		t.Errorf("removed %v", ch.Removed)
	}
	// Nothing left to delete is not an error.
	ch, err = c.DeleteHost(ctx, "example.test", "mail", ddns.Settings{})
	if err != nil || !strings.Contains(ch.Messages[0], "No matching") {
		t.Errorf("second delete: %v %v", ch, err)
	}
}

func TestServerErrors(t *testing.T) {
	s := startNamed(t)
	ctx := context.Background()
	bad := config(t, s, "ddns-key")
	bad.Keys = map[string]ddns.InlineKey{"ddns-key": {Secret: "c2VjcmV0LXRoYXQtaXMtd3Jvbmc="}}
	unsigned := config(t, s, "ddns-key")
	unsigned.Keyname, unsigned.Keys = "", nil
	unknownKey := config(t, s, "ddns-key")
	unknownKey.Keyname, unknownKey.Keys = "nosuchkey", map[string]ddns.InlineKey{"nosuchkey": {Secret: "c2VjcmV0"}}
	for _, tc := range []struct {
		name string
		cfg  ddns.Config
		host string
		want error
	}{
		{"wrong secret", bad, "web1", ddns.ErrNotAuth},
		{"unknown key", unknownKey, "web1", ddns.ErrNotAuth},
		{"unsigned", unsigned, "web1", ddns.ErrRefused},
		{"key without permission for the name", config(t, s, "limited"), "web1", ddns.ErrRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ddns.New(tc.cfg).AddHost(ctx, "example.test", tc.host, addrs(t, "10.20.0.41"), ddns.Settings{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if got := lookup(t, s, tc.host+".example.test", dns.TypeA); len(got) != 0 {
				t.Errorf("A written anyway: %v", got)
			}
			if got := lookup(t, s, "41.0.20.10.in-addr.arpa", dns.TypePTR); len(got) != 0 {
				t.Errorf("PTR left behind: %v", got)
			}
		})
	}
	// The limited key may write its one name, and only A there.
	lim := ddns.New(config(t, s, "limited"))
	if _, err := lim.Create(ctx, "example.test", "allowed", "A", "10.20.0.42", ddns.Settings{}); err != nil {
		t.Errorf("limited key on its own name: %v", err)
	}
	if _, err := lim.Create(ctx, "example.test", "allowed", "TXT", `"x"`, ddns.Settings{}); !errors.Is(err, ddns.ErrRefused) {
		t.Errorf("limited key, TXT: %v", err)
	}
}

func TestRetriesUntilServerIsBack(t *testing.T) {
	s := startNamed(t)
	cfg := config(t, s, "ddns-key")
	retries := 10
	cfg.Retries = &retries
	cfg.Timeout = 0.5
	c := ddns.New(cfg)
	s.Stop()
	done := make(chan error, 1)
	go func() {
		_, err := c.AddHost(context.Background(), "example.test", "late", addrs(t, "10.20.0.51"), ddns.Settings{})
		done <- err
	}()
	time.Sleep(700 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("returned while the server was down: %v", err)
	default:
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no result 30s after the server came back")
	}
	if got := lookup(t, s, "late.example.test", dns.TypeA); !slices.Equal(got, []string{"10.20.0.51"}) {
		t.Errorf("A %v", got)
	}

	// With the server gone for good, the error says so after the retries.
	s.Stop()
	none := 1
	cfg.Retries = &none
	_, err := ddns.New(cfg).AddHost(context.Background(), "example.test", "late", addrs(t, "10.20.0.52"), ddns.Settings{})
	if !errors.Is(err, ddns.ErrUnreachable) || !strings.Contains(err.Error(), "2 attempts") {
		t.Errorf("server down: %v", err)
	}
}

// TestConcurrentWriters races writers on one name: whoever wins, the name
// ends with one address, and exactly that address has a PTR to it. A writer
// replacing records it had not read would leave PTRs to addresses the name
// no longer has.
func TestConcurrentWriters(t *testing.T) {
	s := startNamed(t)
	const writers, rounds = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := ddns.New(config(t, s, "ddns-key"))
			for r := range rounds {
				ip := netip.AddrFrom4([4]byte{10, 20, 1, byte(w*rounds + r + 1)})
				if _, err := c.AddHost(context.Background(), "example.test", "race", []netip.Addr{ip}, ddns.Settings{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("writer: %v", err)
	}
	a := lookup(t, s, "race.example.test", dns.TypeA)
	if len(a) != 1 {
		t.Fatalf("A records %v, want exactly one", a)
	}
	var pointing []string
	for i := 1; i <= writers*rounds; i++ {
		if got := lookup(t, s, fmt.Sprintf("%d.1.20.10.in-addr.arpa", i), dns.TypePTR); slices.Contains(got, "race.example.test.") {
			pointing = append(pointing, fmt.Sprintf("10.20.1.%d", i))
		}
	}
	if !slices.Equal(pointing, a) {
		t.Errorf("PTRs to race.example.test. from %v, but its address is %v", pointing, a)
	}
}

func TestOwnership(t *testing.T) {
	s := startNamed(t)
	ctx := context.Background()
	cfg := config(t, s, "ddns-key")
	cfg.Ownership, cfg.Owner = true, "master-a"
	a := ddns.New(cfg)
	cfg.Owner = "master-b"
	b := ddns.New(cfg)

	rawUpdate(t, s, "example.test", "foreign.example.test. 60 IN A 10.20.0.61")
	if _, err := a.DeleteHost(ctx, "example.test", "foreign", ddns.Settings{}); !errors.Is(err, ddns.ErrNotOwner) {
		t.Errorf("delete_host of a foreign name: %v", err)
	}
	if _, err := a.AddHost(ctx, "example.test", "foreign", addrs(t, "10.20.0.62"), ddns.Settings{}); !errors.Is(err, ddns.ErrNotOwner) {
		t.Errorf("add_host over a foreign name: %v", err)
	}
	if got := lookup(t, s, "foreign.example.test", dns.TypeA); !slices.Equal(got, []string{"10.20.0.61"}) {
		t.Errorf("foreign A changed: %v", got)
	}
	if got := lookup(t, s, "62.0.20.10.in-addr.arpa", dns.TypePTR); len(got) != 0 {
		t.Errorf("PTR left by a refused add_host: %v", got)
	}

	if _, err := a.AddHost(ctx, "example.test", "mine", addrs(t, "10.20.0.63"), ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, s, "mine.example.test", dns.TypeTXT); !slices.Equal(got, []string{`"heritage=brine,owner=master-a"`}) {
		t.Errorf("owner TXT %v", got)
	}
	if got := lookup(t, s, "63.0.20.10.in-addr.arpa", dns.TypeTXT); len(got) != 1 {
		t.Errorf("owner TXT beside the PTR: %v", got)
	}
	if _, err := b.DeleteHost(ctx, "example.test", "mine", ddns.Settings{}); !errors.Is(err, ddns.ErrNotOwner) {
		t.Errorf("another owner's delete_host: %v", err)
	}
	if _, err := b.AddHost(ctx, "example.test", "other", addrs(t, "10.20.0.63"), ddns.Settings{}); !errors.Is(err, ddns.ErrNotOwner) {
		t.Errorf("another owner taking the address: %v", err)
	}
	// The owner changes and removes its own host.
	if _, err := a.AddHost(ctx, "example.test", "mine", addrs(t, "10.20.0.64"), ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeleteHost(ctx, "example.test", "mine", ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"mine.example.test", "63.0.20.10.in-addr.arpa", "64.0.20.10.in-addr.arpa"} {
		if got := lookup(t, s, n, dns.TypeANY); len(got) != 0 {
			t.Errorf("%s keeps %v", n, got)
		}
	}

	// create/update/delete follow the same rule.
	if _, err := a.Create(ctx, "example.test", "svc", "TXT", `"hello"`, ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Delete(ctx, "example.test", "svc", "TXT", "", ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, s, "svc.example.test", dns.TypeTXT); !slices.Equal(got, []string{`"heritage=brine,owner=master-a"`}) {
		t.Errorf("deleting the TXT RRset must keep the owner record: %v", got)
	}
	if _, err := b.Create(ctx, "example.test", "svc", "A", "10.20.0.65", ddns.Settings{}); !errors.Is(err, ddns.ErrNotOwner) {
		t.Errorf("create at another owner's name: %v", err)
	}
	if _, err := a.Create(ctx, "example.test", "foreign", "TXT", `"x"`, ddns.Settings{}); !errors.Is(err, ddns.ErrNotOwner) {
		t.Errorf("create at a foreign name: %v", err)
	}
	if _, err := a.Delete(ctx, "example.test", "foreign", "", "", ddns.Settings{}); !errors.Is(err, ddns.ErrNotOwner) {
		t.Errorf("delete of a foreign name: %v", err)
	}
	if got := lookup(t, s, "foreign.example.test", dns.TypeA); len(got) != 1 {
		t.Errorf("foreign A after refused calls: %v", got)
	}
}

func TestAlgorithmsAndKeyFiles(t *testing.T) {
	algs := []string{"hmac-md5", "hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"}
	var keys []named.Key
	for _, a := range algs {
		keys = append(keys, named.Key{Name: "k-" + a, Algorithm: a})
	}
	s := startNamed(t, keys...)
	host, port := splitAddr(t, s.Addr)
	dir := t.TempDir()
	ctx := context.Background()
	for i, a := range algs {
		k := s.Key("k-" + a)
		jsonRing := filepath.Join(dir, a+".json")
		bindFile := filepath.Join(dir, a+".key")
		write(t, jsonRing, fmt.Sprintf(`{"%s.": "%s"}`, k.Name, k.Secret))
		write(t, bindFile, fmt.Sprintf("key \"%s\" {\n\talgorithm %s;\n\tsecret \"%s\";\n};\n", k.Name, a, k.Secret))
		for _, tc := range []struct {
			form string
			set  ddns.Settings
			keys map[string]ddns.InlineKey
		}{
			{"salt keyring", ddns.Settings{Keyfile: jsonRing, Keyalgorithm: a}, nil},
			{"bind key file", ddns.Settings{Keyfile: bindFile}, nil},
			{"inline", ddns.Settings{Keyname: k.Name}, map[string]ddns.InlineKey{k.Name: {Algorithm: a, Secret: k.Secret}}},
		} {
			t.Run(a+"/"+tc.form, func(t *testing.T) {
				tc.set.Nameserver, tc.set.Port = host, port
				c := ddns.New(ddns.Config{Settings: tc.set, Keys: tc.keys})
				ip := fmt.Sprintf("10.20.2.%d", i+1)
				if _, err := c.AddHost(ctx, "example.test", "alg"+strconv.Itoa(i), addrs(t, ip), ddns.Settings{}); err != nil {
					t.Fatal(err)
				}
				if got := lookup(t, s, fmt.Sprintf("alg%d.example.test", i), dns.TypeA); !slices.Equal(got, []string{ip}) {
					t.Errorf("A %v", got)
				}
			})
		}
	}
}

// TestLargeAnswersUseTCP reads an RRset too large for a UDP answer: without
// the TCP fallback the truncated answer looks empty and create would try to
// add a record that exists.
func TestLargeAnswersUseTCP(t *testing.T) {
	s := startNamed(t)
	c := ddns.New(config(t, s, "ddns-key"))
	ctx := context.Background()
	long := strings.Repeat("x", 200)
	for i := range 6 {
		if _, err := c.Create(ctx, "example.test", "big", "TXT", fmt.Sprintf(`"%d%s"`, i, long), ddns.Settings{}); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := c.Create(ctx, "example.test", "big", "TXT", `"0`+long+`"`, ddns.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ch.Messages[0], "already exists") {
		t.Errorf("create of an existing record in a large RRset: %v", ch.Messages)
	}
	// A 5 kB update (over 512 bytes, so sent over TCP) replaces the RRset.
	big := strings.TrimSpace(strings.Repeat(`"`+long+`" `, 25))
	if _, err := c.Update(ctx, "example.test", "big", "TXT", big, true, ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, s, "big.example.test", dns.TypeTXT); len(got) != 1 {
		t.Errorf("after replace: %d TXT records", len(got))
	}
}

func TestCreateUpdateDelete(t *testing.T) {
	s := startNamed(t)
	c := ddns.New(config(t, s, "ddns-key"))
	ctx := context.Background()
	msg := func(ch *ddns.Change, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(ch.Messages, "; ")
	}
	for i, st := range []struct {
		op, rdtype, data string
		replace          bool
		want             string
	}{
		{"update", "A", "10.20.0.71", false, "No matching"},
		{"create", "A", "10.20.0.71", false, "Created record of type 'A'"},
		{"create", "A", "10.20.0.71", false, "already exists with ttl of 60"},
		{"update", "A", "10.20.0.72", false, "Updated"},
		{"update", "A", "10.20.0.72", false, "already present"},
		{"update", "A", "10.20.0.73", true, "Updated"},
		{"create", "MX", "10 svc.example.test.", false, "Created"},
		{"delete", "A", "10.20.0.99", false, "No matching"},
		{"delete", "A", "", false, "Deleted"},
	} {
		var got string
		switch st.op {
		case "create":
			got = msg(c.Create(ctx, "example.test", "svc", st.rdtype, st.data, ddns.Settings{}))
		case "update":
			got = msg(c.Update(ctx, "example.test", "svc", st.rdtype, st.data, st.replace, ddns.Settings{}))
		case "delete":
			got = msg(c.Delete(ctx, "example.test", "svc", st.rdtype, st.data, ddns.Settings{}))
		}
		if !strings.Contains(got, st.want) {
			t.Fatalf("step %d (%s %s %s): %q, want %q", i, st.op, st.rdtype, st.data, got, st.want)
		}
	}
	if got := lookup(t, s, "svc.example.test", dns.TypeA); len(got) != 0 {
		t.Errorf("A after deleting the RRset: %v", got)
	}
	if got := lookup(t, s, "svc.example.test", dns.TypeMX); len(got) != 1 {
		t.Errorf("MX after deleting the A RRset: %v", got)
	}
	if got := msg(c.Delete(ctx, "example.test", "svc", "", "", ddns.Settings{})); got != "Deleted DNS record(s)" {
		t.Errorf("delete name: %q", got)
	}
	if got := lookup(t, s, "svc.example.test", dns.TypeANY); len(got) != 0 {
		t.Errorf("left after deleting the name: %v", got)
	}
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	s := startNamed(t)
	ctx := context.Background()
	cfg := config(t, s, "ddns-key")
	c := ddns.New(cfg)
	before := lookup(t, s, "example.test", dns.TypeSOA)
	zc := c.Check(ctx, "example.test")
	if !zc.OK || zc.SOA != "ok" || zc.Update != "ok" || zc.Transfer != "ok" || zc.Records < 3 || zc.Key != "ddns-key (hmac-sha256)" {
		t.Errorf("check %+v", zc)
	}
	if after := lookup(t, s, "example.test", dns.TypeSOA); !slices.Equal(before, after) {
		t.Errorf("check changed the zone: %v -> %v", before, after)
	}
	if zc := ddns.New(config(t, s, "limited")).Check(ctx, "example.test"); zc.OK || !strings.Contains(zc.Update, "REFUSED") || zc.Transfer != "ok" {
		t.Errorf("limited key %+v", zc)
	}
	bad := cfg
	bad.Keys = map[string]ddns.InlineKey{"ddns-key": {Secret: "d3Jvbmc="}}
	if zc := ddns.New(bad).Check(ctx, "example.test"); zc.OK || !strings.Contains(zc.Update, "NOTAUTH") {
		t.Errorf("wrong key %+v", zc)
	}
	if zc := c.Check(ctx, "nothere.test"); zc.OK || !strings.Contains(zc.SOA, "REFUSED") {
		t.Errorf("zone not served %+v", zc)
	}
	rrs, err := c.Transfer(ctx, "example.test")
	if err != nil || len(rrs) < 3 {
		t.Errorf("transfer: %d records, %v", len(rrs), err)
	}
}

// TestFailedAddHostKeepsGoodPTRs: when the forward update fails, no PTR is
// written for the address the name did not get, and the PTR of the address
// it has is kept.
func TestFailedAddHostKeepsGoodPTRs(t *testing.T) {
	s := startNamed(t)
	ctx := context.Background()
	if _, err := ddns.New(config(t, s, "ddns-key")).AddHost(ctx, "example.test", "keep", addrs(t, "10.20.0.71"), ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	// This key may write PTRs but not the forward zone.
	_, err := ddns.New(config(t, s, "ptronly")).AddHost(ctx, "example.test", "keep", addrs(t, "10.20.0.71", "10.20.0.72"), ddns.Settings{})
	if !errors.Is(err, ddns.ErrRefused) {
		t.Fatalf("err %v, want REFUSED", err)
	}
	if got := lookup(t, s, "71.0.20.10.in-addr.arpa", dns.TypePTR); !slices.Equal(got, []string{"keep.example.test."}) {
		t.Errorf("PTR of the address the name has: %v", got)
	}
	if got := lookup(t, s, "72.0.20.10.in-addr.arpa", dns.TypePTR); len(got) != 0 {
		t.Errorf("PTR of the address the name did not get: %v", got)
	}
}

// TestDNSErrorsSayWhatFailed: against BIND, a call that fails on an answer
// no retry can change fails at once, with an error naming the zone the
// request was for (the forward zone, where add_host starts), the server
// that answered and what the answer means.
func TestDNSErrorsSayWhatFailed(t *testing.T) {
	s := startNamed(t)
	ctx := context.Background()
	unsigned := config(t, s, "ddns-key")
	unsigned.Keyname, unsigned.Keys = "", nil
	wrongSecret := config(t, s, "ddns-key")
	wrongSecret.Keys = map[string]ddns.InlineKey{"ddns-key": {Secret: "c2VjcmV0LXRoYXQtaXMtd3Jvbmc="}}
	unknownKey := config(t, s, "ddns-key")
	unknownKey.Keyname, unknownKey.Keys = "nosuchkey", map[string]ddns.InlineKey{"nosuchkey": {Secret: "c2VjcmV0"}}
	addHost := func(zone string) func(*ddns.Client) error {
		return func(c *ddns.Client) error {
			_, err := c.AddHost(ctx, zone, "web", addrs(t, "10.20.0.111", "2001:db8::111"), ddns.Settings{})
			return err
		}
	}
	for _, tc := range []struct {
		name string
		cfg  ddns.Config
		call func(*ddns.Client) error
		is   []error
		want []string // in the message, besides the server's address
		not  []string
	}{
		{"add_host in a zone the server does not serve", config(t, s, "ddns-key"), addHost("notserved.example"),
			[]error{ddns.ErrNoZone, ddns.ErrNotAuth},
			[]string{"update notserved.example at", "NOTAUTH", "not authoritative for notserved.example"},
			[]string{"in-addr.arpa", "reject"}},
		{"delete_host in a zone the server does not serve", config(t, s, "ddns-key"), func(c *ddns.Client) error {
			_, err := c.DeleteHost(ctx, "notserved.example", "web", ddns.Settings{})
			return err
		}, []error{ddns.ErrRefused}, []string{"query notserved.example at", "does not serve"}, nil},
		{"create in a zone the server does not serve", config(t, s, "ddns-key"), func(c *ddns.Client) error {
			_, err := c.Create(ctx, "notserved.example", "web", "A", "10.20.0.111", ddns.Settings{})
			return err
		}, []error{ddns.ErrRefused}, []string{"query notserved.example at", "does not serve"}, nil},
		{"unsigned add_host to a zone that requires TSIG", unsigned, addHost("example.test"),
			[]error{ddns.ErrRefused},
			[]string{"update example.test at", "REFUSED", "no key was used"},
			[]string{"in-addr.arpa", "ip6.arpa"}},
		{"wrong secret", wrongSecret, addHost("example.test"),
			[]error{ddns.ErrKeyRejected, ddns.ErrNotAuth},
			[]string{"update example.test at", "NOTAUTH (BADSIG)", "secret"},
			[]string{"authoritative", "in-addr.arpa"}},
		{"unknown key", unknownKey, addHost("example.test"),
			[]error{ddns.ErrKeyRejected, ddns.ErrNotAuth},
			[]string{"update example.test at", "NOTAUTH (BADKEY)", "does not know key nosuchkey"},
			[]string{"authoritative", "in-addr.arpa"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := tc.call(ddns.New(tc.cfg))
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("failed after %v: an answer that cannot change was retried", d)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, sentinel := range tc.is {
				if !errors.Is(err, sentinel) {
					t.Errorf("%v is not %v", err, sentinel)
				}
			}
			if errors.Is(err, ddns.ErrConflict) {
				t.Errorf("%v is taken for concurrent changes", err)
			}
			for _, w := range append(tc.want, s.Addr) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("%q has %q", err, n)
				}
			}
		})
	}
}

// TestHostCallsAreAllOrNothing: an add_host or delete_host that fails at
// any step leaves the forward and reverse records as they were before the
// call; in particular no PTR answers for a name that did not get the
// address. The "fwdonly" key may change A and AAAA records but no PTR,
// which makes the reverse step fail after the forward one succeeded.
func TestHostCallsAreAllOrNothing(t *testing.T) {
	s := startNamed(t, named.Key{Name: "ddns-key"}, named.Key{Name: "fwdonly", Grant: "zonesub A AAAA"})
	ctx := context.Background()
	admin := ddns.New(config(t, s, "ddns-key"))
	unsigned := config(t, s, "ddns-key")
	unsigned.Keyname, unsigned.Keys = "", nil
	// split writes with fwdonly, except PTRs under 10.20.0/24, which it
	// writes with ddns-key.
	split := config(t, s, "fwdonly")
	k := s.Key("ddns-key")
	split.Keys[k.Name] = ddns.InlineKey{Algorithm: k.Algorithm, Secret: k.Secret}
	split.Zones = map[string]ddns.Settings{"0.20.10.in-addr.arpa": {Keyname: k.Name}}

	for _, tc := range []struct {
		name  string
		setup []string // addresses admin gives the host first
		zone  string   // default example.test
		host  string
		ips   []string // of the call; add_host when set, else delete_host
		cfg   ddns.Config
		want  error
	}{
		{name: "add_host in a forward zone the server does not serve", zone: "notserved.example", host: "web",
			ips: []string{"10.20.0.121", "2001:db8::121"}, cfg: config(t, s, "ddns-key"), want: ddns.ErrNoZone},
		{name: "unsigned add_host", host: "unsigned",
			ips: []string{"10.20.0.122"}, cfg: unsigned, want: ddns.ErrRefused},
		{name: "add_host whose PTR is refused after the A was written", host: "noptr",
			ips: []string{"10.20.0.123", "2001:db8::123"}, cfg: config(t, s, "fwdonly"), want: ddns.ErrRefused},
		{name: "add_host whose replaced address keeps its PTR", host: "moved", setup: []string{"10.30.0.124"},
			ips: []string{"10.20.0.124"}, cfg: split, want: ddns.ErrRefused},
		{name: "delete_host whose PTR is refused after the A was deleted", host: "stays", setup: []string{"10.20.0.125"},
			cfg: config(t, s, "fwdonly"), want: ddns.ErrRefused},
		{name: "delete_host refused on the second PTR", host: "both", setup: []string{"10.20.0.126", "2001:db8::126"},
			cfg: split, want: ddns.ErrRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zone := cmp.Or(tc.zone, "example.test")
			fq := tc.host + "." + zone
			if tc.setup != nil {
				if _, err := admin.AddHost(ctx, zone, tc.host, addrs(t, tc.setup...), ddns.Settings{}); err != nil {
					t.Fatal(err)
				}
			}
			// state is what the server answers for the name and the PTR
			// of every address involved.
			state := func() map[string][]string {
				st := map[string][]string{
					fq + " A":    lookup(t, s, fq, dns.TypeA),
					fq + " AAAA": lookup(t, s, fq, dns.TypeAAAA),
				}
				for _, ip := range slices.Concat(tc.setup, tc.ips) {
					rev, _ := dns.ReverseAddr(ip)
					st[rev+" PTR"] = lookup(t, s, rev, dns.TypePTR)
				}
				return st
			}
			before := state()
			var err error
			if tc.ips != nil {
				_, err = ddns.New(tc.cfg).AddHost(ctx, zone, tc.host, addrs(t, tc.ips...), ddns.Settings{})
			} else {
				_, err = ddns.New(tc.cfg).DeleteHost(ctx, zone, tc.host, ddns.Settings{})
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("err %v, want %v", err, tc.want)
			}
			after := state()
			for name, was := range before {
				if !slices.Equal(after[name], was) {
					t.Errorf("%s is %v after the failed call, was %v", name, after[name], was)
				}
			}
		})
	}

	// Once the zone is right, the same add_host writes the A and the PTR.
	if _, err := admin.AddHost(ctx, "example.test", "web", addrs(t, "10.20.0.121"), ddns.Settings{}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, s, "web.example.test", dns.TypeA); !slices.Equal(got, []string{"10.20.0.121"}) {
		t.Errorf("A %v", got)
	}
	if got := lookup(t, s, "121.0.20.10.in-addr.arpa", dns.TypePTR); !slices.Equal(got, []string{"web.example.test."}) {
		t.Errorf("PTR %v", got)
	}
}

// TestBatching: concurrent registrations share UPDATE messages (the zone's
// serial, bumped once per message, grows by less than the number of
// hosts) and every host is registered; a host refused within a batch fails
// alone.
func TestBatching(t *testing.T) {
	s := startNamed(t)
	ctx := context.Background()
	cfg := config(t, s, "ddns-key")
	cfg.Ownership, cfg.Owner = true, "me"
	c := ddns.New(cfg)
	serial := func() uint32 {
		m := new(dns.Msg)
		m.SetQuestion("example.test.", dns.TypeSOA)
		r, _, err := new(dns.Client).Exchange(m, s.Addr)
		if err != nil || len(r.Answer) == 0 {
			t.Fatalf("SOA: %v", err)
		}
		return r.Answer[0].(*dns.SOA).Serial
	}
	register := func(names ...string) []error {
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = c.AddHost(ctx, "example.test", name, addrs(t, fmt.Sprintf("10.20.3.%d", i+1)), ddns.Settings{})
			}()
		}
		wg.Wait()
		return errs
	}
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("b%d", i))
	}
	before := serial()
	for i, err := range register(names...) {
		if err != nil {
			t.Errorf("%s: %v", names[i], err)
		}
		if got := lookup(t, s, names[i]+".example.test", dns.TypeA); len(got) != 1 {
			t.Errorf("%s: A %v", names[i], got)
		}
	}
	if d := serial() - before; d >= uint32(len(names)) {
		t.Errorf("serial grew by %d for %d hosts: updates were not batched", d, len(names))
	} else {
		t.Logf("%d hosts, %d forward-zone UPDATE messages", len(names), d)
	}

	rawUpdate(t, s, "example.test", "taken.example.test. 60 IN A 10.20.3.250")
	errs := register("c1", "c2", "c3", "taken", "c4", "c5", "c6")
	for i, err := range errs {
		if i == 3 {
			if !errors.Is(err, ddns.ErrNotOwner) {
				t.Errorf("the foreign name in the batch: %v", err)
			}
		} else if err != nil {
			t.Errorf("host %d next to a refused one: %v", i, err)
		}
	}
	if got := lookup(t, s, "taken.example.test", dns.TypeA); !slices.Equal(got, []string{"10.20.3.250"}) {
		t.Errorf("foreign A %v", got)
	}
}
