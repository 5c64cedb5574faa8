package vmware

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/vmware/govmomi"
)

// TestSimulatorDHCPStart checks that the simulated DHCP server hands out
// addresses from DHCPStart on, so that the demo's VMs land on loopback
// addresses its sshd listens on.
func TestSimulatorDHCPStart(t *testing.T) {
	for _, tc := range []struct {
		start  netip.Addr
		prefix netip.Prefix
	}{
		{netip.Addr{}, netip.MustParsePrefix("10.20.0.0/16")},
		{netip.MustParseAddr("127.20.0.10"), netip.MustParsePrefix("127.20.0.0/24")},
	} {
		sim, err := StartSimulator(SimulatorConfig{DHCP: true, DHCPStart: tc.start})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c, err := govmomi.NewClient(ctx, sim.URL(), true)
		if err != nil {
			t.Fatal(err)
		}
		d := &vsphere{client: c}
		var ips []string
		for ctx.Err() == nil {
			nodes, err := d.Nodes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ips = ips[:0]
			for _, n := range nodes {
				if n.IP() != "" {
					ips = append(ips, n.IP())
				}
			}
			if len(ips) > 0 && len(ips) == len(nodes) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
		sim.Close()
		if len(ips) == 0 {
			t.Fatalf("start %v: no VM got an address", tc.start)
		}
		for _, ip := range ips {
			if a, err := netip.ParseAddr(ip); err != nil || !tc.prefix.Contains(a) {
				t.Errorf("start %v: address %s is outside %s", tc.start, ip, tc.prefix)
			}
		}
	}
}
