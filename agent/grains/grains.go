// Package grains gathers an agent's core grains — Salt's static facts about
// the machine (os, kernel, CPUs, memory, names, addresses, machine id,
// virtualisation) — with Salt's names and value shapes, so that targeting
// (-G os:Debian), reaction files and the mine read them as with Salt.
package grains

import (
	"bufio"
	"bytes"
	"context"
	"maps"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules/network"
)

// Collector gathers core grains; its zero value reads the real machine.
type Collector struct {
	// Root is prefixed to the files read (/etc/os-release, /proc/meminfo…);
	// "" is the real root.
	Root string
	// Interfaces lists the network interfaces (default network.Interfaces).
	Interfaces func() ([]network.Iface, error)
	// Hostname returns the host name (default os.Hostname).
	Hostname func() (string, error)
	// LookPath finds a command (default exec.LookPath): grains that come
	// from a command's output (osarch, systemd, gpus, gateways) are left
	// out, as with Salt, when it is not installed.
	LookPath func(name string) (string, error)
	// Output runs a command and returns its standard output (default: run
	// it, with a time limit); an exit status other than 0 is an error.
	Output func(ctx context.Context, name string, args ...string) (string, error)
	// Version is brine's own release, reported as the brineversion grain
	// beside saltversion (which stays Salt's, for formulas that compare
	// it): salt-run manage.versions and -G 'brineversion:…' see which
	// release each agent runs. "" leaves the grain out.
	Version string
}

// commandTimeout bounds each command the grains run (dpkg, systemctl, ip,
// lspci), so that a hung one costs the agent's start this much at most.
const commandTimeout = 10 * time.Second

func (c Collector) lookPath(name string) (string, error) {
	if c.LookPath != nil {
		return c.LookPath(name)
	}
	return exec.LookPath(name)
}

func (c Collector) output(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	if c.Output != nil {
		return c.Output(ctx, name, args...)
	}
	if c.LookPath != nil {
		path, err := c.LookPath(name)
		if err != nil {
			return "", err
		}
		name = path
	}
	return RunCommand(ctx, name, args...)
}

// RunCommand is how the grains run a command by default (Collector.Output
// unset): found on PATH, in the C locale, its standard output; an exit
// status other than 0 is an error. A Collector.Output that only wraps it
// (a cache, say) behaves as the default does.
func RunCommand(ctx context.Context, name string, args ...string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	return string(out), err
}

// Collect returns the core grains for an agent called id, with static
// overriding what was gathered (Salt's `grains:` in the minion config wins
// over core grains). A fact that cannot be read is left out, never guessed.
func (c Collector) Collect(id string, static map[string]any) map[string]any {
	g := map[string]any{
		"id":       id,
		"kernel":   kernelName(),
		"cpuarch":  cpuArch(),
		"num_cpus": runtime.NumCPU(),
	}
	c.platform(g)
	maps.Copy(g, static)
	return g
}

func kernelName() string {
	if runtime.GOOS == "linux" {
		return "Linux"
	}
	return strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:]
}

func cpuArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// osFamilies maps os-release ids to Salt's os and os_family grains.
var osFamilies = map[string][2]string{
	"debian": {"Debian", "Debian"}, "ubuntu": {"Ubuntu", "Debian"}, "raspbian": {"Raspbian", "Debian"},
	"linuxmint": {"Mint", "Debian"}, "rhel": {"RedHat", "RedHat"}, "centos": {"CentOS", "RedHat"},
	"fedora": {"Fedora", "RedHat"}, "rocky": {"Rocky", "RedHat"}, "almalinux": {"AlmaLinux", "RedHat"},
	"amzn": {"Amazon", "RedHat"}, "ol": {"OEL", "RedHat"}, "opensuse-leap": {"Leap", "Suse"},
	"sles": {"SUSE", "Suse"}, "arch": {"Arch", "Arch"}, "alpine": {"Alpine", "Alpine"}, "gentoo": {"Gentoo", "Gentoo"},
}

// osRelease sets os, os_family, osrelease, oscodename, osfullname and
// osmajorrelease from os-release(5), and returns its keys (nil when there
// is none).
func (c Collector) osRelease(g map[string]any) map[string]string {
	b, err := os.ReadFile(c.Root + "/etc/os-release")
	if err != nil {
		b, err = os.ReadFile(c.Root + "/usr/lib/os-release")
		if err != nil {
			return nil
		}
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else {
			v = strings.Trim(v, `'"`)
		}
		kv[k] = v
	}
	name, family := kv["NAME"], ""
	if f, ok := osFamilies[kv["ID"]]; ok {
		name, family = f[0], f[1]
	} else {
		for _, like := range strings.Fields(kv["ID_LIKE"]) {
			if f, ok := osFamilies[like]; ok {
				family = f[1]
				break
			}
		}
	}
	if name != "" {
		g["os"] = name
	}
	if family == "" {
		family = name
	}
	if family != "" {
		g["os_family"] = family
	}
	if v := kv["NAME"]; v != "" {
		g["osfullname"] = v
	}
	if v := kv["VERSION_ID"]; v != "" {
		g["osrelease"] = v
		major, _, _ := strings.Cut(v, ".")
		if n, err := strconv.Atoi(major); err == nil {
			g["osmajorrelease"] = n
		}
	}
	if v := kv["VERSION_CODENAME"]; v != "" {
		g["oscodename"] = v
	}
	return kv
}

// memTotal is MemTotal from /proc/meminfo in MiB, as Salt's mem_total.
func (c Collector) memTotal() (int, bool) {
	b, err := os.ReadFile(c.Root + "/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if kb, err := strconv.Atoi(f[0]); err == nil {
					return kb / 1024, true
				}
			}
		}
	}
	return 0, false
}

// names sets host, fqdn, domain and nodename. The fully qualified name is
// the host name when it has a dot, else the canonical name the resolver
// (with /etc/hosts) gives it, as Python's socket.getfqdn does.
func (c Collector) names(g map[string]any) {
	hostname := c.Hostname
	if hostname == nil {
		hostname = os.Hostname
	}
	h, err := hostname()
	if err != nil || h == "" {
		return
	}
	g["nodename"] = h
	fqdn := FQDN(h)
	host, domain, _ := strings.Cut(fqdn, ".")
	g["fqdn"], g["host"], g["domain"] = fqdn, host, domain
	g["localhost"] = h
}

// FQDN returns the fully qualified form of host name h (h itself when the
// resolver knows no longer one).
func FQDN(h string) string {
	if strings.Contains(h, ".") {
		return h
	}
	// Bounded as the other grains' lookups are: a resolver that does not
	// answer (a VM whose nameserver is not up yet) costs resolverTimeout
	// once, not the resolver's retries across every search domain.
	ctx, cancel := context.WithTimeout(context.Background(), resolverTimeout)
	defer cancel()
	if cname, err := net.DefaultResolver.LookupCNAME(ctx, h); err == nil {
		if c := strings.TrimSuffix(cname, "."); strings.Contains(c, ".") {
			return c
		}
	}
	return h
}

// addresses sets ipv4, ipv6, ip4_interfaces, ip6_interfaces,
// ip_interfaces and hwaddr_interfaces.
func (c Collector) addresses(g map[string]any) {
	list := c.Interfaces
	if list == nil {
		list = network.Interfaces
	}
	ifs, err := list()
	if err != nil {
		return
	}
	v4, v6 := []string{}, []string{}
	ip4, ip6, ipAll, hw := map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}
	for _, it := range ifs {
		a4, a6 := []any{}, []any{}
		for _, p := range it.V4 {
			s := p.Addr().String()
			a4 = append(a4, s)
			if !slices.Contains(v4, s) {
				v4 = append(v4, s)
			}
		}
		for _, p := range it.V6 {
			s := p.Addr().String()
			a6 = append(a6, s)
			if !slices.Contains(v6, s) {
				v6 = append(v6, s)
			}
		}
		ip4[it.Name], ip6[it.Name] = a4, a6
		ipAll[it.Name] = append(slices.Clone(a4), a6...)
		if it.MAC != "" {
			hw[it.Name] = it.MAC
		} else {
			hw[it.Name] = "00:00:00:00:00:00"
		}
	}
	slices.Sort(v4)
	slices.Sort(v6)
	g["ipv4"], g["ipv6"] = py.List(v4), py.List(v6)
	g["ip4_interfaces"], g["ip6_interfaces"], g["ip_interfaces"] = ip4, ip6, ipAll
	g["hwaddr_interfaces"] = hw
}

// virtual names the virtualisation the machine runs under, with Salt's
// values ("physical" when none is detected): containers first, then the
// DMI vendor strings hypervisors set.
func (c Collector) virtual() string {
	if _, err := os.Stat(c.Root + "/.dockerenv"); err == nil {
		return "container"
	}
	if b, err := os.ReadFile(c.Root + "/run/systemd/container"); err == nil {
		switch v := strings.TrimSpace(string(b)); v {
		case "lxc", "lxc-libvirt":
			return "LXC"
		case "":
		default:
			return "container"
		}
	}
	var dmi strings.Builder
	for _, f := range []string{"sys_vendor", "product_name", "bios_vendor"} {
		b, _ := os.ReadFile(c.Root + "/sys/class/dmi/id/" + f)
		dmi.Write(b)
		dmi.WriteByte(' ')
	}
	s := dmi.String()
	for _, m := range []struct{ sub, v string }{
		{"VMware", "VMware"}, {"VirtualBox", "VirtualBox"}, {"innotek", "VirtualBox"}, {"QEMU", "kvm"},
		{"KVM", "kvm"}, {"Amazon EC2", "kvm"}, {"Xen", "xen"}, {"Microsoft Corporation", "VirtualPC"},
		{"Google", "kvm"}, {"OpenStack", "kvm"}, {"Parallels", "Parallels"},
	} {
		if strings.Contains(s, m.sub) {
			return m.v
		}
	}
	if b, err := os.ReadFile(c.Root + "/proc/cpuinfo"); err == nil && bytes.Contains(b, []byte(" hypervisor")) {
		return "kvm"
	}
	return "physical"
}

// more sets the core grains Salt has beyond the ones above, each from the
// same source as Salt's (salt/grains/core.py, extra.py, disks.py,
// minion_process.py, zfs.py): release fingerprints, the init system,
// hardware, the resolver and gateways, and the agent's process.
func (c Collector) more(g map[string]any) {
	osReleaseData(g)
	family, _ := g["os_family"].(string)
	cpuarch, _ := g["cpuarch"].(string)
	g["osarch"] = c.osArch(family, cpuarch)
	g["init"] = c.initSystem()
	g["ps"] = ps(g)
	c.systemd(g)
	c.selinux(g)
	c.cpuData(g)
	if swap, ok := c.swapTotal(); ok {
		g["swap_total"] = swap
	}
	c.gpus(g)
	c.disks(g)
	c.hwData(g)
	c.uefi(g)
	c.kernelParams(g)
	c.zfs(g)
	_, err := c.lookPath("transactional-update")
	g["transactional"] = err == nil
	c.dns(g)
	c.gateways(g)
	ctx, cancel := context.WithTimeout(context.Background(), resolverTimeout)
	defer cancel()
	fqdnIPs(ctx, g)
	fqdns(ctx, g)
	process(g)
	g["locale_info"] = localeInfo()
	if id, _ := g["id"].(string); id != "" {
		g["server_id"] = serverID(id)
	}
	g["saltversion"] = SaltVersion
	g["saltversioninfo"] = SaltVersionInfo
	if c.Version != "" {
		g["brineversion"] = c.Version
	}
}
