package vmware

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/cloud"
)

// DefaultIPTimeout is Salt's wait_for_ip_timeout for VMware.
const DefaultIPTimeout = 1200 * time.Second

// profile is a VM's settings as this driver reads them, with salt-cloud's
// VMware key names.
type profile struct {
	CloneFrom      string            `yaml:"clonefrom"`
	NumCPUs        int32             `yaml:"num_cpus"`
	CoresPerSocket int32             `yaml:"cores_per_socket"`
	Memory         MemorySize        `yaml:"memory"`
	Datacenter     string            `yaml:"datacenter"`
	Cluster        string            `yaml:"cluster"`
	ResourcePool   string            `yaml:"resourcepool"`
	Datastore      string            `yaml:"datastore"`
	Folder         string            `yaml:"folder"`
	Host           string            `yaml:"host"`
	PowerOn        bool              `yaml:"power_on"`
	Template       bool              `yaml:"template"`
	Annotation     string            `yaml:"annotation"`
	ExtraConfig    map[string]string `yaml:"extra_config"`
	Domain         string            `yaml:"domain"`
	DNSServers     []string          `yaml:"dns_servers"`
	IPTimeout      float64           `yaml:"wait_for_ip_timeout"`
	Devices        devices           `yaml:"devices"`
	// Customization False leaves the guest's network settings alone even
	// when adapters have a static ip (Salt's customization key).
	Customization bool `yaml:"customization"`
}

type devices struct {
	Network map[string]nic `yaml:"network"`
	// Disk, SCSI, IDE and CD are salt-cloud keys brine does not apply yet;
	// they are read only to be reported.
	Disk any `yaml:"disk"`
	SCSI any `yaml:"scsi"`
	IDE  any `yaml:"ide"`
	CD   any `yaml:"cd"`
}

// nic is one entry of devices.network, keyed by its label ("Network
// adapter 1"): an existing adapter of the source is edited, a new label
// adds an adapter.
type nic struct {
	Name        string   `yaml:"name"` // the network (port group) to connect to
	MAC         string   `yaml:"mac"`
	AdapterType string   `yaml:"adapter_type"`
	SwitchType  string   `yaml:"switch_type"`
	IP          string   `yaml:"ip"`
	Gateway     gateways `yaml:"gateway"`
	SubnetMask  string   `yaml:"subnet_mask"`
	Domain      string   `yaml:"domain"`
}

// gateways reads Salt's gateway, which is a list or a single address.
type gateways []string

// UnmarshalYAML accepts a string or a list of strings.
func (g *gateways) UnmarshalYAML(unmarshal func(any) error) error {
	var one string
	if err := unmarshal(&one); err == nil {
		*g = gateways{one}
		return nil
	}
	var many []string
	if err := unmarshal(&many); err != nil {
		return fmt.Errorf("gateway: want an address or a list of addresses")
	}
	*g = many
	return nil
}

// MemorySize is a memory amount in MiB, written as Salt writes it: 2048
// (MB), "2048MB", "2GB", "2 GiB".
type MemorySize int64

// UnmarshalYAML parses a number of MB or a number with a unit.
func (m *MemorySize) UnmarshalYAML(unmarshal func(any) error) error {
	var n int64
	if err := unmarshal(&n); err == nil {
		*m = MemorySize(n)
		return nil
	}
	var s string
	if err := unmarshal(&s); err != nil {
		return fmt.Errorf("memory: want a size such as 2048MB or 4GB")
	}
	v, err := ParseMemory(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ParseMemory parses "4GB", "4096MB", "4096" (MB) and their binary
// spellings (GiB, MiB); VMware counts both in MiB.
func ParseMemory(s string) (MemorySize, error) {
	t := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GIB", 1024}, {"GB", 1024}, {"G", 1024}, {"MIB", 1}, {"MB", 1}, {"M", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = rest, u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("%q: want a size such as 2048MB or 4GB", s)
	}
	return MemorySize(f * float64(mult)), nil
}

// providerKeys are the provider keys Open reads.
var providerKeys = []string{"url", "user", "password", "verify_ssl", "port", "protocol"}

// profileKeys are the profile keys decodeProfile reads.
func (p *profile) keys() map[string]any {
	return map[string]any{
		"clonefrom": &p.CloneFrom, "num_cpus": &p.NumCPUs, "cores_per_socket": &p.CoresPerSocket,
		"memory": &p.Memory, "datacenter": &p.Datacenter, "cluster": &p.Cluster,
		"resourcepool": &p.ResourcePool, "datastore": &p.Datastore, "folder": &p.Folder,
		"host": &p.Host, "power_on": &p.PowerOn, "template": &p.Template, "annotation": &p.Annotation,
		"extra_config": &p.ExtraConfig, "domain": &p.Domain, "dns_servers": &p.DNSServers,
		"wait_for_ip_timeout": &p.IPTimeout, "devices": &p.Devices, "customization": &p.Customization,
	}
}

// knownKeys are every key this driver reads.
func knownKeys() []string {
	out := append([]string(nil), providerKeys...)
	for k := range new(profile).keys() {
		out = append(out, k)
	}
	return out
}

// decodeProfile reads the driver's keys from a VM's settings.
func decodeProfile(s cloud.Settings) (*profile, error) {
	p := &profile{PowerOn: true, IPTimeout: DefaultIPTimeout.Seconds(), Domain: "local", Customization: true}
	for key, out := range p.keys() {
		if err := s.Decode(key, out); err != nil {
			return nil, err
		}
	}
	if p.CloneFrom == "" {
		return nil, fmt.Errorf("%w: profile needs clonefrom (creating a VM from scratch is not supported)", cloud.ErrConfig)
	}
	for key, v := range map[string]int64{"num_cpus": int64(p.NumCPUs), "cores_per_socket": int64(p.CoresPerSocket), "memory": int64(p.Memory)} {
		if v < 0 {
			return nil, s[key].Errorf("must not be negative")
		}
	}
	if p.IPTimeout <= 0 {
		return nil, s["wait_for_ip_timeout"].Errorf("must be a positive number of seconds")
	}
	for label, n := range p.Devices.Network {
		if n.IP != "" && n.SubnetMask == "" {
			return nil, s["devices"].Errorf("network %q: a static ip needs subnet_mask", label)
		}
	}
	return p, nil
}

// KnownKeys lists the provider and profile keys this driver reads (the
// configuration reference is checked against it).
func KnownKeys() []string { return knownKeys() }
