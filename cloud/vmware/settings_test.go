package vmware

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinehq/brine/cloud"
)

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]MemorySize{
		"2048": 2048, "2048MB": 2048, "2GB": 2048, "2 GiB": 2048, "1.5GB": 1536, "512mb": 512, "8G": 8192, "256MiB": 256,
	} {
		if got, err := ParseMemory(in); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1GB", "0", "GB", "2TBx"} {
		if _, err := ParseMemory(in); err == nil {
			t.Errorf("ParseMemory(%q) accepted", in)
		}
	}
}

// vmFrom loads a one-provider, one-profile config and returns the VM.
func vmFrom(t *testing.T, profile string) *cloud.VM {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cloud.providers"), []byte("vc:\n  driver: vmware\n  url: simulator\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "cloud.profiles"), []byte(profile), 0o644)
	cfg, err := cloud.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := cfg.NewVM("vm1", "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

func TestDecodeProfile(t *testing.T) {
	vm := vmFrom(t, `p:
  provider: vc
  clonefrom: tmpl
  num_cpus: 4
  memory: 8GB
  devices:
    network:
      Network adapter 1:
        name: VM Network
        ip: 10.0.0.5
        subnet_mask: 255.255.255.0
        gateway: 10.0.0.1
      Network adapter 2:
        name: backup
        gateway: [10.1.0.1, 10.1.0.2]
`)
	p, err := decodeProfile(vm.Settings)
	if err != nil {
		t.Fatal(err)
	}
	if p.NumCPUs != 4 || p.Memory != 8192 || !p.PowerOn || p.IPTimeout != 1200 || p.Domain != "local" {
		t.Errorf("%+v", p)
	}
	if n := p.Devices.Network["Network adapter 1"]; n.IP != "10.0.0.5" || len(n.Gateway) != 1 {
		t.Errorf("adapter 1 %+v", n)
	}
	if n := p.Devices.Network["Network adapter 2"]; len(n.Gateway) != 2 {
		t.Errorf("adapter 2 %+v", n)
	}
}

func TestDecodeProfileErrors(t *testing.T) {
	cases := []struct{ profile, want string }{
		{"p:\n  provider: vc\n", "needs clonefrom"},
		{"p:\n  provider: vc\n  clonefrom: t\n  memory: lots\n", "cloud.profiles:4: memory:"},
		{"p:\n  provider: vc\n  clonefrom: t\n  num_cpus: many\n", "cloud.profiles:4: num_cpus:"},
		{"p:\n  provider: vc\n  clonefrom: t\n  num_cpus: -2\n", "cloud.profiles:4: num_cpus: must not be negative"},
		{"p:\n  provider: vc\n  clonefrom: t\n  wait_for_ip_timeout: 0\n", "cloud.profiles:4: wait_for_ip_timeout: must be a positive"},
		{"p:\n  provider: vc\n  clonefrom: t\n  power_on: maybe\n", "cloud.profiles:4: power_on:"},
		{"p:\n  provider: vc\n  clonefrom: t\n  devices:\n    network:\n      Network adapter 1:\n        ip: 10.0.0.5\n", "cloud.profiles:5: devices: network \"Network adapter 1\": a static ip needs subnet_mask"},
	}
	for _, tc := range cases {
		_, err := decodeProfile(vmFrom(t, tc.profile).Settings)
		if !errors.Is(err, cloud.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.profile, err, tc.want)
		}
	}
}

func TestSortLabels(t *testing.T) {
	l := []string{"Network adapter 10", "Network adapter 2", "Network adapter 1", "ethernet-0"}
	sortLabels(l)
	if got := strings.Join(l, ","); got != "ethernet-0,Network adapter 1,Network adapter 2,Network adapter 10" {
		t.Errorf("%s", got)
	}
}

func TestOpenRefusesBadProviders(t *testing.T) {
	sim, err := StartSimulator(SimulatorConfig{User: "u", Password: "right"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	for _, tc := range []struct{ provider, want string }{
		{"vc:\n  driver: vmware\n", "provider vc: no url"},
		{"vc:\n  driver: vmware\n  url: https://" + sim.URL().Host + "/sdk\n  user: u\n  password: wrong\n  verify_ssl: False\n", "login as \"u\" refused"},
		{"vc:\n  driver: vmware\n  url: https://" + sim.URL().Host + "/sdk\n  user: u\n  password: right\n", "certificate"},
		{"vc:\n  driver: vmware\n  url: " + sim.URL().Host + "\n  user: u\n  password: env://NOT_SET_ANYWHERE\n", "cloud.providers:5: password: environment variable NOT_SET_ANYWHERE is not set"},
		{"vc:\n  driver: vmware\n  url: https://127.0.0.1:1/sdk\n  user: u\n  password: wrong\n", "127.0.0.1:1"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "cloud.providers"), []byte(tc.provider), 0o644)
		cfg, err := cloud.LoadConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Open(context.Background(), cfg.Providers["vc"])
		if err == nil {
			d.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "wrong") {
			t.Errorf("%q: %v, want %q", tc.provider, err, tc.want)
		}
	}
}
