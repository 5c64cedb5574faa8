package vmware

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os/exec"
	"sync"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// SimulatorTemplate is the template the simulator offers for clonefrom.
const SimulatorTemplate = "linux-template"

// SimulatorConfig configures StartSimulator.
type SimulatorConfig struct {
	// Listen is the address to serve on (default 127.0.0.1 and a free port).
	Listen string
	// User and Password are the only credentials accepted (default
	// user/pass).
	User, Password string
	// DHCP gives each powered-on VM without an address one from
	// 10.20.0.0/16 and a MAC address of its own, as a DHCP server and
	// vCenter would; the bare simulator gives neither.
	DHCP bool
	// DHCPStart is the first address DHCP hands out (default 10.20.0.10).
	// A loopback one (127.20.0.10) makes the VMs reachable on this host,
	// where a local sshd can play their guests for the deploy step.
	DHCPStart netip.Addr
	// PowerOff, when set, is called with a VM's name while the VM powers
	// off (brine's destroy powers a VM off first), and the power-off task
	// completes only once it has returned. Whatever plays the VM's guest
	// (a network namespace, for the demo) stops with it, as a real VM's
	// guest does: a guest stopped later, on an event, could still be
	// running and reconnecting its agent when salt-cloud deletes its key.
	PowerOff func(name string)
}

// Simulator is govmomi's vCenter simulator (the VPX model: datacenter DC0,
// cluster DC0_C0, hosts, a few VMs) serving HTTPS, with a template called
// SimulatorTemplate, for demos and tests without a vCenter.
type Simulator struct {
	model  *simulator.Model
	server *simulator.Server
	url    *url.URL
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartSimulator starts a simulator; Close stops it.
func StartSimulator(cfg SimulatorConfig) (*Simulator, error) {
	if cfg.User == "" {
		cfg.User, cfg.Password = "user", "pass"
	}
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		return nil, fmt.Errorf("simulator: %w", err)
	}
	model.Service.Listen = &url.URL{Host: cfg.Listen, User: url.UserPassword(cfg.User, cfg.Password)}
	if cfg.Listen == "" {
		model.Service.Listen.Host = "127.0.0.1:0"
	}
	model.Service.TLS = new(tls.Config)
	s := &Simulator{model: model, server: model.Service.NewServer()}
	s.url = s.server.URL
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	c, err := govmomi.NewClient(ctx, s.URL(), true)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("simulator: %w", err)
	}
	if err := makeTemplate(ctx, c); err != nil {
		s.Close()
		return nil, fmt.Errorf("simulator: %w", err)
	}
	if cfg.PowerOff != nil {
		// After makeTemplate, whose power-off is the simulator's own.
		model.Map().AddHandler(&powerHook{off: cfg.PowerOff})
	}
	if cfg.DHCP {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			dhcp(ctx, c, cfg.DHCPStart)
		}()
	}
	return s, nil
}

// URL is the SDK endpoint with the accepted credentials.
func (s *Simulator) URL() *url.URL {
	u := *s.url
	return &u
}

// Close stops the simulator.
func (s *Simulator) Close() {
	s.cancel()
	s.wg.Wait()
	s.server.Close()
	s.model.Remove()
}

// powerOffTimeout bounds a PowerOffProgram: the simulator's power-off task,
// and whoever waits for it, wait for the program.
const powerOffTimeout = 30 * time.Second

// PowerOffProgram is a PowerOff that runs program with the VM's name as its
// argument, its output going to w, and waits for it (at most 30 s). A
// failure is reported on w and does not stop the power-off, as a guest that
// will not shut down does not stop a VM's power being cut.
func PowerOffProgram(ctx context.Context, program string, w io.Writer) func(name string) {
	return func(name string) {
		ctx, cancel := context.WithTimeout(ctx, powerOffTimeout)
		defer cancel()
		c := exec.CommandContext(ctx, program, name)
		c.Stdout, c.Stderr = w, w
		if err := c.Run(); err != nil {
			fmt.Fprintf(w, "simulator: power-off program %s %s: %v\n", program, name, err)
		}
	}
}

// powerHook is a handler of the simulator's object registry, which tells
// it of every property change as it is made: a VM's power state turning
// off calls off, inside the power-off task.
type powerHook struct{ off func(name string) }

// Reference names the handler in the registry, which keys its handlers by
// managed object reference; no object has this one.
func (*powerHook) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "BrinePowerHook", Value: "power-hook"}
}

func (*powerHook) PutObject(*simulator.Context, mo.Reference) {}

func (*powerHook) RemoveObject(*simulator.Context, types.ManagedObjectReference) {}

func (h *powerHook) UpdateObject(_ *simulator.Context, obj mo.Reference, changes []types.PropertyChange) {
	vm, ok := obj.(*mo.VirtualMachine)
	if !ok {
		return
	}
	for _, c := range changes {
		if c.Name == "runtime.powerState" && c.Val == types.VirtualMachinePowerStatePoweredOff {
			h.off(vm.Name)
			return
		}
	}
}

// makeTemplate turns the model's second cluster VM into SimulatorTemplate:
// powered off, renamed, marked a template.
func makeTemplate(ctx context.Context, c *govmomi.Client) error {
	f := find.NewFinder(c.Client, true)
	dc, err := f.DefaultDatacenter(ctx)
	if err != nil {
		return err
	}
	f.SetDatacenter(dc)
	vm, err := f.VirtualMachine(ctx, "DC0_C0_RP0_VM1")
	if err != nil {
		return err
	}
	t, err := vm.PowerOff(ctx)
	if err == nil {
		err = t.Wait(ctx)
	}
	if err != nil {
		return err
	}
	if t, err = vm.Rename(ctx, SimulatorTemplate); err == nil {
		err = t.Wait(ctx)
	}
	if err != nil {
		return err
	}
	return vm.MarkAsTemplate(ctx)
}

// dhcpInterval is how often the simulated DHCP server looks for VMs to
// serve.
const dhcpInterval = 50 * time.Millisecond

// dhcp plays the DHCP server and vCenter's MAC allocator until ctx ends:
// a powered-on VM without an address gets the next one from start (or
// 10.20.0.10), and each of its adapters whose MAC another VM or template
// also has gets a new one.
func dhcp(ctx context.Context, c *govmomi.Client, start netip.Addr) {
	d := &vsphere{client: c}
	next := start
	if !next.IsValid() {
		next = netip.MustParseAddr("10.20.0.10")
	}
	var macSeq uint32
	t := time.NewTicker(dhcpInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		vms, err := d.retrieve(ctx, nil)
		if err != nil {
			continue
		}
		owners := map[string]int{} // MAC -> VMs having it
		var serve []mo.VirtualMachine
		for _, m := range vms {
			if m.Config == nil {
				continue
			}
			for _, mac := range macsOf(m) {
				owners[mac]++
			}
			if !m.Config.Template && m.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn &&
				(m.Guest == nil || m.Guest.IpAddress == "") {
				serve = append(serve, m)
			}
		}
		for _, m := range serve {
			spec := types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
				&types.OptionValue{Key: "SET.guest.ipAddress", Value: next.String()}}}
			for _, dev := range object.VirtualDeviceList(m.Config.Hardware.Device).SelectByType((*types.VirtualEthernetCard)(nil)) {
				eth := dev.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
				if owners[eth.MacAddress] < 2 {
					continue
				}
				owners[eth.MacAddress]--
				for {
					macSeq++
					eth.MacAddress = fmt.Sprintf("00:50:56:%02x:%02x:%02x", byte(macSeq>>16)&0x3f, byte(macSeq>>8), byte(macSeq))
					if owners[eth.MacAddress] == 0 {
						break
					}
				}
				owners[eth.MacAddress]++
				eth.AddressType = string(types.VirtualEthernetCardMacTypeManual)
				spec.DeviceChange = append(spec.DeviceChange, &types.VirtualDeviceConfigSpec{
					Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: dev})
			}
			task, err := object.NewVirtualMachine(c.Client, m.Self).Reconfigure(ctx, spec)
			if err == nil && task.Wait(ctx) == nil {
				next = next.Next()
			}
		}
	}
}

func macsOf(m mo.VirtualMachine) []string {
	var out []string
	for _, dev := range object.VirtualDeviceList(m.Config.Hardware.Device).SelectByType((*types.VirtualEthernetCard)(nil)) {
		out = append(out, dev.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress)
	}
	return out
}
