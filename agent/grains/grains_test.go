//go:build !windows

package grains

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/brinehq/brine/modules/network"
)

func TestCollectFromFixture(t *testing.T) {
	c := Collector{
		Root:     "testdata/debian",
		Hostname: func() (string, error) { return "web01.example.com", nil },
		Interfaces: func() ([]network.Iface, error) {
			return []network.Iface{
				{Name: "eth0", MAC: "00:50:56:aa:bb:01", Up: true,
					V4: []netip.Prefix{netip.MustParsePrefix("10.0.0.5/24")}, V6: []netip.Prefix{netip.MustParsePrefix("fe80::1/64")}},
				{Name: "lo", Up: true, V4: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}, V6: []netip.Prefix{netip.MustParsePrefix("::1/128")}},
			}, nil
		},
	}
	g := c.Collect("web01", map[string]any{"roles": []any{"web"}, "os": "Overridden"})
	want := map[string]any{
		"id": "web01", "os": "Overridden", "os_family": "Debian", "osrelease": "12", "osmajorrelease": 12,
		"oscodename": "bookworm", "osfullname": "Debian GNU/Linux", "mem_total": 3936,
		"machine_id": "0123456789abcdef0123456789abcdef", "virtual": "VMware",
		"fqdn": "web01.example.com", "host": "web01", "domain": "example.com", "nodename": "web01.example.com",
		"ipv4": []any{"10.0.0.5", "127.0.0.1"}, "ipv6": []any{"::1", "fe80::1"},
		"ip4_interfaces":    map[string]any{"eth0": []any{"10.0.0.5"}, "lo": []any{"127.0.0.1"}},
		"hwaddr_interfaces": map[string]any{"eth0": "00:50:56:aa:bb:01", "lo": "00:00:00:00:00:00"},
		"roles":             []any{"web"},
	}
	for k, v := range want {
		if !reflect.DeepEqual(g[k], v) {
			t.Errorf("grain %s = %#v, want %#v", k, g[k], v)
		}
	}
	for _, k := range []string{"kernel", "kernelrelease", "cpuarch", "num_cpus"} {
		if g[k] == nil || g[k] == "" {
			t.Errorf("grain %s missing", k)
		}
	}
}

func TestCollectMissingFactsAreLeftOut(t *testing.T) {
	c := Collector{Root: t.TempDir(), Hostname: func() (string, error) { return "solo", nil },
		Interfaces: func() ([]network.Iface, error) { return nil, nil }}
	g := c.Collect("solo", nil)
	for _, k := range []string{"os", "osrelease", "mem_total", "machine_id"} {
		if _, ok := g[k]; ok {
			t.Errorf("grain %s = %v, want it absent when it cannot be read", k, g[k])
		}
	}
	if g["virtual"] != "physical" || g["domain"] != "" {
		t.Errorf("virtual %v, domain %q", g["virtual"], g["domain"])
	}
}
