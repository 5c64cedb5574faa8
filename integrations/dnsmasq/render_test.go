package dnsmasq

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/mine"
)

func testConfig(t *testing.T, mod func(*Config)) *Config {
	t.Helper()
	dir := t.TempDir()
	c := &Config{HostsFile: dir + "/dhcp-hosts", AddnHosts: dir + "/addn-hosts", Domain: "cloud.test"}
	if mod != nil {
		mod(c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func body(b []byte) string { return strings.TrimPrefix(string(b), header) }

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mod       func(*Config)
		hosts     []*mine.Host
		dhcp      string
		addn      string
		conflicts []Conflict
	}{
		{
			name: "mac and name reservations, v4 and v6 host records, sorted by id",
			hosts: []*mine.Host{
				{ID: "web2", IPs: []string{"10.0.0.12"}},
				{ID: "web1", IPs: []string{"10.0.0.11", "fd00::11"}, MACs: []string{"00:50:56:aa:bb:01"}},
				{ID: "db1.other.test", IPs: []string{"10.0.0.20"}, MACs: []string{"00:50:56:aa:bb:20"}},
				{ID: "app", FQDN: "app.corp.test", IPs: []string{"10.0.0.30"}},
			},
			dhcp: "app,10.0.0.30\n" +
				"00:50:56:aa:bb:20,10.0.0.20,db1\n" +
				"00:50:56:aa:bb:01,10.0.0.11,web1\n" +
				"web2,10.0.0.12\n",
			addn: "10.0.0.30 app.corp.test app\n" +
				"10.0.0.20 db1.other.test db1\n" +
				"10.0.0.11 web1.cloud.test web1\n" +
				"fd00::11 web1.cloud.test web1\n" +
				"10.0.0.12 web2.cloud.test web2\n",
		},
		{
			name: "link-local and multicast addresses an agent reports are left out, and are no conflict",
			hosts: []*mine.Host{
				{ID: "a", IPs: []string{"10.0.0.5", "fe80::250:56ff:fe00:1", "169.254.1.1"}, MACs: []string{"00:50:56:00:00:01"}},
				{ID: "b", IPs: []string{"10.0.0.6", "fe80::250:56ff:fe00:1", "169.254.1.1", "ff02::1"}},
			},
			dhcp: "00:50:56:00:00:01,10.0.0.5,a\nb,10.0.0.6\n",
			addn: "10.0.0.5 a.cloud.test a\n10.0.0.6 b.cloud.test b\n",
		},
		{
			name: "lease time, macs paired with addresses in order",
			mod:  func(c *Config) { c.LeaseTime = "infinite" },
			hosts: []*mine.Host{
				{ID: "two", IPs: []string{"10.0.0.1", "10.0.0.2"}, MACs: []string{"00:00:00:00:00:01", "00:00:00:00:00:02", "00:00:00:00:00:03"}},
			},
			dhcp: "00:00:00:00:00:01,10.0.0.1,two,infinite\n00:00:00:00:00:02,10.0.0.2,two,infinite\n",
			addn: "10.0.0.1 two.cloud.test two\n10.0.0.2 two.cloud.test two\n",
		},
		{
			name: "an address two hosts claim is left out for both",
			hosts: []*mine.Host{
				{ID: "a", IPs: []string{"10.0.0.5", "10.0.0.6"}},
				{ID: "b", IPs: []string{"10.0.0.5"}},
			},
			dhcp: "a,10.0.0.6\n",
			addn: "10.0.0.6 a.cloud.test a\n",
			conflicts: []Conflict{{Kind: DuplicateIP, Value: "10.0.0.5", Hosts: []string{"a", "b"},
				Message: "address 10.0.0.5 is claimed by a and b; left out for all of them"}},
		},
		{
			name: "a MAC two hosts claim: no reservation for either, DNS kept",
			hosts: []*mine.Host{
				{ID: "a", IPs: []string{"10.0.0.1"}, MACs: []string{"00:00:00:00:00:01"}},
				{ID: "b", IPs: []string{"10.0.0.2"}, MACs: []string{"00:00:00:00:00:01"}},
			},
			dhcp: "",
			addn: "10.0.0.1 a.cloud.test a\n10.0.0.2 b.cloud.test b\n",
			conflicts: []Conflict{{Kind: DuplicateMAC, Value: "00:00:00:00:00:01", Hosts: []string{"a", "b"},
				Message: "MAC 00:00:00:00:00:01 is claimed by a and b; left out for all of them"}},
		},
		{
			name: "invalid values, names and ranges",
			mod:  func(c *Config) { c.Ranges = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")} },
			hosts: []*mine.Host{
				{ID: "badip", IPs: []string{"10.0.0.300", "10.0.0.7"}},
				{ID: "badmac", IPs: []string{"10.0.0.8"}, MACs: []string{"00:50:56:zz:bb:01"}},
				{ID: "public", IPs: []string{"198.51.100.1"}},
				{ID: "mixed", IPs: []string{"198.51.100.2", "10.0.0.9"}},
				{ID: "under_score", IPs: []string{"10.0.0.10"}},
			},
			dhcp: "badip,10.0.0.7\nmixed,10.0.0.9\n",
			addn: "10.0.0.7 badip.cloud.test badip\n10.0.0.8 badmac.cloud.test badmac\n10.0.0.9 mixed.cloud.test mixed\n",
			conflicts: []Conflict{
				{Kind: InvalidIP, Value: "10.0.0.300", Hosts: []string{"badip"}, Message: `badip: "10.0.0.300" is not an IP address`},
				{Kind: InvalidMAC, Value: "00:50:56:zz:bb:01", Hosts: []string{"badmac"}, Message: `badmac: "00:50:56:zz:bb:01" is not an Ethernet MAC address (like 00:50:56:aa:bb:01)`},
				{Kind: OutOfRange, Value: "198.51.100.1", Hosts: []string{"public"}, Message: "public: no address in range 10.0.0.0/24 (has 198.51.100.1)"},
				{Kind: InvalidName, Value: "under_score.cloud.test", Hosts: []string{"under_score"}, Message: `under_score: "under_score.cloud.test" is not a host name: '_' in label "under_score"`},
			},
		},
		{
			name:  "targets select ids",
			mod:   func(c *Config) { c.Targets = []string{"web*"}; c.AddnHosts = "" },
			hosts: []*mine.Host{{ID: "web1", IPs: []string{"10.0.0.1"}}, {ID: "db1", IPs: []string{"10.0.0.2"}}},
			dhcp:  "web1,10.0.0.1\n",
			addn:  "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, tc.mod)
			r := Render(tc.hosts, cfg)
			if got := body(r.DHCP); got != tc.dhcp {
				t.Errorf("dhcp-hostsfile:\n%s\nwant:\n%s", got, tc.dhcp)
			}
			if got := body(r.Addn); got != tc.addn {
				t.Errorf("addn-hosts:\n%s\nwant:\n%s", got, tc.addn)
			}
			if !reflect.DeepEqual(r.Conflicts, tc.conflicts) {
				t.Errorf("conflicts:\n%+v\nwant:\n%+v", r.Conflicts, tc.conflicts)
			}
			// The output depends on the set of hosts, not their order.
			rev := make([]*mine.Host, len(tc.hosts))
			for i, h := range tc.hosts {
				rev[len(rev)-1-i] = h
			}
			if r2 := Render(rev, cfg); string(r2.DHCP) != string(r.DHCP) || string(r2.Addn) != string(r.Addn) {
				t.Error("output changes with the order of the hosts")
			}
		})
	}
}

func benchHosts(n int) []*mine.Host {
	hosts := make([]*mine.Host, n)
	for i := range hosts {
		hosts[i] = &mine.Host{ID: fmt.Sprintf("host%05d", i), IPs: []string{fmt.Sprintf("10.%d.%d.%d", 100+i/62500, i/250%250, i%250+1)},
			MACs: []string{fmt.Sprintf("02:00:00:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff)}}
	}
	return hosts
}

func BenchmarkRender10k(b *testing.B) {
	dir := b.TempDir()
	cfg := &Config{HostsFile: dir + "/dhcp-hosts", AddnHosts: dir + "/addn-hosts", Domain: "cloud.test"}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	hosts := benchHosts(10000)
	for b.Loop() {
		Render(hosts, cfg)
	}
}

func BenchmarkWrite10k(b *testing.B) {
	dir := b.TempDir()
	cfg := &Config{HostsFile: dir + "/dhcp-hosts", AddnHosts: dir + "/addn-hosts", Domain: "cloud.test"}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	r := Render(benchHosts(10000), cfg)
	i := 0
	for b.Loop() {
		i++
		content := r.Addn
		if i%2 == 0 {
			content = r.DHCP
		}
		if _, err := writeIfChanged(cfg.AddnHosts, content); err != nil {
			b.Fatal(err)
		}
	}
}
