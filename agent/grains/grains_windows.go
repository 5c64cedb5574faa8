package grains

import (
	"os"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// platform sets the grains of a Windows system as Salt's Windows minion
// does, from the registry rather than WMI (a service has the registry
// without COM): the version and product from CurrentVersion, hardware and
// virtualisation from the BIOS key, memory, the domain joined, names and
// addresses, and the grains every agent has (versions, locale, process).
func (c Collector) platform(g map[string]any) {
	w := readWinInfo()
	g["cpuarch"] = windowsCPUArch(os.Getenv, runtime.GOARCH)
	g["osarch"] = g["cpuarch"]
	if n, err := strconv.Atoi(os.Getenv("NUMBER_OF_PROCESSORS")); err == nil && n > 0 {
		g["num_cpus"] = n
	}
	w.set(g)
	if mem, ok := totalPhys(); ok {
		g["mem_total"] = int(mem >> 20)
	}
	c.names(g)
	c.addresses(g)
	process(g)
	// Windows has no numeric uid/gid: the account and its shell are what
	// Salt's minion_process grains give there.
	delete(g, "uid")
	delete(g, "gid")
	if u, err := user.Current(); err == nil {
		g["username"] = u.Username
	}
	g["shell"] = os.Getenv("COMSPEC")
	if g["shell"] == "" {
		g["shell"] = `C:\Windows\system32\cmd.exe`
	}
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

// readWinInfo reads what the Windows grains are made of; what cannot be
// read stays empty and its grain is left out.
func readWinInfo() winInfo {
	var w winInfo
	if k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SOFTWARE\Microsoft\Windows NT\CurrentVersion`,
		registry.QUERY_VALUE); err == nil {
		w.ProductName = regString(k, "ProductName")
		w.InstallationType = regString(k, "InstallationType")
		if v, _, err := k.GetIntegerValue("CurrentMajorVersionNumber"); err == nil {
			w.Major = int(v)
			if v, _, err := k.GetIntegerValue("CurrentMinorVersionNumber"); err == nil {
				w.Minor = int(v)
			}
		} else if maj, min, ok := strings.Cut(regString(k, "CurrentVersion"), "."); ok {
			// Before Windows 10 the version is a "6.1" string.
			w.Major, _ = strconv.Atoi(maj)
			w.Minor, _ = strconv.Atoi(min)
		}
		w.Build, _ = strconv.Atoi(regString(k, "CurrentBuildNumber"))
		if sp := regString(k, "CSDVersion"); sp != "" {
			f := strings.Fields(sp)
			w.ServicePack, _ = strconv.Atoi(f[len(f)-1])
		}
		k.Close()
	}
	if w.Major == 0 {
		// The kernel's own version when the registry has none.
		v := windows.RtlGetVersion()
		w.Major, w.Minor, w.Build = int(v.MajorVersion), int(v.MinorVersion), int(v.BuildNumber)
	}
	if k, err := registry.OpenKey(registry.LOCAL_MACHINE, `HARDWARE\DESCRIPTION\System\BIOS`,
		registry.QUERY_VALUE); err == nil {
		w.Manufacturer = regString(k, "SystemManufacturer")
		w.Model = regString(k, "SystemProductName")
		w.BIOSVersion = regString(k, "BIOSVersion")
		w.BIOSVendor = regString(k, "BIOSVendor")
		w.BoardProduct = regString(k, "BaseBoardProduct")
		k.Close()
	}
	if k, err := registry.OpenKey(registry.LOCAL_MACHINE, `HARDWARE\DESCRIPTION\System`,
		registry.QUERY_VALUE); err == nil {
		w.BIOSVersions, _, _ = k.GetStringsValue("SystemBiosVersion")
		k.Close()
	}
	if k, err := registry.OpenKey(registry.LOCAL_MACHINE, `HARDWARE\DESCRIPTION\System\CentralProcessor\0`,
		registry.QUERY_VALUE); err == nil {
		w.CPUModel = regString(k, "ProcessorNameString")
		k.Close()
	}
	w.TimeZone = timeZone()
	w.Domain, w.DomainType = joinInfo()
	return w
}

// regString is a string value of k, "" when it has none.
func regString(k registry.Key, name string) string {
	s, _, err := k.GetStringValue(name)
	if err != nil {
		return ""
	}
	return s
}

// timeZone is the display name of the system's time zone, as WMI's
// Win32_TimeZone.Description (Salt's timezone grain).
func timeZone() string {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SYSTEM\CurrentControlSet\Control\TimeZoneInformation`,
		registry.QUERY_VALUE)
	if err != nil {
		return ""
	}
	name := regString(k, "TimeZoneKeyName")
	k.Close()
	if name == "" {
		return ""
	}
	z, err := registry.OpenKey(registry.LOCAL_MACHINE,
		`SOFTWARE\Microsoft\Windows NT\CurrentVersion\Time Zones\`+name, registry.QUERY_VALUE)
	if err != nil {
		return name
	}
	defer z.Close()
	if d := regString(z, "Display"); d != "" {
		return d
	}
	return name
}

// joinInfo is the domain or workgroup the machine joined and Salt's name
// of the join (win_osinfo.get_join_info).
func joinInfo() (string, string) {
	var name *uint16
	var status uint32
	if err := windows.NetGetJoinInformation(nil, &name, &status); err != nil {
		return "", ""
	}
	defer windows.NetApiBufferFree((*byte)(unsafe.Pointer(name)))
	kind := map[uint32]string{windows.NetSetupUnknownStatus: "Unknown", windows.NetSetupUnjoined: "Unjoined",
		windows.NetSetupWorkgroupName: "Workgroup", windows.NetSetupDomainName: "Domain"}[status]
	return windows.UTF16PtrToString(name), kind
}

// memoryStatusEx is Windows' MEMORYSTATUSEX.
type memoryStatusEx struct {
	Length               uint32
	MemoryLoad           uint32
	TotalPhys            uint64
	AvailPhys            uint64
	TotalPageFile        uint64
	AvailPageFile        uint64
	TotalVirtual         uint64
	AvailVirtual         uint64
	AvailExtendedVirtual uint64
}

var globalMemoryStatusEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")

// totalPhys is the installed memory in bytes (Salt's mem_total, in MiB).
func totalPhys() (uint64, bool) {
	m := memoryStatusEx{Length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	if r, _, _ := globalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&m))); r == 0 {
		return 0, false
	}
	return m.TotalPhys, true
}
