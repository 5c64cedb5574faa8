// Package dnsmasqtest runs real dnsmasq servers for tests, as httptest runs
// HTTP servers: DNS on a loopback port, and DHCP in a pair of network
// namespaces joined by a veth pair (10.99.0.0/24) with busybox udhcpc as
// the client. Everything a test starts is stopped and deleted when it ends,
// passed or failed. A missing Debian package or privilege fails the test
// with a message saying what to install or how to run it.
package dnsmasqtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/internal/loopback"
	"github.com/brinehq/brine/internal/syncbuf"
	"github.com/brinehq/brine/internal/testenv"
)

// RequireBinary returns the path of name, failing the test when the Debian
// package pkg that provides it is not installed.
func RequireBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: this test needs the Debian package %s (run `make deps` as root)", name, pkg)
	}
	return p
}

// SharedDir is a temporary directory dnsmasq can read after dropping to
// the nobody user (t.TempDir() and its parent are private).
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// WaitFor polls cond for up to 30 s; its string describes the state shown
// when it never holds.
func WaitFor(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s; last state: %s", what, state)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Server is a dnsmasq the test started; it is stopped when the test ends.
type Server struct {
	// PidFile is where dnsmasq wrote its pid: what brine signals.
	PidFile string
	cmd     *exec.Cmd
	log     syncbuf.Buffer
}

// Log returns what dnsmasq logged so far.
func (s *Server) Log() string { return s.log.String() }

// Start runs argv (dnsmasq in the foreground, writing pidfile, possibly
// under `ip netns exec`) until the test ends and waits for its pid file.
func Start(t testing.TB, pidfile string, argv ...string) *Server {
	t.Helper()
	s := &Server{PidFile: pidfile}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	// dnsmasq dies with the test binary, which a timed-out test ends
	// without running Cleanup.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting dnsmasq: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("dnsmasq output:\n%s", s.Log())
		}
	})
	WaitFor(t, "dnsmasq writes its pid file", func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("dnsmasq exited: %s", s.Log())
		default:
		}
		b, err := os.ReadFile(pidfile)
		return err == nil && len(bytes.TrimSpace(b)) > 0, s.Log()
	})
	return s
}

// Reads counts the times dnsmasq logged reading file (at start and on
// each SIGHUP).
func (s *Server) Reads(file string) int { return strings.Count(s.Log(), "read "+file) }

// StartDNS runs DEPENDENCIES.md's DNS-only dnsmasq on 127.0.0.1 and a free
// port: no upstream, authoritative for domain (unknown names NXDOMAIN),
// names from addnHosts, reservations from hostsFile (either may be empty).
// It returns the server and its address.
func StartDNS(t testing.TB, domain, addnHosts, hostsFile, pidFile string) (*Server, string) {
	t.Helper()
	bin := RequireBinary(t, "dnsmasq", "dnsmasq-base")
	port, err := loopback.Port()
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{fmt.Sprintf("port=%d", port), "listen-address=127.0.0.1", "bind-interfaces", "no-resolv", "no-hosts",
		"domain=" + domain, "local=/" + domain + "/", "pid-file=" + pidFile, "log-facility=-"}
	if addnHosts != "" {
		lines = append(lines, "addn-hosts="+addnHosts)
	}
	if hostsFile != "" {
		lines = append(lines, "dhcp-hostsfile="+hostsFile)
	}
	conf := strings.TrimSuffix(pidFile, filepath.Ext(pidFile)) + ".conf"
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "--test", "-C", conf).CombinedOutput(); err != nil {
		t.Fatalf("dnsmasq --test: %v\n%s", err, out)
	}
	return Start(t, pidFile, bin, "-k", "-C", conf), fmt.Sprintf("127.0.0.1:%d", port)
}

// Lookup asks server for name's records of type qtype; it returns the rcode
// and the answers' data (addresses, PTR names).
func Lookup(server, name string, qtype uint16) (int, []string, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, server)
	if err != nil {
		return -1, nil, err
	}
	var out []string
	for _, rr := range r.Answer {
		switch v := rr.(type) {
		case *dns.A:
			out = append(out, v.A.String())
		case *dns.AAAA:
			out = append(out, v.AAAA.String())
		case *dns.PTR:
			out = append(out, v.Ptr)
		}
	}
	return r.Rcode, out, nil
}

// WaitResolves waits until name answers exactly want (nil: NXDOMAIN; empty:
// the name exists without records of that type).
func WaitResolves(t testing.TB, server, name string, qtype uint16, want ...string) {
	t.Helper()
	WaitFor(t, fmt.Sprintf("%s %s -> %v", name, dns.TypeToString[qtype], want), func() (bool, string) {
		rcode, got, err := Lookup(server, name, qtype)
		state := fmt.Sprintf("rcode %s answers %v err %v", dns.RcodeToString[rcode], got, err)
		if err != nil {
			return false, state
		}
		if want == nil {
			return rcode == dns.RcodeNameError, state
		}
		slices.Sort(got)
		return rcode == dns.RcodeSuccess && slices.Equal(got, want), state
	})
}

// Netns is two network namespaces joined by a veth pair, on the private
// 10.99.0.0/24: the server side has 10.99.0.1.
type Netns struct {
	Srv, Cli     string // namespaces
	SrvIf, CliIf string // interfaces
}

// NewNetns creates the namespaces and the veth pair under names unique to
// this run (root is required), and deletes them when the test ends.
func NewNetns(t testing.TB) *Netns {
	t.Helper()
	RequireBinary(t, "ip", "iproute2")
	testenv.NeedRoot(t, "this test creates network namespaces and needs root")
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	id := hex.EncodeToString(b)
	n := &Netns{Srv: "brine-dhcp-s-" + id, Cli: "brine-dhcp-c-" + id, SrvIf: "bds" + id, CliIf: "bdc" + id}
	t.Cleanup(func() {
		// Deleting a namespace deletes the veth end inside it; the link
		// delete covers a failure before the ends were moved.
		for _, args := range [][]string{{"netns", "del", n.Cli}, {"netns", "del", n.Srv}, {"link", "del", n.SrvIf}} {
			_ = exec.Command("ip", args...).Run()
		}
	})
	if out, err := exec.Command("ip", "netns", "add", n.Srv).CombinedOutput(); err != nil {
		t.Fatalf("the kernel refuses network namespaces: ip netns add: %v: %s", err, out)
	}
	n.ip(t,
		[]string{"netns", "add", n.Cli},
		[]string{"link", "add", n.SrvIf, "type", "veth", "peer", "name", n.CliIf},
		[]string{"link", "set", n.SrvIf, "netns", n.Srv},
		[]string{"link", "set", n.CliIf, "netns", n.Cli},
		[]string{"-n", n.Srv, "addr", "add", "10.99.0.1/24", "dev", n.SrvIf},
		[]string{"-n", n.Srv, "link", "set", n.SrvIf, "up"},
		[]string{"-n", n.Srv, "link", "set", "lo", "up"},
		[]string{"-n", n.Cli, "link", "set", n.CliIf, "up"},
	)
	return n
}

func (n *Netns) ip(t testing.TB, cmds ...[]string) {
	t.Helper()
	for _, args := range cmds {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
}

// StartDHCP runs dnsmasq in the server namespace: DHCP only, dynamic range
// 10.99.0.100-150, reservations from hostsFile (re-read on SIGHUP), its
// pid in pidFile and leases next to it.
func (n *Netns) StartDHCP(t testing.TB, hostsFile, pidFile string) *Server {
	t.Helper()
	bin := RequireBinary(t, "dnsmasq", "dnsmasq-base")
	return Start(t, pidFile, "ip", "netns", "exec", n.Srv, bin, "-k", "--conf-file=/dev/null", "--port=0",
		"--interface="+n.SrvIf, "--bind-interfaces", "--except-interface=lo",
		"--dhcp-range=10.99.0.100,10.99.0.150,255.255.255.0,1h", "--dhcp-hostsfile="+hostsFile,
		"--dhcp-leasefile="+filepath.Join(filepath.Dir(pidFile), "leases"), "--dhcp-authoritative", "--log-dhcp",
		"--log-facility=-", "--pid-file="+pidFile)
}

var leaseLine = regexp.MustCompile(`brine-lease (\S+) (\S*)`)

// Request runs busybox udhcpc in the client namespace with mac and returns
// the address and host name it was given. The lease is released on exit,
// so that the next request starts from the reservations alone.
func (n *Netns) Request(t testing.TB, mac string) (netip.Addr, string) {
	t.Helper()
	RequireBinary(t, "busybox", "busybox")
	n.ip(t,
		[]string{"-n", n.Cli, "link", "set", n.CliIf, "down"},
		[]string{"-n", n.Cli, "link", "set", n.CliIf, "address", mac},
		[]string{"-n", n.Cli, "link", "set", n.CliIf, "up"},
	)
	script := filepath.Join(t.TempDir(), "udhcpc.script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n[ \"$1\" = bound ] && echo \"brine-lease $ip $hostname\"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// -q: quit with a lease; -n: fail without one; -R: release it on exit.
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", n.Cli, "busybox", "udhcpc",
		"-i", n.CliIf, "-f", "-q", "-n", "-R", "-t", "5", "-T", "2", "-s", script).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "applet not found") {
			t.Fatalf("busybox has no udhcpc applet (Debian packages busybox, udhcpc): %s", out)
		}
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
