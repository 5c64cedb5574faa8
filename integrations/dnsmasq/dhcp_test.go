package dnsmasq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// netnsPair is two network namespaces joined by a veth pair, on the
// private 10.99.0.0/24: the server side has 10.99.0.1.
type netnsPair struct {
	srv, cli     string // namespaces
	srvIf, cliIf string // interfaces
}

// newNetnsPair creates the namespaces and the veth pair under names unique
// to this run, and deletes them when the test ends, passed or failed.
func newNetnsPair(t *testing.T) *netnsPair {
	t.Helper()
	requireBinary(t, "ip", "iproute2")
	if os.Geteuid() != 0 {
		t.Fatal("this test creates network namespaces and needs root")
	}
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	id := hex.EncodeToString(b)
	n := &netnsPair{srv: "brine-dhcp-s-" + id, cli: "brine-dhcp-c-" + id, srvIf: "bds" + id, cliIf: "bdc" + id}
	t.Cleanup(func() {
		// Deleting a namespace deletes the veth end inside it; the link
		// delete covers a failure before the ends were moved.
		for _, args := range [][]string{{"netns", "del", n.cli}, {"netns", "del", n.srv}, {"link", "del", n.srvIf}} {
			_ = exec.Command("ip", args...).Run()
		}
	})
	if out, err := runCmd("ip", "netns", "add", n.srv); err != nil {
		t.Fatalf("the kernel refuses network namespaces: ip netns add: %v: %s", err, out)
	}
	for _, args := range [][]string{
		{"netns", "add", n.cli},
		{"link", "add", n.srvIf, "type", "veth", "peer", "name", n.cliIf},
		{"link", "set", n.srvIf, "netns", n.srv},
		{"link", "set", n.cliIf, "netns", n.cli},
		{"-n", n.srv, "addr", "add", "10.99.0.1/24", "dev", n.srvIf},
		{"-n", n.srv, "link", "set", n.srvIf, "up"},
		{"-n", n.srv, "link", "set", "lo", "up"},
		{"-n", n.cli, "link", "set", n.cliIf, "up"},
	} {
		if out, err := runCmd("ip", args...); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return n
}

var leaseLine = regexp.MustCompile(`brine-lease (\S+) (\S*)`)

// request runs busybox udhcpc in the client namespace with mac and returns
// the address and host name it was given.
func (n *netnsPair) request(t *testing.T, dir, mac string) (netip.Addr, string) {
	t.Helper()
	for _, args := range [][]string{
		{"-n", n.cli, "link", "set", n.cliIf, "down"},
		{"-n", n.cli, "link", "set", n.cliIf, "address", mac},
		{"-n", n.cli, "link", "set", n.cliIf, "up"},
	} {
		if out, err := runCmd("ip", args...); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	script := filepath.Join(dir, "udhcpc.script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n[ \"$1\" = bound ] && echo \"brine-lease $ip $hostname\"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// -q: quit with a lease; -n: fail if none; -R: release it on exit, so
	// that the next request starts from the reservations alone.
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", n.cli, "busybox", "udhcpc",
		"-i", n.cliIf, "-f", "-q", "-n", "-R", "-t", "5", "-T", "2", "-s", script).CombinedOutput()
	if err != nil {
		t.Fatalf("udhcpc with %s: %v\n%s", mac, err, out)
	}
	m := leaseLine.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("udhcpc with %s got no lease:\n%s", mac, out)
	}
	a, err := netip.ParseAddr(m[1])
	if err != nil {
		t.Fatalf("udhcpc lease %q: %v", m[1], err)
	}
	return a, m[2]
}

// TestDHCPWithRealDnsmasqInNamespaces: a host created through a cloud event
// is offered exactly the address brine reserved for its MAC by a real
// dnsmasq over real DHCP; a host added later is served after brine's
// SIGHUP; a destroyed one loses its reservation.
func TestDHCPWithRealDnsmasqInNamespaces(t *testing.T) {
	bin := requireBinary(t, "dnsmasq", "dnsmasq-base")
	requireBinary(t, "busybox", "busybox")
	if out, err := runCmd("busybox", "udhcpc", "--help"); !strings.Contains(out, "udhcpc") {
		t.Fatalf("busybox has no udhcpc applet (Debian packages busybox, udhcpc): %v: %s", err, out)
	}
	n := newNetnsPair(t)
	dir := sharedDir(t)
	cfg := &Config{
		HostsFile: filepath.Join(dir, "dhcp-hosts"),
		PidFile:   filepath.Join(dir, "dnsmasq.pid"),
		Ranges:    []netip.Prefix{netip.MustParsePrefix("10.99.0.0/24")},
		LeaseTime: "infinite",
	}
	p := startPipeline(t, cfg)
	p.publish(t, "web-asg-1", "created", map[string]any{"instance_id": "vm-1", "ip_address": "203.0.113.50",
		"private_ips": []any{"10.99.0.50"}, "public_ips": []any{"203.0.113.50"}, "macs": []any{"00:50:56:aa:bb:01"}})
	want := "00:50:56:aa:bb:01,10.99.0.50,web-asg-1,infinite\n"
	waitFor(t, "reservation written", func() (bool, string) {
		b, _ := os.ReadFile(cfg.HostsFile)
		return strings.HasSuffix(string(b), want), string(b)
	})

	d := startDnsmasq(t, cfg.PidFile, "ip", "netns", "exec", n.srv, bin, "-k", "--conf-file=/dev/null", "--port=0",
		"--interface="+n.srvIf, "--bind-interfaces", "--except-interface=lo",
		"--dhcp-range=10.99.0.100,10.99.0.150,255.255.255.0,1h", "--dhcp-hostsfile="+cfg.HostsFile,
		"--dhcp-leasefile="+filepath.Join(dir, "leases"), "--dhcp-authoritative", "--log-dhcp",
		"--log-facility=-", "--pid-file="+cfg.PidFile)

	if a, name := n.request(t, dir, "00:50:56:aa:bb:01"); a.String() != "10.99.0.50" || name != "web-asg-1" {
		t.Fatalf("MAC :01 got %s (%q), want its reservation 10.99.0.50 (web-asg-1)", a, name)
	}

	// A host created while dnsmasq runs: brine rewrites the file and
	// SIGHUPs dnsmasq, which re-reads it.
	reads := func() int { return strings.Count(d.log.String(), "read "+cfg.HostsFile) }
	before := reads()
	p.publish(t, "web-asg-2", "created", map[string]any{"private_ips": []any{"10.99.0.60"}, "macs": []any{"00:50:56:aa:bb:02"}})
	waitFor(t, "dnsmasq re-reads the hosts file after brine's SIGHUP", func() (bool, string) { return reads() > before, d.log.String() })
	if a, name := n.request(t, dir, "00:50:56:aa:bb:02"); a.String() != "10.99.0.60" || name != "web-asg-2" {
		t.Fatalf("MAC :02 got %s (%q), want its new reservation 10.99.0.60 (web-asg-2)", a, name)
	}

	before = reads()
	p.publish(t, "web-asg-2", "destroyed", nil)
	waitFor(t, "dnsmasq re-reads the hosts file after the destroy", func() (bool, string) { return reads() > before, d.log.String() })
	dynamic := netip.MustParsePrefix("10.99.0.0/24")
	if a, _ := n.request(t, dir, "00:50:56:aa:bb:02"); a.String() == "10.99.0.60" || !dynamic.Contains(a) || a.As4()[3] < 100 || a.As4()[3] > 150 {
		t.Fatalf("MAC :02 after its host was destroyed got %s, want an address of the dynamic range .100-.150", a)
	}
	if got := fmt.Sprint(p.syncer.Stats().Reloads); got == "0" {
		t.Error("no SIGHUP counted")
	}
}
