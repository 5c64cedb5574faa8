package grains

import (
	"regexp"
	"strconv"
	"strings"
)

// This file holds the logic of Salt's Windows grains that does not touch
// Windows itself (grains_windows.go reads the registry), so that it is
// tested on every system.

// winInfo is what the Windows grains are made of: the registry's
// CurrentVersion and BIOS keys, the environment and the domain join.
type winInfo struct {
	// ProductName is CurrentVersion's ProductName ("Windows 10 Pro",
	// "Windows Server 2019 Standard"); InstallationType "Client" or
	// "Server".
	ProductName, InstallationType string
	// Major, Minor and Build are the kernel's version (10.0.19045).
	Major, Minor, Build int
	// ServicePack is CSDVersion's number (0: none).
	ServicePack int
	// Manufacturer, Model, BIOSVersion and BIOSVendor are from the BIOS
	// key (SMBIOS); BIOSVersions is SystemBiosVersion, whose first line is
	// what WMI's Win32_BIOS.Version says ("VRTUAL - 1" on Hyper-V).
	Manufacturer, Model, BIOSVersion, BIOSVendor string
	BIOSVersions                                 []string
	BoardProduct                                 string
	// Domain is the domain or workgroup joined, DomainType Salt's name of
	// the join ("Domain", "Workgroup", "Unjoined", "Unknown").
	Domain, DomainType string
	// TimeZone is the zone's display name ("(UTC+01:00) Amsterdam, …").
	TimeZone string
	// CPUModel is the first processor's ProcessorNameString.
	CPUModel string
}

// caption is WMI's Win32_OperatingSystem.Caption, which Salt's osfullname
// is: "Microsoft " and the product name, Windows 11 named as such (its
// registry ProductName still says Windows 10).
func (w winInfo) caption() string {
	name := w.ProductName
	if w.Build >= 22000 && strings.Contains(name, "Windows 10") && !strings.Contains(name, "Server") {
		name = strings.Replace(name, "Windows 10", "Windows 11", 1)
	}
	if name != "" && !strings.HasPrefix(name, "Microsoft") {
		name = "Microsoft " + name
	}
	return name
}

// version is WMI's Version, major.minor.build: Salt's kernelrelease,
// kernelversion and osversion.
func (w winInfo) version() string {
	return strconv.Itoa(w.Major) + "." + strconv.Itoa(w.Minor) + "." + strconv.Itoa(w.Build)
}

var (
	serverNoYear = regexp.MustCompile(`^Microsoft[^\d]+(Server|Datacenter|Standard|Essentials)$`)
	digitsStart  = regexp.MustCompile(`^\d+`)
	releaseWord  = regexp.MustCompile(`^R\d+$`)
	clientWord   = regexp.MustCompile(`^(\d+(\.\d+)?)|^Thin|^Vista|^XP$`)
)

// osRelease is Salt's _windows_os_release_grain: the release in the
// caption ("10", "2019Server", "2012ServerR2"), or from the kernel's
// version (Python's platform.release()) when the caption names none.
func (w winInfo) osRelease() string {
	caption := w.caption()
	version, release := "Unknown", ""
	if strings.Contains(caption, "Server") {
		if serverNoYear.MatchString(caption) {
			version = "2019"
		} else {
			for _, item := range strings.Split(caption, " ") {
				if digitsStart.MatchString(item) {
					version = item
				}
				if releaseWord.MatchString(item) {
					release = item
				}
			}
		}
		return version + "Server" + release
	}
	for _, item := range strings.Split(caption, " ") {
		if clientWord.MatchString(item) {
			version = item
		}
	}
	if version != "Unknown" {
		return version
	}
	return w.platformRelease()
}

// platformRelease is Python's platform.release() on Windows: the
// marketing release of the kernel's version.
func (w winInfo) platformRelease() string {
	server := strings.EqualFold(w.InstallationType, "Server")
	switch v := [2]int{w.Major, w.Minor}; {
	case v[0] >= 10 && server:
		return "2016Server"
	case v[0] >= 10:
		return "10"
	case v == [2]int{6, 3}:
		return map[bool]string{false: "8.1", true: "2012ServerR2"}[server]
	case v == [2]int{6, 2}:
		return map[bool]string{false: "8", true: "2012Server"}[server]
	case v == [2]int{6, 1}:
		return map[bool]string{false: "7", true: "2008ServerR2"}[server]
	case v == [2]int{6, 0}:
		return map[bool]string{false: "Vista", true: "2008Server"}[server]
	}
	return "post2016Server"
}

// osReleaseInfo is Salt's osrelease_info on Windows: a server release
// split at "Server" (its R dropped), a client one at dots, the numeric
// parts as numbers.
func osReleaseInfo(rel string) []any {
	var parts []string
	if year, r, ok := strings.Cut(rel, "Server"); ok {
		parts = []string{year, strings.TrimLeft(r, "R")}
	} else {
		parts = strings.Split(rel, ".")
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
		if isDigits(p) {
			if n, err := strconv.Atoi(p); err == nil {
				out[i] = n
			}
		}
	}
	return out
}

// virtual is Salt's Windows virtual and virtual_subtype: the BIOS
// version (_windows_platform_data), then the manufacturer and model
// (_windows_virtual); "physical" when none says a hypervisor.
func (w winInfo) virtual() (virtual, subtype string) {
	bios := strings.Join(append([]string{w.BIOSVersion}, w.BIOSVersions...), " ")
	virtual = "physical"
	switch {
	case strings.Contains(bios, "VRTUAL"):
		virtual = "HyperV"
	case strings.Contains(bios, "A M I"):
		virtual = "VirtualPC"
	case strings.Contains(w.Model, "VMware"):
		virtual = "VMware"
	case strings.Contains(w.Model, "VirtualBox"):
		virtual = "VirtualBox"
	case strings.Contains(bios, "Xen"):
		virtual = "Xen"
		if strings.Contains(w.Model, "HVM domU") {
			subtype = "HVM domU"
		}
	case strings.Contains(w.Model, "OpenStack"):
		virtual = "OpenStack"
	case strings.Contains(bios, "AMAZON"):
		virtual = "EC2"
	}
	m, p := w.Manufacturer, w.Model
	if strings.Contains(m, "QEMU") {
		virtual = "kvm"
	}
	switch {
	case strings.Contains(m, "Bochs"):
		virtual = "kvm"
	case strings.Contains(p, "oVirt"):
		virtual, subtype = "kvm", "oVirt"
	case strings.Contains(p, "RHEV Hypervisor"):
		virtual, subtype = "kvm", "rhev"
	case strings.Contains(p, "VirtualBox"):
		virtual = "VirtualBox"
	case strings.Contains(p, "VMware"):
		virtual = "VMware"
	case strings.Contains(m, "Microsoft") && strings.Contains(p, "Virtual Machine"):
		virtual = "VirtualPC"
	case strings.Contains(m, "Parallels"):
		virtual = "Parallels"
	case strings.Contains(p, "CloudStack KVM Hypervisor"):
		virtual, subtype = "kvm", "cloudstack"
	}
	return virtual, subtype
}

// windowsCPUArch is Salt's cpuarch on Windows, Python's platform.machine():
// the processor architecture Windows names (AMD64, ARM64, x86), the
// machine's rather than a 32-bit process's (PROCESSOR_ARCHITEW6432).
func windowsCPUArch(getenv func(string) string, goarch string) string {
	if a := getenv("PROCESSOR_ARCHITEW6432"); a != "" {
		return a
	}
	if a := getenv("PROCESSOR_ARCHITECTURE"); a != "" {
		return a
	}
	switch goarch {
	case "amd64":
		return "AMD64"
	case "arm64":
		return "ARM64"
	case "386":
		return "x86"
	}
	return goarch
}

// set sets the Windows grains from w, as Salt's os_data does on Windows;
// a value the registry did not give is left out.
func (w winInfo) set(g map[string]any) {
	g["os"], g["os_family"], g["init"], g["ps"] = "Windows", "Windows", "Windows", "tasklist.exe"
	if w.Major > 0 {
		v := w.version()
		g["kernelrelease"], g["kernelversion"], g["osversion"] = v, v, v
	}
	if w.ProductName != "" || w.Major > 0 {
		rel := w.osRelease()
		g["osrelease"] = rel
		g["osrelease_info"] = osReleaseInfo(rel)
		g["osfinger"] = "Windows-" + rel
	}
	if c := w.caption(); c != "" {
		g["osfullname"] = c
		g["osmanufacturer"] = "Microsoft Corporation"
	}
	if w.ServicePack > 0 {
		g["osservicepack"] = "SP" + strconv.Itoa(w.ServicePack)
	}
	for k, v := range map[string]string{"manufacturer": w.Manufacturer, "productname": w.Model,
		"biosversion": w.BIOSVersion, "timezone": w.TimeZone, "windowsdomain": w.Domain,
		"windowsdomaintype": w.DomainType, "cpu_model": w.CPUModel} {
		if v = strings.TrimSpace(v); v != "" {
			g[k] = v
		}
	}
	if w.BoardProduct != "" {
		g["motherboard"] = map[string]any{"productname": w.BoardProduct, "serialnumber": nil}
	}
	virtual, subtype := w.virtual()
	g["virtual"] = virtual
	if subtype != "" {
		g["virtual_subtype"] = subtype
	}
}
