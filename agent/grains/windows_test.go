package grains

import (
	"reflect"
	"testing"
)

func TestWindowsOSRelease(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    winInfo
		rel  string
		info []any
		full string
	}{
		{"10 pro", winInfo{ProductName: "Windows 10 Pro", Major: 10, Build: 19045}, "10", []any{10},
			"Microsoft Windows 10 Pro"},
		{"11 reports 10", winInfo{ProductName: "Windows 10 Enterprise", Major: 10, Build: 22631}, "11", []any{11},
			"Microsoft Windows 11 Enterprise"},
		{"server 2019", winInfo{ProductName: "Windows Server 2019 Standard", Major: 10, Build: 17763}, "2019Server",
			[]any{2019, ""}, "Microsoft Windows Server 2019 Standard"},
		{"server 2012 r2", winInfo{ProductName: "Windows Server 2012 R2 Datacenter", Major: 6, Minor: 3},
			"2012ServerR2", []any{2012, 2}, "Microsoft Windows Server 2012 R2 Datacenter"},
		{"server without year", winInfo{ProductName: "Windows Server Datacenter", Major: 10}, "2019Server",
			[]any{2019, ""}, "Microsoft Windows Server Datacenter"},
		{"8.1", winInfo{ProductName: "Windows 8.1 Pro", Major: 6, Minor: 3}, "8.1", []any{8, 1},
			"Microsoft Windows 8.1 Pro"},
		{"vista", winInfo{ProductName: "Windows Vista Business", Major: 6}, "Vista", []any{"Vista"},
			"Microsoft Windows Vista Business"},
		{"wine's 7", winInfo{ProductName: "Microsoft Windows 7", Major: 6, Minor: 1, Build: 7601}, "7", []any{7},
			"Microsoft Windows 7"},
		{"no release in the name", winInfo{ProductName: "Windows Pro", Major: 10}, "10", []any{10},
			"Microsoft Windows Pro"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.w.osRelease(); got != tc.rel {
				t.Errorf("osrelease %q, want %q", got, tc.rel)
			}
			if got := osReleaseInfo(tc.rel); !reflect.DeepEqual(got, tc.info) {
				t.Errorf("osrelease_info %#v, want %#v", got, tc.info)
			}
			if got := tc.w.caption(); got != tc.full {
				t.Errorf("osfullname %q, want %q", got, tc.full)
			}
		})
	}
}

func TestWindowsVirtual(t *testing.T) {
	for _, tc := range []struct {
		w                winInfo
		virtual, subtype string
	}{
		{winInfo{Manufacturer: "Dell Inc.", Model: "OptiPlex 7090", BIOSVersion: "1.2.3"}, "physical", ""},
		{winInfo{BIOSVersions: []string{"VRTUAL - 1", "Hyper-V UEFI Release v4.1"}, Manufacturer: "Microsoft Corporation",
			Model: "Virtual Machine"}, "VirtualPC", ""},
		{winInfo{BIOSVersions: []string{"VRTUAL - 1"}}, "HyperV", ""},
		{winInfo{Manufacturer: "VMware, Inc.", Model: "VMware7,1"}, "VMware", ""},
		{winInfo{Manufacturer: "QEMU", Model: "Standard PC (Q35 + ICH9, 2009)"}, "kvm", ""},
		{winInfo{Manufacturer: "Xen", Model: "HVM domU", BIOSVersion: "4.11.amazon Xen"}, "Xen", "HVM domU"},
		{winInfo{Manufacturer: "Red Hat", Model: "RHEV Hypervisor"}, "kvm", "rhev"},
		{winInfo{Manufacturer: "innotek GmbH", Model: "VirtualBox"}, "VirtualBox", ""},
	} {
		v, s := tc.w.virtual()
		if v != tc.virtual || s != tc.subtype {
			t.Errorf("%+v: virtual %q/%q, want %q/%q", tc.w, v, s, tc.virtual, tc.subtype)
		}
	}
}

func TestWindowsGrainsSet(t *testing.T) {
	g := map[string]any{}
	winInfo{ProductName: "Windows Server 2022 Datacenter", InstallationType: "Server", Major: 10, Build: 20348,
		Manufacturer: "VMware, Inc.", Model: "VMware7,1", Domain: "CORP", DomainType: "Domain",
		CPUModel: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz"}.set(g)
	want := map[string]any{
		"os": "Windows", "os_family": "Windows", "init": "Windows", "ps": "tasklist.exe",
		"kernelrelease": "10.0.20348", "osversion": "10.0.20348", "osrelease": "2022Server",
		"osrelease_info": []any{2022, ""}, "osfinger": "Windows-2022Server",
		"osfullname": "Microsoft Windows Server 2022 Datacenter", "manufacturer": "VMware, Inc.",
		"productname": "VMware7,1", "windowsdomain": "CORP", "windowsdomaintype": "Domain", "virtual": "VMware",
		"cpu_model": "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
	}
	for k, v := range want {
		if !reflect.DeepEqual(g[k], v) {
			t.Errorf("grain %s = %#v, want %#v", k, g[k], v)
		}
	}
	for _, k := range []string{"osservicepack", "timezone", "biosversion", "virtual_subtype"} {
		if _, ok := g[k]; ok {
			t.Errorf("grain %s = %v, want it left out (not given)", k, g[k])
		}
	}
}

func TestWindowsCPUArch(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env    map[string]string
		goarch string
		want   string
	}{
		{map[string]string{"PROCESSOR_ARCHITECTURE": "AMD64"}, "amd64", "AMD64"},
		{map[string]string{"PROCESSOR_ARCHITECTURE": "x86", "PROCESSOR_ARCHITEW6432": "AMD64"}, "386", "AMD64"},
		{nil, "arm64", "ARM64"},
		{nil, "386", "x86"},
	} {
		if got := windowsCPUArch(env(tc.env), tc.goarch); got != tc.want {
			t.Errorf("cpuarch(%v, %s) = %q, want %q", tc.env, tc.goarch, got, tc.want)
		}
	}
}
