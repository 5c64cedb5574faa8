package dnsmasq

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinehq/brine/integrations/dnsmasq/dnsmasqtest"
)

// TestDHCPWithRealDnsmasqInNamespaces: a host created through a cloud event
// is offered exactly the address brine reserved for its MAC by a real
// dnsmasq over real DHCP; a host added later is served after brine's
// SIGHUP; a destroyed one loses its reservation.
func TestDHCPWithRealDnsmasqInNamespaces(t *testing.T) {
	n := dnsmasqtest.NewNetns(t)
	dir := dnsmasqtest.SharedDir(t)
	cfg := &Config{
		HostsFile: filepath.Join(dir, "dhcp-hosts"),
		PidFile:   filepath.Join(dir, "dnsmasq.pid"),
		Ranges:    []netip.Prefix{netip.MustParsePrefix("10.99.0.0/24")},
		LeaseTime: "infinite",
	}
	p := startPipeline(t, cfg)
	p.publish(t, "web-asg-1", "created", map[string]any{"instance_id": "vm-1", "ip_address": "203.0.113.50",
		"private_ips": []any{"10.99.0.50"}, "public_ips": []any{"203.0.113.50"}, "macs": []any{"00:50:56:aa:bb:01"}})
	want := "00:50:56:aa:bb:01,10.99.0.50,web-asg-1,infinite\n"
	dnsmasqtest.WaitFor(t, "reservation written", func() (bool, string) {
		b, _ := os.ReadFile(cfg.HostsFile)
		return strings.HasSuffix(string(b), want), string(b)
	})
	d := n.StartDHCP(t, cfg.HostsFile, cfg.PidFile)

	if a, name := n.Request(t, "00:50:56:aa:bb:01"); a.String() != "10.99.0.50" || name != "web-asg-1" {
		t.Fatalf("MAC :01 got %s (%q), want its reservation 10.99.0.50 (web-asg-1)", a, name)
	}

	// A host created while dnsmasq runs: brine rewrites the file and
	// SIGHUPs dnsmasq, which re-reads it.
	before := d.Reads(cfg.HostsFile)
	p.publish(t, "web-asg-2", "created", map[string]any{"private_ips": []any{"10.99.0.60"}, "macs": []any{"00:50:56:aa:bb:02"}})
	dnsmasqtest.WaitFor(t, "dnsmasq re-reads the hosts file after brine's SIGHUP", func() (bool, string) {
		return d.Reads(cfg.HostsFile) > before, d.Log()
	})
	if a, name := n.Request(t, "00:50:56:aa:bb:02"); a.String() != "10.99.0.60" || name != "web-asg-2" {
		t.Fatalf("MAC :02 got %s (%q), want its new reservation 10.99.0.60 (web-asg-2)", a, name)
	}

	before = d.Reads(cfg.HostsFile)
	p.publish(t, "web-asg-2", "destroyed", nil)
	dnsmasqtest.WaitFor(t, "dnsmasq re-reads the hosts file after the destroy", func() (bool, string) {
		return d.Reads(cfg.HostsFile) > before, d.Log()
	})
	if a, _ := n.Request(t, "00:50:56:aa:bb:02"); !inDynamicRange(a) {
		t.Fatalf("MAC :02 after its host was destroyed got %s, want an address of the dynamic range .100-.150", a)
	}
	if p.syncer.Stats().Reloads == 0 {
		t.Error("no SIGHUP counted")
	}
}

// inDynamicRange reports whether a is one of dnsmasqtest's dynamic
// addresses, 10.99.0.100-150.
func inDynamicRange(a netip.Addr) bool {
	b := a.As16()
	return a.Is4() && netip.MustParsePrefix("10.99.0.0/24").Contains(a) && b[15] >= 100 && b[15] <= 150
}
