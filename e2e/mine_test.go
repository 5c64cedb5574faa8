package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/integrations/dnsmasq/dnsmasqtest"
)

// TestMineEndToEnd: a master fills the mine from a salt-cloud event sent
// by a client, writes dnsmasq's files, answers `brine mine get|list|delete`,
// and lets a reaction template read the mine with salt['mine.get'].
func TestMineEndToEnd(t *testing.T) {
	m := newTestMaster(t)
	files := t.TempDir()
	sls, err := filepath.Abs(filepath.Join("..", "testdata", "mine", "announce_ips.sls"))
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`dnsmasq:
  hostsfile: %[1]s/dhcp-hosts
  addn_hosts: %[1]s/addn-hosts
  domain: cloud.test
  debounce: 50ms
reactor:
  - 'myco/check':
    - %[2]s
`, files, sls)
	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "mine.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	m.start()

	created := `{"name": "web1", "event": "created instance", "provider": "sim:vmware", "driver": "vmware",
		"instance_id": "vm-42", "private_ips": ["10.20.0.11"], "macs": ["00:50:56:aa:bb:11"]}`
	if _, errs, code := m.run(nil, "event", "send", "salt/cloud/web1/created", created); code != 0 {
		t.Fatalf("event send: exit %d: %s", code, errs)
	}
	var got map[string][]string
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, errs, code := m.run(nil, "mine", "get", "web*", "network.ip_addrs", "--json")
		if code != 0 {
			t.Fatalf("mine get: exit %d: %s", code, errs)
		}
		got = nil
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("mine get --json printed %q: %v", out, err)
		}
		if len(got) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if fmt.Sprint(got) != "map[web1:[10.20.0.11]]" {
		t.Fatalf("mine get = %v, want web1's address", got)
	}
	out, _, _ := m.run(nil, "mine", "get", "web1", "network.ip_addrs")
	if out != "web1:\n    - 10.20.0.11\n" {
		t.Errorf("mine get (YAML) printed %q", out)
	}
	out, errs, code := m.run(nil, "mine", "list")
	if code != 0 || !strings.Contains(out, "web1") || !strings.Contains(out, "00:50:56:aa:bb:11") || !strings.Contains(out, "vm-42") {
		t.Errorf("mine list: exit %d\n%s%s", code, out, errs)
	}
	waitFile(t, filepath.Join(files, "addn-hosts"), "10.20.0.11 web1.cloud.test web1\n", true)
	waitFile(t, filepath.Join(files, "dhcp-hosts"), "00:50:56:aa:bb:11,10.20.0.11,web1\n", true)

	// A reaction template reads the mine.
	since := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	watch := tied(exec.Command(brineBin, "-c", m.confDir, "event", "watch", "myco/mine/seen", "--count", "1", "--since", since, "--json"))
	var wout, werr bytes.Buffer
	watch.Stdout, watch.Stderr = &wout, &werr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := m.run(nil, "event", "send", "myco/check", "name=web1"); code != 0 {
		t.Fatalf("event send: exit %d: %s", code, errs)
	}
	done := make(chan error, 1)
	go func() { done <- watch.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch: %v: %s", err, werr.String())
		}
	case <-time.After(30 * time.Second):
		_ = watch.Process.Kill()
		t.Fatalf("no myco/mine/seen event; master log:\n%s", m.log.String())
	}
	if s := wout.String(); !strings.Contains(s, `"ips":["10.20.0.11"]`) || !strings.Contains(s, `"all_web":1`) || !strings.Contains(s, `"web":"web1=10.20.0.11"`) {
		t.Errorf("reaction saw %s, want web1's addresses from salt['mine.get']", s)
	}

	// Any other source: the runner functions through `brine run`.
	if _, errs, code := m.run(nil, "run", "mine.update", "id=agent7", "ips=10.20.0.77,fd00::77", "grains={role: db}"); code != 0 {
		t.Fatalf("brine run mine.update: exit %d: %s", code, errs)
	}
	if out, errs, _ := m.run(nil, "mine", "get", "role:db", "ips", "--tgt-type", "grain", "--json"); strings.TrimSpace(out) != `{"agent7":["10.20.0.77","fd00::77"]}` {
		t.Errorf("mine get by grain = %s %s", out, errs)
	}
	waitFile(t, filepath.Join(files, "addn-hosts"), "fd00::77 agent7.cloud.test agent7\n", true)
	if out, errs, code := m.run(nil, "run", "dnsmasq.refresh", "force=True", "--json"); code != 0 || !strings.Contains(out, `"addn_hosts": 3`) && !strings.Contains(out, `"addn_hosts":3`) {
		t.Errorf("brine run dnsmasq.refresh: exit %d: %s %s", code, out, errs)
	}

	// SIGHUP applies a changed dnsmasq block.
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "mine.conf"), []byte(strings.Replace(conf, "domain: cloud.test", "domain: other.test", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = m.cmd.Process.Signal(syscall.SIGHUP)
	waitFile(t, filepath.Join(files, "addn-hosts"), "10.20.0.77 agent7.other.test agent7\n", true)

	out, errs, code = m.run(nil, "mine", "delete", "web1", "--json")
	if code != 0 || strings.TrimSpace(out) != `{"id":"web1","deleted":true}` {
		t.Fatalf("mine delete: exit %d: %s%s", code, out, errs)
	}
	waitFile(t, filepath.Join(files, "addn-hosts"), "web1", false)
	if out, _, _ := m.run(nil, "mine", "get", "web1", "--json"); strings.TrimSpace(out) != "{}" {
		t.Errorf("mine get after delete = %s", out)
	}
	if out, _, _ := m.run(nil, "mine", "delete", "web1"); out != "web1 was not in the mine\n" {
		t.Errorf("second delete printed %q", out)
	}
	if _, errs, code := m.run(nil, "mine", "get", "x", "--tgt-type", "range"); code != 1 || !strings.Contains(errs, `tgt_type "range" is not supported`) {
		t.Errorf("range target: exit %d: %s", code, errs)
	}
}

// waitFile waits until path contains (or, with want false, no longer
// contains) s.
func waitFile(t *testing.T, path, s string, want bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), s) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: containing %q is not %v within 30s:\n%s", path, s, want, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCloudVMGetsDNSAndDHCPFromDnsmasq is the acceptance test: a VM
// created with `brine cloud` against the vCenter simulator (fixed address
// and MAC through customization) resolves through a real dnsmasq and is
// offered its reserved address over real DHCP in a network namespace; once
// destroyed, its name is gone and its MAC gets no reservation.
func TestCloudVMGetsDNSAndDHCPFromDnsmasq(t *testing.T) {
	n := dnsmasqtest.NewNetns(t)
	files := dnsmasqtest.SharedDir(t)
	hostsFile, addnHosts := filepath.Join(files, "dhcp-hosts"), filepath.Join(files, "addn-hosts")
	for _, f := range []string{hostsFile, addnHosts} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dnsPid, dhcpPid := filepath.Join(files, "dns.pid"), filepath.Join(files, "dhcp.pid")
	_, dnsAddr := dnsmasqtest.StartDNS(t, "cloud.test", addnHosts, "", dnsPid)
	dhcp := n.StartDHCP(t, hostsFile, dhcpPid)

	m := newTestMaster(t)
	cloudSetup(t, m, false)
	if err := os.MkdirAll(filepath.Join(m.confDir, "cloud.profiles.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	profile := `fixed:
  provider: vcsim
  clonefrom: linux-template
  deploy: False
  wait_for_ip_timeout: 30
  devices:
    network:
      Network adapter 1:
        name: DC0_DVPG0
        mac: 00:50:56:aa:bb:01
        ip: 10.99.0.50
        subnet_mask: 255.255.255.0
`
	if err := os.WriteFile(filepath.Join(m.confDir, "cloud.profiles.d", "fixed.conf"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`dnsmasq:
  hostsfile: %s
  addn_hosts: %s
  domain: cloud.test
  range: 10.99.0.0/24
  lease_time: infinite
  reload_command: kill -HUP $(cat %s) $(cat %s)
`, hostsFile, addnHosts, dnsPid, dhcpPid)
	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "dnsmasq.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	m.start()

	readsBefore := dhcp.Reads(hostsFile)
	res, errs, code := cloudRun(t, m, "-p", "fixed", "web-vm1")
	if code != 0 || len(res.Results) != 1 || res.Results[0].Node.IP() != "10.99.0.50" {
		t.Fatalf("brine cloud -p fixed web-vm1: exit %d, %+v\n%s", code, res, errs)
	}
	dnsmasqtest.WaitResolves(t, dnsAddr, "web-vm1.cloud.test", dns.TypeA, "10.99.0.50")
	dnsmasqtest.WaitFor(t, "the DHCP server re-reads the reservations", func() (bool, string) {
		return dhcp.Reads(hostsFile) > readsBefore, dhcp.Log()
	})
	if a, name := n.Request(t, "00:50:56:aa:bb:01"); a.String() != "10.99.0.50" || name != "web-vm1" {
		t.Fatalf("the VM's MAC got %s (%q) over DHCP, want its reservation 10.99.0.50 (web-vm1)", a, name)
	}

	readsBefore = dhcp.Reads(hostsFile)
	if res, errs, code := cloudRun(t, m, "-d", "web-vm1", "-y"); code != 0 {
		t.Fatalf("brine cloud -d web-vm1: exit %d, %+v\n%s", code, res, errs)
	}
	dnsmasqtest.WaitResolves(t, dnsAddr, "web-vm1.cloud.test", dns.TypeA)
	dnsmasqtest.WaitFor(t, "the DHCP server re-reads the reservations", func() (bool, string) {
		return dhcp.Reads(hostsFile) > readsBefore, dhcp.Log()
	})
	if a, _ := n.Request(t, "00:50:56:aa:bb:01"); a.String() == "10.99.0.50" {
		t.Fatalf("the destroyed VM's MAC still got its reservation %s", a)
	}
}
