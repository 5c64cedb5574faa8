//go:build !windows

package grains

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/modules/network"
)

// writeTree writes files (path relative to root → content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeCommands is a Collector whose commands are outputs given here (a
// command not listed is not installed).
func fakeCommands(root string, outputs map[string]string) Collector {
	return Collector{
		Root:       root,
		Hostname:   func() (string, error) { return "solo", nil },
		Interfaces: func() ([]network.Iface, error) { return nil, nil },
		LookPath: func(name string) (string, error) {
			for k := range outputs {
				if strings.Fields(k)[0] == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", exec.ErrNotFound
		},
		Output: func(_ context.Context, name string, args ...string) (string, error) {
			if out, ok := outputs[strings.Join(append([]string{name}, args...), " ")]; ok {
				return out, nil
			}
			return "", errors.New("exit status 1")
		},
	}
}

// The release grains are derived from osrelease as Salt's _osrelease_data
// derives them (values from salt-call --local grains.items on Debian 12,
// and Salt's unit tests for the others).
func TestOSReleaseData(t *testing.T) {
	for _, tc := range []struct {
		os, fullname, release string
		info                  []any
		major                 any
		finger                string
	}{
		{"Debian", "Debian GNU/Linux", "12", []any{12}, 12, "Debian-12"},
		{"Ubuntu", "Ubuntu", "22.04", []any{22, 4}, 22, "Ubuntu-22.04"},
		{"CentOS Stream", "CentOS Stream", "9", []any{9}, 9, "CentOS Stream-9"},
		{"Rocky", "Rocky Linux", "9.3", []any{9, 3}, 9, "Rocky Linux-9"},
		{"Raspbian", "Raspbian GNU/Linux", "11", []any{11}, 11, "Raspbian-11"},
		{"Debian", "Debian GNU/Linux", "trixie/sid", []any{"trixie/sid"}, nil, "Debian-trixie/sid"},
	} {
		g := map[string]any{"os": tc.os, "osfullname": tc.fullname, "osrelease": tc.release, "osmajorrelease": 99}
		osReleaseData(g)
		if !reflect.DeepEqual(g["osrelease_info"], tc.info) || g["osmajorrelease"] != tc.major || g["osfinger"] != tc.finger {
			t.Errorf("%s %s: osrelease_info %#v osmajorrelease %#v osfinger %q, want %#v %#v %q",
				tc.os, tc.release, g["osrelease_info"], g["osmajorrelease"], g["osfinger"], tc.info, tc.major, tc.finger)
		}
	}
}

// lsb_distrib_* come from /etc/lsb-release, else from os-release, as on a
// Salt minion whose Python has no lsb_release module.
func TestLSBDistrib(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  map[string]any
	}{
		{"debian os-release only", map[string]string{
			"etc/os-release": "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\nID=debian\n",
		}, map[string]any{"lsb_distrib_id": "Debian GNU/Linux", "lsb_distrib_release": "12", "lsb_distrib_codename": "bookworm"}},
		{"ubuntu lsb-release", map[string]string{
			"etc/os-release":  "NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nVERSION_CODENAME=jammy\nID=ubuntu\n",
			"etc/lsb-release": "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=22.04\nDISTRIB_CODENAME=jammy\nDISTRIB_DESCRIPTION=\"Ubuntu 22.04.3 LTS\"\n",
		}, map[string]any{"lsb_distrib_id": "Ubuntu", "lsb_distrib_release": "22.04", "lsb_distrib_codename": "jammy",
			"lsb_distrib_description": "Ubuntu 22.04.3 LTS"}},
		{"no codename", map[string]string{
			"etc/os-release": "NAME=\"Arch Linux\"\nPRETTY_NAME=\"Arch Linux\"\nID=arch\n",
		}, map[string]any{"lsb_distrib_id": "Arch Linux", "lsb_distrib_codename": "Arch Linux"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			g := fakeCommands(root, nil).Collect("solo", nil)
			got := map[string]any{}
			for k, v := range g {
				if strings.HasPrefix(k, "lsb_") {
					got[k] = v
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("lsb grains %v, want %v", got, tc.want)
			}
		})
	}
}

// The grains read from files and commands, on a fixture machine.
func TestMoreGrainsFromFixture(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"etc/os-release": "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\nID=debian\n",
		"proc/cpuinfo":   "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu vme sse2\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu vme sse2\n",
		"proc/meminfo":   "MemTotal:        4030464 kB\nSwapTotal:       2097148 kB\n",
		"proc/cmdline":   "BOOT_IMAGE=/vmlinuz root=UUID=abc ro quiet a=b=c x=\"y z\"\n",
		"proc/1/cmdline": "/sbin/init\x00splash\x00",
		"sbin/init":      "\x7fELF... libsystemd-shared ... SYSTEMD ...",
		"etc/resolv.conf": "domain corp.example\nsearch a.example b.example # comment\nnameserver 10.0.0.1\nnameserver 10.0.0.1\n" +
			"nameserver 2001:db8::1 ; x\nnameserver bogus\nsortlist 130.155.160.0/255.255.240.0 130.155.0.0 10.1.2.3 192.168.1.0/24\n" +
			"options ndots:2 timeout:1\noptions rotate\n",
		"sys/block/vda/queue/rotational":                   "1\n",
		"sys/block/nvme0n1/queue/rotational":               "0\n",
		"sys/class/dmi/id/sys_vendor":                      "QEMU\n",
		"sys/class/dmi/id/product_uuid":                    "ABCDEF01-0000-0000-0000-000000000000\n",
		"sys/firmware/efi/efivars/SecureBoot-x/data":       "\x06\x00\x00\x00\x01",
		"sys/devices/virtual/block/loop0/queue/rotational": "1\n",
	})
	if err := os.Symlink("../devices/virtual/block/loop0", filepath.Join(root, "sys/block/loop0")); err != nil {
		t.Fatal(err)
	}
	c := fakeCommands(root, map[string]string{
		"dpkg --print-architecture": "arm64\n",
		"selinuxenabled":            "",
		"getenforce":                "Permissive\n",
		"systemctl --version":       "systemd 252 (252.22-1~deb12u1)\n+PAM +AUDIT\n",
		"localectl":                 "",
		"ip -4 route show":          "default via 192.0.2.1 dev eth0\n192.0.2.0/24 dev eth0 proto kernel scope link src 192.0.2.2\n",
		"ip -6 route show":          "fe80::/64 dev eth0 proto kernel metric 256 pref medium\n",
		"lspci -vmm": "Slot:\t00:02.0\nClass:\tVGA compatible controller\nVendor:\tNVIDIA Corporation\nDevice:\tGA102\n\n" +
			"Slot:\t00:03.0\nClass:\tEthernet controller\nVendor:\tIntel Corporation\nDevice:\tI210\n",
	})
	c.LookPath = func(name string) (string, error) {
		switch name {
		case "/sbin/init":
			return "/sbin/init", nil
		case "dpkg", "systemctl", "localectl", "ip", "lspci", "selinuxenabled", "getenforce":
			return "/usr/bin/" + name, nil
		}
		return "", exec.ErrNotFound
	}
	g := c.Collect("web01", nil)
	want := map[string]any{
		"osfinger": "Debian-12", "osrelease_info": []any{12}, "osarch": "arm64", "init": "systemd", "ps": "ps -efHww",
		"systemd":   map[string]any{"version": "252", "features": "+PAM +AUDIT"},
		"selinux":   map[string]any{"enabled": true, "enforced": "Permissive"},
		"cpu_model": "AMD EPYC 7B13", "cpu_flags": []any{"fpu", "vme", "sse2"}, "swap_total": 2047,
		"kernelparams": []any{[]any{"BOOT_IMAGE", "/vmlinuz"}, []any{"root", nil}, []any{"ro", nil}, []any{"quiet", nil},
			[]any{"a", nil}, []any{"x", "y z"}},
		"dns": map[string]any{"nameservers": []any{"10.0.0.1", "2001:db8::1"}, "ip4_nameservers": []any{"10.0.0.1"},
			"ip6_nameservers": []any{"2001:db8::1"}, "domain": "corp.example", "search": []any{"a.example", "b.example"},
			"sortlist": []any{"130.155.160.0/255.255.240.0", "130.155.0.0/255.255.0.0", "10.0.0.0/255.0.0.0", "192.168.1.0/255.255.255.0"},
			"options":  []any{"ndots:2", "rotate"}},
		"disks": []any{"vda"}, "ssds": []any{"nvme0n1"},
		"manufacturer": "QEMU", "uuid": "abcdef01-0000-0000-0000-000000000000",
		"efi": true, "efi-secure-boot": true,
		"ip_gw": true, "ip4_gw": "192.0.2.1", "ip6_gw": false,
		"gpus": []any{map[string]any{"vendor": "nvidia", "model": "GA102"}}, "num_gpus": 1,
		"transactional": false, "zfs_support": false, "zfs_feature_flags": false,
		"server_id": 291040525, "saltversion": "3006.6", "saltversioninfo": []any{3006, 6},
		"fqdns": []any{}, "fqdn_ip4": []any{}, "fqdn_ip6": []any{},
	}
	for k, v := range want {
		if !reflect.DeepEqual(g[k], v) {
			t.Errorf("grain %s = %#v, want %#v", k, g[k], v)
		}
	}
	// root=UUID=abc has two "=": Salt's kernelparams keeps no value for it.
	for _, k := range []string{"cwd", "path", "systempath", "shell", "pid", "uid", "gid", "username", "groupname", "locale_info"} {
		if _, ok := g[k]; !ok {
			t.Errorf("grain %s missing", k)
		}
	}
}

// Without the commands, their grains are left out or take Salt's
// defaults: osarch falls back to cpuarch, no gateway grains without ip(8),
// no systemd grain, no GPUs.
func TestMoreGrainsWithoutCommands(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"etc/os-release": "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nID=debian\n"})
	g := fakeCommands(root, nil).Collect("solo", nil)
	if g["osarch"] != g["cpuarch"] {
		t.Errorf("osarch %v, want cpuarch %v", g["osarch"], g["cpuarch"])
	}
	for _, k := range []string{"ip_gw", "ip4_gw", "systemd", "selinux", "kernelparams", "dns"} {
		if _, ok := g[k]; ok {
			t.Errorf("grain %s = %v, want it absent", k, g[k])
		}
	}
	if g["init"] != "unknown" || g["num_gpus"] != 0 || g["cpu_model"] != "Unknown" {
		t.Errorf("init %v num_gpus %v cpu_model %v", g["init"], g["num_gpus"], g["cpu_model"])
	}
}

// server_id is Salt's: sha256 of the id modulo 2³¹ (the value salt-call
// --local grains.item server_id printed for test-minion).
func TestServerIDMatchesSalt(t *testing.T) {
	for id, want := range map[string]int{"test-minion": 755963248, "web01": 291040525, "minion-1": 522211353} {
		if got := serverID(id); got != want {
			t.Errorf("server_id(%s) = %d, want %d", id, got, want)
		}
	}
}

// On this machine, osarch is what dpkg says (the test runs on Debian).
func TestOSArchOnThisMachine(t *testing.T) {
	out, err := exec.Command("dpkg", "--print-architecture").Output()
	if err != nil {
		t.Fatalf("this test needs dpkg (Debian): %v", err)
	}
	g := Collector{}.Collect("here", nil)
	if want := strings.TrimSpace(string(out)); g["osarch"] != want {
		t.Errorf("osarch %v, want %s", g["osarch"], want)
	}
	if g["osfinger"] == nil || g["saltversion"] != SaltVersion {
		t.Errorf("osfinger %v saltversion %v", g["osfinger"], g["saltversion"])
	}
}
