// Package vmware is brine's VMware vSphere cloud driver (salt-cloud's
// `driver: vmware`), built on govmomi. VMs are cloned from a template or a
// VM, reconfigured (CPUs, memory, network adapters, static IPs through a
// guest customization), powered on and waited on for an IP address.
//
// Provider keys: url (host, https://host/sdk, or "simulator" for an
// in-process vCenter simulator), user, password, verify_ssl (default
// True), port, protocol. Profile keys are salt-cloud's: clonefrom,
// num_cpus, cores_per_socket, memory, devices.network, datacenter,
// cluster, resourcepool, datastore, folder, host, power_on, template,
// annotation, extra_config, domain, dns_servers, customization,
// wait_for_ip_timeout.
package vmware

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/brinehq/brine/cloud"
)

// Driver name in provider files.
const Driver = "vmware"

// Extra configuration keys the driver stores on the VMs it creates, so that
// a later listing or destroy knows where a VM came from.
const (
	profileKey = "brine.profile"
	sourceKey  = "brine.clonefrom"
)

// vmProps are the properties read to describe a node.
var vmProps = []string{"name", "config.template", "config.extraConfig", "config.hardware.device",
	"runtime.powerState", "guest.ipAddress", "guest.net", "summary.config.numCpu", "summary.config.memorySizeMB"}

// vsphere is a Driver connected to one vCenter or ESXi.
type vsphere struct {
	client *govmomi.Client
	sim    *Simulator // set when the provider's url is "simulator"
}

// Open connects to the provider's vCenter and logs in. Wrong credentials
// and an unreachable endpoint are reported here, before anything is made.
func Open(ctx context.Context, p *cloud.Provider) (cloud.Driver, error) {
	s := p.Settings
	raw, err := s.String("url")
	if err != nil {
		return nil, err
	}
	if raw == "" {
		return nil, fmt.Errorf("%w: %s:%d: provider %s: no url", cloud.ErrConfig, p.File, p.Line, p.Alias)
	}
	d := &vsphere{}
	var u *url.URL
	insecure := false
	if raw == "simulator" {
		d.sim, err = StartSimulator(SimulatorConfig{DHCP: true})
		if err != nil {
			return nil, err
		}
		u, insecure = d.sim.URL(), true
	} else {
		if u, err = endpoint(s, raw); err != nil {
			return nil, err
		}
		verify, err := s.Bool("verify_ssl", true)
		if err != nil {
			return nil, err
		}
		insecure = !verify
	}
	user, err := s.String("user")
	if err != nil {
		return nil, err
	}
	pass, err := s.Secret("password")
	if err != nil {
		return nil, err
	}
	if user != "" {
		u.User = url.UserPassword(user, pass.Reveal())
	}
	d.client, err = govmomi.NewClient(ctx, u, insecure)
	if err != nil {
		d.closeSim()
		// The url holds the password: report the host only.
		if fault.Is(err, &types.InvalidLogin{}) {
			return nil, fmt.Errorf("%s: login as %q refused: %w", u.Host, user, err)
		}
		return nil, fmt.Errorf("%s: %w", u.Host, cleanURLError(err, pass.Reveal()))
	}
	return d, nil
}

// cleanURLError removes a password that net/url may have put in a message.
func cleanURLError(err error, pass string) error {
	if pass == "" || !strings.Contains(err.Error(), pass) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pass, "xxxxx"))
}

func endpoint(s cloud.Settings, raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		proto, port := "https", 443
		if err := s.Decode("protocol", &proto); err != nil {
			return nil, err
		}
		if err := s.Decode("port", &port); err != nil {
			return nil, err
		}
		if _, _, err := net.SplitHostPort(raw); err != nil {
			raw = net.JoinHostPort(raw, strconv.Itoa(port))
		}
		raw = proto + "://" + raw + "/sdk"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, s["url"].Errorf("%v", err)
	}
	if u.Path == "" {
		u.Path = "/sdk"
	}
	return u, nil
}

func (d *vsphere) closeSim() {
	if d.sim != nil {
		d.sim.Close()
	}
}

// Close logs out.
func (d *vsphere) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := d.client.Logout(ctx)
	d.closeSim()
	return err
}

func (d *vsphere) vim() *vim25.Client { return d.client.Client }

// plan is a prepared clone: every inventory object resolved.
type plan struct {
	profile *profile
	source  *object.VirtualMachine
	folder  *object.Folder
	spec    types.VirtualMachineCloneSpec
}

// Prepare checks the profile's keys and finds the source, folder, pool and
// datastore, so that a missing template is reported before any VM exists.
func (d *vsphere) Prepare(ctx context.Context, vm *cloud.VM) (*cloud.Request, error) {
	p, err := decodeProfile(vm.Settings)
	if err != nil {
		if errors.Is(err, cloud.ErrConfig) && !strings.Contains(err.Error(), ":") {
			return nil, fmt.Errorf("%s:%d: profile %s: %w", vm.Profile.File, vm.Profile.Line, vm.Profile.Name, err)
		}
		return nil, err
	}
	f := find.NewFinder(d.vim(), true)
	dc, err := d.datacenter(ctx, f, p.Datacenter)
	if err != nil {
		return nil, vm.Settings["datacenter"].Errorf("%v", err)
	}
	f.SetDatacenter(dc)
	pl := &plan{profile: p}
	if pl.source, err = f.VirtualMachine(ctx, p.CloneFrom); err != nil {
		return nil, vm.Settings["clonefrom"].Errorf("no VM or template %q: %v", p.CloneFrom, err)
	}
	var src mo.VirtualMachine
	if err := pl.source.Properties(ctx, pl.source.Reference(), []string{"config.template", "config.hardware.device", "resourcePool", "runtime.host"}, &src); err != nil {
		return nil, fmt.Errorf("reading %s: %w", p.CloneFrom, err)
	}
	if p.Folder != "" {
		if pl.folder, err = f.Folder(ctx, p.Folder); err != nil {
			return nil, vm.Settings["folder"].Errorf("%v", err)
		}
	} else {
		folders, err := dc.Folders(ctx)
		if err != nil {
			return nil, err
		}
		pl.folder = folders.VmFolder
	}
	reloc := types.VirtualMachineRelocateSpec{}
	pool, err := d.pool(ctx, f, vm.Settings, p, src)
	if err != nil {
		return nil, err
	}
	if pool != nil {
		ref := pool.Reference()
		reloc.Pool = &ref
	}
	if p.Datastore != "" {
		ds, err := f.Datastore(ctx, p.Datastore)
		if err != nil {
			return nil, vm.Settings["datastore"].Errorf("%v", err)
		}
		ref := ds.Reference()
		reloc.Datastore = &ref
	}
	if p.Host != "" {
		h, err := f.HostSystem(ctx, p.Host)
		if err != nil {
			return nil, vm.Settings["host"].Errorf("%v", err)
		}
		ref := h.Reference()
		reloc.Host = &ref
	}
	changes, custom, err := d.nics(ctx, f, vm, p, object.VirtualDeviceList(src.Config.Hardware.Device))
	if err != nil {
		return nil, err
	}
	extra := []types.BaseOptionValue{
		&types.OptionValue{Key: profileKey, Value: vm.Profile.Name},
		&types.OptionValue{Key: sourceKey, Value: p.CloneFrom},
	}
	for k, v := range p.ExtraConfig {
		extra = append(extra, &types.OptionValue{Key: k, Value: v})
	}
	pl.spec = types.VirtualMachineCloneSpec{
		Location: reloc,
		Template: p.Template,
		Config: &types.VirtualMachineConfigSpec{
			NumCPUs: p.NumCPUs, MemoryMB: int64(p.Memory),
			Annotation: p.Annotation, ExtraConfig: extra, DeviceChange: changes,
		},
		Customization: custom,
	}
	if p.CoresPerSocket > 0 {
		pl.spec.Config.NumCoresPerSocket = &p.CoresPerSocket
	}
	kwargs := map[string]any{"clonefrom": p.CloneFrom, "folder": pl.folder.InventoryPath, "power_on": p.PowerOn, "template": p.Template}
	for k, v := range map[string]any{"num_cpus": p.NumCPUs, "cores_per_socket": p.CoresPerSocket, "memory_mb": int64(p.Memory)} {
		if v != int32(0) && v != int64(0) {
			kwargs[k] = v
		}
	}
	for k, v := range map[string]string{"resourcepool": p.ResourcePool, "cluster": p.Cluster, "datastore": p.Datastore, "host": p.Host} {
		if v != "" {
			kwargs[k] = v
		}
	}
	if len(p.Devices.Network) > 0 {
		nets := map[string]any{}
		for label, n := range p.Devices.Network {
			nets[label] = map[string]any{"name": n.Name, "ip": n.IP, "mac": n.MAC}
		}
		kwargs["network"] = nets
	}
	warnings := cloud.UnknownKeys(vm, Driver, knownKeys())
	for _, dev := range []struct {
		key string
		v   any
	}{{"disk", p.Devices.Disk}, {"scsi", p.Devices.SCSI}, {"ide", p.Devices.IDE}, {"cd", p.Devices.CD}} {
		if dev.v != nil {
			warnings = append(warnings, fmt.Sprintf("%s: devices.%s is not applied by brine's vmware driver yet; the source's devices are kept", vm.Settings["devices"].Where(), dev.key))
		}
	}
	return &cloud.Request{
		Warnings: warnings,
		VM:       vm, Kwargs: kwargs, Location: dc.Name(), Source: p.CloneFrom,
		WaitForIP: p.PowerOn && !p.Template, IPTimeout: time.Duration(p.IPTimeout * float64(time.Second)), Plan: pl,
	}, nil
}

func (d *vsphere) datacenter(ctx context.Context, f *find.Finder, name string) (*object.Datacenter, error) {
	if name != "" {
		return f.Datacenter(ctx, name)
	}
	return f.DefaultDatacenter(ctx)
}

// pool picks the resource pool: resourcepool, else the cluster's, else the
// host's, else the source's own when it is a VM, else the default one.
func (d *vsphere) pool(ctx context.Context, f *find.Finder, s cloud.Settings, p *profile, src mo.VirtualMachine) (*object.ResourcePool, error) {
	switch {
	case p.ResourcePool != "":
		rp, err := f.ResourcePool(ctx, p.ResourcePool)
		if err != nil {
			return nil, s["resourcepool"].Errorf("%v", err)
		}
		return rp, nil
	case p.Cluster != "":
		cl, err := f.ClusterComputeResource(ctx, p.Cluster)
		if err != nil {
			return nil, s["cluster"].Errorf("%v", err)
		}
		return cl.ResourcePool(ctx)
	case p.Host != "":
		h, err := f.HostSystem(ctx, p.Host)
		if err != nil {
			return nil, s["host"].Errorf("%v", err)
		}
		return h.ResourcePool(ctx)
	case src.ResourcePool != nil:
		return object.NewResourcePool(d.vim(), *src.ResourcePool), nil
	case src.Runtime.Host != nil:
		// A template has no pool: use that of the host it is registered on.
		return object.NewHostSystem(d.vim(), *src.Runtime.Host).ResourcePool(ctx)
	}
	rp, err := f.DefaultResourcePool(ctx)
	if err != nil {
		return nil, s["clonefrom"].Errorf("cloning template %s needs resourcepool, cluster or host: %v", p.CloneFrom, err)
	}
	return rp, nil
}

// nics edits or adds the network adapters of devices.network, and builds
// the guest customization when an adapter has a static ip.
func (d *vsphere) nics(ctx context.Context, f *find.Finder, vm *cloud.VM, p *profile, devs object.VirtualDeviceList) ([]types.BaseVirtualDeviceConfigSpec, *types.CustomizationSpec, error) {
	if len(p.Devices.Network) == 0 {
		return nil, nil, nil
	}
	labels := make([]string, 0, len(p.Devices.Network))
	for l := range p.Devices.Network {
		labels = append(labels, l)
	}
	sortLabels(labels)
	var changes []types.BaseVirtualDeviceConfigSpec
	var maps []types.CustomizationAdapterMapping
	static := false
	for _, label := range labels {
		n := p.Devices.Network[label]
		card := findCard(devs.SelectByType((*types.VirtualEthernetCard)(nil)), label)
		op := types.VirtualDeviceConfigSpecOperationEdit
		if card == nil {
			if n.Name == "" {
				return nil, nil, vm.Settings["devices"].Errorf("network %q: a new adapter needs name (the network)", label)
			}
			kind := n.AdapterType
			if kind == "" {
				kind = "vmxnet3"
			}
			var err error
			if card, err = devs.CreateEthernetCard(kind, nil); err != nil {
				return nil, nil, vm.Settings["devices"].Errorf("network %q: %v", label, err)
			}
			op = types.VirtualDeviceConfigSpecOperationAdd
		}
		changed := op == types.VirtualDeviceConfigSpecOperationAdd
		if n.Name != "" {
			net, err := f.Network(ctx, n.Name)
			if err != nil {
				return nil, nil, vm.Settings["devices"].Errorf("network %q: %v", label, err)
			}
			backing, err := net.EthernetCardBackingInfo(ctx)
			if err != nil {
				return nil, nil, vm.Settings["devices"].Errorf("network %q: %v", label, err)
			}
			if changed || !sameBacking(card.GetVirtualDevice().Backing, backing) {
				changed = true
				card.GetVirtualDevice().Backing = backing
			}
		}
		eth := card.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
		if n.MAC != "" && n.MAC != eth.MacAddress {
			changed = true
			eth.AddressType = string(types.VirtualEthernetCardMacTypeManual)
			eth.MacAddress = n.MAC
		}
		if changed {
			changes = append(changes, &types.VirtualDeviceConfigSpec{Operation: op, Device: card})
		}
		m := types.CustomizationAdapterMapping{MacAddress: n.MAC, Adapter: types.CustomizationIPSettings{
			Ip: &types.CustomizationDhcpIpGenerator{}, DnsDomain: n.Domain}}
		if n.IP != "" {
			static = true
			m.Adapter.Ip = &types.CustomizationFixedIp{IpAddress: n.IP}
			m.Adapter.SubnetMask = n.SubnetMask
			m.Adapter.Gateway = n.Gateway
		}
		maps = append(maps, m)
	}
	if !static || !p.Customization {
		return changes, nil, nil
	}
	custom := &types.CustomizationSpec{
		Identity: &types.CustomizationLinuxPrep{
			HostName: &types.CustomizationFixedName{Name: hostLabel(vm.Name)},
			Domain:   p.Domain,
		},
		GlobalIPSettings: types.CustomizationGlobalIPSettings{DnsServerList: p.DNSServers},
		NicSettingMap:    maps,
	}
	return changes, custom, nil
}

// findCard finds the adapter labelled label ("Network adapter 2"), or
// else the label's n-th adapter in device order, as vCenter numbers them.
func findCard(cards object.VirtualDeviceList, label string) types.BaseVirtualDevice {
	for _, c := range cards {
		if info := c.GetVirtualDevice().DeviceInfo; info != nil && info.GetDescription().Label == label {
			return c
		}
	}
	if rest, ok := strings.CutPrefix(label, "Network adapter "); ok {
		if n, err := strconv.Atoi(rest); err == nil && n >= 1 && n <= len(cards) {
			return cards[n-1]
		}
	}
	return nil
}

// sameBacking reports whether two adapter backings connect to the same
// network, so that an unchanged adapter is not edited.
func sameBacking(a, b types.BaseVirtualDeviceBackingInfo) bool {
	switch x := a.(type) {
	case *types.VirtualEthernetCardNetworkBackingInfo:
		y, ok := b.(*types.VirtualEthernetCardNetworkBackingInfo)
		return ok && x.DeviceName == y.DeviceName
	case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
		y, ok := b.(*types.VirtualEthernetCardDistributedVirtualPortBackingInfo)
		return ok && x.Port.PortgroupKey == y.Port.PortgroupKey
	}
	return false
}

// sortLabels orders "Network adapter 2" before "Network adapter 10".
func sortLabels(l []string) {
	num := func(s string) int {
		i := strings.LastIndexByte(s, ' ')
		n, _ := strconv.Atoi(s[i+1:])
		return n
	}
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && (num(l[j]) < num(l[j-1]) || num(l[j]) == num(l[j-1]) && l[j] < l[j-1]); j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// hostLabel is the short host name a guest customization sets.
func hostLabel(name string) string {
	h, _, _ := strings.Cut(name, ".")
	return h
}

// Create clones the VM and powers it on (unless power_on is False).
func (d *vsphere) Create(ctx context.Context, req *cloud.Request) (*cloud.Node, error) {
	pl := req.Plan.(*plan)
	tk, err := pl.source.Clone(ctx, pl.folder, req.VM.Name, pl.spec)
	if err != nil {
		return nil, fmt.Errorf("clone %s: %w", pl.profile.CloneFrom, err)
	}
	info, err := tk.WaitForResult(ctx, nil)
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted: ask vCenter to stop the clone too, so that no VM
			// appears after the run has reported it does not exist.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_ = tk.Cancel(cctx)
			cancel()
		}
		if fault.Is(err, &types.DuplicateName{}) {
			return nil, fmt.Errorf("%s: %w", req.VM.Name, cloud.ErrExists)
		}
		return nil, fmt.Errorf("clone %s: %w", pl.profile.CloneFrom, err)
	}
	vm := object.NewVirtualMachine(d.vim(), info.Result.(types.ManagedObjectReference))
	if pl.profile.PowerOn && !pl.profile.Template {
		t, err := vm.PowerOn(ctx)
		if err == nil {
			err = t.Wait(ctx)
		}
		if err != nil {
			return &cloud.Node{Name: req.VM.Name, ID: vm.Reference().Value}, fmt.Errorf("power on: %w", err)
		}
	}
	if req.WaitForIP {
		// WaitForIP reads the whole node once it has an address.
		return &cloud.Node{Name: req.VM.Name, ID: vm.Reference().Value, State: string(types.VirtualMachinePowerStatePoweredOn)}, nil
	}
	return d.describe(ctx, vm.Reference())
}

// WaitForIP waits for the guest's IP address (VMware Tools or the
// customization reports it), then returns the node with its IPs and MACs.
func (d *vsphere) WaitForIP(ctx context.Context, n *cloud.Node) (*cloud.Node, error) {
	ref := types.ManagedObjectReference{Type: "VirtualMachine", Value: n.ID}
	if _, err := object.NewVirtualMachine(d.vim(), ref).WaitForIP(ctx); err != nil {
		return nil, err
	}
	return d.describe(ctx, ref)
}

// Destroy powers the VM off and deletes it from disk.
func (d *vsphere) Destroy(ctx context.Context, n *cloud.Node) error {
	vm := object.NewVirtualMachine(d.vim(), types.ManagedObjectReference{Type: "VirtualMachine", Value: n.ID})
	state, err := vm.PowerState(ctx)
	if err != nil {
		if fault.Is(err, &types.ManagedObjectNotFound{}) {
			return nil
		}
		return fmt.Errorf("power state: %w", err)
	}
	if state == types.VirtualMachinePowerStatePoweredOn {
		t, err := vm.PowerOff(ctx)
		if err == nil {
			err = t.Wait(ctx)
		}
		if err != nil && !fault.Is(err, &types.InvalidPowerState{}) {
			return fmt.Errorf("power off: %w", err)
		}
	}
	t, err := vm.Destroy(ctx)
	if err == nil {
		err = t.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("destroy: %w", err)
	}
	return nil
}

// retrieve reads vmProps of the VMs matching filter (all when nil).
func (d *vsphere) retrieve(ctx context.Context, filter property.Match) ([]mo.VirtualMachine, error) {
	m := view.NewManager(d.vim())
	v, err := m.CreateContainerView(ctx, d.vim().ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var vms []mo.VirtualMachine
	if filter == nil {
		err = v.Retrieve(ctx, []string{"VirtualMachine"}, vmProps, &vms)
	} else {
		err = v.RetrieveWithFilter(ctx, []string{"VirtualMachine"}, vmProps, &vms, filter)
	}
	if err != nil && !strings.Contains(err.Error(), "object references is empty") {
		return nil, err
	}
	return vms, nil
}

func (d *vsphere) describe(ctx context.Context, ref types.ManagedObjectReference) (*cloud.Node, error) {
	var m mo.VirtualMachine
	if err := d.client.PropertyCollector().RetrieveOne(ctx, ref, vmProps, &m); err != nil {
		return nil, err
	}
	return toNode(m), nil
}

// Node finds a VM (not a template) by name anywhere in the inventory.
func (d *vsphere) Node(ctx context.Context, name string) (*cloud.Node, error) {
	vms, err := d.retrieve(ctx, property.Match{"name": name})
	if err != nil {
		return nil, err
	}
	for _, m := range vms {
		if m.Name == name && (m.Config == nil || !m.Config.Template) {
			return toNode(m), nil
		}
	}
	return nil, fmt.Errorf("vm %q: %w", name, cloud.ErrNotFound)
}

// Nodes lists the VMs, templates excepted.
func (d *vsphere) Nodes(ctx context.Context) ([]*cloud.Node, error) {
	vms, err := d.retrieve(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make([]*cloud.Node, 0, len(vms))
	for _, m := range vms {
		if m.Config != nil && m.Config.Template {
			continue
		}
		out = append(out, toNode(m))
	}
	return out, nil
}

func toNode(m mo.VirtualMachine) *cloud.Node {
	n := &cloud.Node{Name: m.Name, ID: m.Self.Value, State: string(m.Runtime.PowerState), MACs: []string{},
		Extra: map[string]any{"num_cpus": m.Summary.Config.NumCpu, "memory_mb": m.Summary.Config.MemorySizeMB}}
	var addrs []string
	if m.Guest != nil {
		if m.Guest.IpAddress != "" {
			addrs = append(addrs, m.Guest.IpAddress)
		}
		for _, gn := range m.Guest.Net {
			addrs = append(addrs, gn.IpAddress...)
		}
	}
	n.SetIPs(addrs)
	if m.Config != nil {
		for _, dev := range object.VirtualDeviceList(m.Config.Hardware.Device).SelectByType((*types.VirtualEthernetCard)(nil)) {
			if mac := dev.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard().MacAddress; mac != "" {
				n.MACs = append(n.MACs, mac)
			}
		}
		for _, o := range m.Config.ExtraConfig {
			ov := o.GetOptionValue()
			s, _ := ov.Value.(string)
			switch ov.Key {
			case profileKey:
				n.Profile = s
			case sourceKey:
				n.Image = s
			}
		}
	}
	return n
}

// Images lists the templates, which profiles name in clonefrom.
func (d *vsphere) Images(ctx context.Context) ([]cloud.Resource, error) {
	vms, err := d.retrieve(ctx, property.Match{"config.template": true})
	if err != nil {
		return nil, err
	}
	out := make([]cloud.Resource, 0, len(vms))
	for _, m := range vms {
		out = append(out, cloud.Resource{ID: m.Self.Value, Name: m.Name, Details: map[string]any{
			"num_cpus": m.Summary.Config.NumCpu, "memory_mb": m.Summary.Config.MemorySizeMB}})
	}
	return out, nil
}

// Sizes: vSphere has no sizes; profiles set num_cpus and memory.
func (d *vsphere) Sizes(context.Context) ([]cloud.Resource, error) {
	return nil, fmt.Errorf("%w (set num_cpus and memory in the profile)", cloud.ErrNotSupported)
}

// Locations lists datacenters and their clusters, which profiles name in
// datacenter and cluster.
func (d *vsphere) Locations(ctx context.Context) ([]cloud.Resource, error) {
	f := find.NewFinder(d.vim(), false)
	dcs, err := f.DatacenterList(ctx, "*")
	if err != nil {
		return nil, err
	}
	var out []cloud.Resource
	for _, dc := range dcs {
		out = append(out, cloud.Resource{ID: dc.Reference().Value, Name: dc.Name(), Details: map[string]any{"type": "datacenter", "path": dc.InventoryPath}})
		f.SetDatacenter(dc)
		cls, err := f.ClusterComputeResourceList(ctx, "*")
		if err != nil && !errors.As(err, new(*find.NotFoundError)) {
			return nil, err
		}
		for _, cl := range cls {
			out = append(out, cloud.Resource{ID: cl.Reference().Value, Name: cl.Name(), Details: map[string]any{"type": "cluster", "path": cl.InventoryPath, "datacenter": dc.Name()}})
		}
	}
	return out, nil
}
