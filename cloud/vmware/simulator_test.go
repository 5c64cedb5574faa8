package vmware

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/brinehq/brine/cloud"
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

// TestSimulatorPowerOffHook checks that PowerOff is called with the name of
// a VM that brine's destroy powers off, and that the destroy waits for it:
// the demo cuts a guest's power there, and a guest still running after
// its VM was destroyed would reconnect its agent under a deleted key.
func TestSimulatorPowerOffHook(t *testing.T) {
	var (
		mu  sync.Mutex
		off []string
	)
	sim, err := StartSimulator(SimulatorConfig{PowerOff: func(name string) {
		time.Sleep(300 * time.Millisecond) // the guest takes a while to stop
		mu.Lock()
		off = append(off, name)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := govmomi.NewClient(ctx, sim.URL(), true)
	if err != nil {
		t.Fatal(err)
	}
	d := &vsphere{client: c}
	nodes, err := d.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var on []*cloud.Node
	for _, n := range nodes {
		if n.State == string(types.VirtualMachinePowerStatePoweredOn) {
			on = append(on, n)
		}
	}
	if len(on) < 2 {
		t.Fatalf("want two powered-on VMs in the simulator: %+v", nodes)
	}
	calls := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(off)
	}
	if got := calls(); len(got) != 0 {
		t.Errorf("PowerOff called before any VM powered off (the template's power-off is the simulator's own): %q", got)
	}
	if err := d.Destroy(ctx, on[0]); err != nil {
		t.Fatal(err)
	}
	if got := calls(); !slices.Equal(got, []string{on[0].Name}) {
		t.Fatalf("when destroying %s returned, PowerOff had been called for %q; want [%s]", on[0].Name, got, on[0].Name)
	}
	// A VM powered off by hand calls it too, and is not powered off again
	// when destroyed.
	vm := object.NewVirtualMachine(c.Client, types.ManagedObjectReference{Type: "VirtualMachine", Value: on[1].ID})
	task, err := vm.PowerOff(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Destroy(ctx, on[1]); err != nil {
		t.Fatal(err)
	}
	if got := calls(); !slices.Equal(got, []string{on[0].Name, on[1].Name}) {
		t.Errorf("after powering off and destroying %s, PowerOff had been called for %q; want [%s %s]", on[1].Name, got, on[0].Name, on[1].Name)
	}
}

// TestPowerOffProgram checks that the program runs with the VM's name and
// is waited for, and that its failure is said, not hidden.
func TestPowerOffProgram(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "power-off")
	script := "#!/bin/sh\nsleep 0.2\necho \"$1\" > " + filepath.Join(dir, "off") + "\necho stopped \"$1\"\n[ \"$1\" != stuck ]\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	off := PowerOffProgram(context.Background(), prog, &out)
	off("web2")
	if b, err := os.ReadFile(filepath.Join(dir, "off")); err != nil || string(b) != "web2\n" {
		t.Fatalf("when the hook returned, the program had written %q (%v); want web2", b, err)
	}
	if out.String() != "stopped web2\n" {
		t.Errorf("output %q, want the program's own", out.String())
	}
	out.Reset()
	off("stuck")
	if want := "simulator: power-off program " + prog + " stuck: exit status 1"; !strings.Contains(out.String(), want) {
		t.Errorf("output %q, want it to say %q", out.String(), want)
	}
}
