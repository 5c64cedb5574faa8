package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/integrations/ddns/named"
)

func startBIND(t *testing.T) *named.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := named.Start(ctx, named.Config{
		Zones: []string{"example.test", "0.20.10.in-addr.arpa"},
		Keys:  []named.Key{{Name: "ddns-key"}, {Name: "readonly", Grant: "name nothing.example.test. TXT"}},
	})
	if err != nil {
		t.Fatalf("starting BIND: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func resolve(t *testing.T, s *named.Server, name string, qtype uint16) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := new(dns.Client).Exchange(m, s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rr := range r.Answer {
		out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
	}
	return out
}

func writeConf(t *testing.T, m *testMaster, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDdnsMaster runs the master with ddns: defaults and a short Salt
// reaction file that names only zone, name and ip; a salt-cloud event sent
// with `brine event send` registers the host in BIND.
func TestDdnsMaster(t *testing.T) {
	s := startBIND(t)
	port := s.Addr[strings.LastIndexByte(s.Addr, ':')+1:]
	m := newTestMaster(t)
	writeConf(t, m, "ddns.conf", fmt.Sprintf(`ddns:
  nameserver: 127.0.0.1
  port: %s
  keyname: ddns-key
  ttl: 120
  keys:
    ddns-key: {algorithm: hmac-sha256, secret: "%s"}
  zones:
    example.test: {}
    0.20.10.in-addr.arpa: {}
reactor:
  - 'salt/cloud/*/deploy_script':
    - %s
`, port, s.Key("ddns-key").Secret, fixtureDdns(t, "add_dns_short.sls")))
	m.start()
	if _, errOut, code := m.run(nil, "event", "send", "salt/cloud/web9/deploy_script", "name=web9", "host=10.20.0.99",
		"event=web9 has been deployed at 10.20.0.99"); code != 0 {
		t.Fatalf("event send: exit %d: %s", code, errOut)
	}
	// The forward record is written first, its PTR once it is in place.
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Equal(resolve(t, s, "web9.example.test", dns.TypeA), []string{"10.20.0.99"}) ||
		!slices.Equal(resolve(t, s, "99.0.20.10.in-addr.arpa", dns.TypePTR), []string{"web9.example.test."}) {
		if time.Now().After(deadline) {
			t.Fatalf("web9 not registered (A %v, PTR %v); master log:\n%s", resolve(t, s, "web9.example.test", dns.TypeA),
				resolve(t, s, "99.0.20.10.in-addr.arpa", dns.TypePTR), m.log)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The shell example, through the master.
	out, errOut, code := m.run(nil, "run", "ddns.add_host", "zone=example.test", "name=web1", "ttl=60", "ip=10.20.0.11", "--json")
	var job struct {
		Return  map[string][]string
		Success bool
	}
	if code != 0 || json.Unmarshal([]byte(out), &job) != nil || !job.Success ||
		!slices.Contains(job.Return["web1.example.test"], "Created record of type 'A': web1.example.test. -> 10.20.0.11") {
		t.Errorf("brine run ddns.add_host: exit %d\n%s%s", code, out, errOut)
	}
	if got := resolve(t, s, "web1.example.test", dns.TypeA); !slices.Equal(got, []string{"10.20.0.11"}) {
		t.Errorf("after brine run: A %v", got)
	}
	if _, errOut, code := m.run(nil, "run", "ddns.add_host", "zone=example.test", "name=web1"); code == 0 || !strings.Contains(errOut, "ip") {
		t.Errorf("brine run without ip: exit %d: %s", code, errOut)
	}

	m.stop(syscall.SIGTERM)
	if strings.Contains(m.log.String(), s.Key("ddns-key").Secret) {
		t.Errorf("the TSIG secret is in the master's log")
	}
}

func TestDdnsCheckCommand(t *testing.T) {
	s := startBIND(t)
	port := s.Addr[strings.LastIndexByte(s.Addr, ':')+1:]
	m := newTestMaster(t)
	conf := func(key string) {
		writeConf(t, m, "ddns.conf", fmt.Sprintf(`ddns:
  port: %s
  keyname: %s
  keys:
    ddns-key: {secret: "%s"}
    readonly: {secret: "%s"}
  zones:
    example.test: {}
    0.20.10.in-addr.arpa: {}
`, port, key, s.Key("ddns-key").Secret, s.Key("readonly").Secret))
	}
	conf("ddns-key")
	out, errOut, code := m.run(nil, "ddns", "check", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	var res []struct {
		Zone, Key, SOA, Update, Transfer string
		Records                          int
		OK                               bool
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(res) != 2 || res[0].Zone != "0.20.10.in-addr.arpa." || !res[0].OK || !res[1].OK || res[1].Records < 3 {
		t.Errorf("check %+v", res)
	}
	if strings.Contains(out, s.Key("ddns-key").Secret) {
		t.Error("secret printed")
	}

	conf("readonly")
	out, errOut, code = m.run(nil, "ddns", "check", "example.test")
	if code != 1 || !strings.Contains(out, "REFUSED") || !strings.Contains(errOut, "ddns check failed for example.test") {
		t.Errorf("a key without permission: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"ZONE", "readonly (hmac-sha256)", "ok (", "example.test"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	writeConf(t, m, "ddns.conf", "ddns:\n  nameservre: x\n")
	if _, errOut, code := m.run(nil, "ddns", "check"); code != 1 || !strings.Contains(errOut, `unknown key ddns: "nameservre" (did you mean "nameserver"?)`) {
		t.Errorf("typo in config: exit %d: %s", code, errOut)
	}
	writeConf(t, m, "ddns.conf", "ddns: {}\n")
	if _, _, code := m.run(nil, "ddns", "check"); code != 2 {
		t.Errorf("no zones: exit %d, want 2", code)
	}
}

func fixtureDdns(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "ddns", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDdnsSyncMaster: with `ddns: sync:` and no reaction file, a salt-cloud
// created event reaches the mine and from there the zone; destroyed removes
// the host again.
func TestDdnsSyncMaster(t *testing.T) {
	s := startBIND(t)
	port := s.Addr[strings.LastIndexByte(s.Addr, ':')+1:]
	m := newTestMaster(t)
	writeConf(t, m, "ddns.conf", fmt.Sprintf(`ddns:
  port: %s
  keyname: ddns-key
  ownership: true
  keys:
    ddns-key: {secret: "%s"}
  sync: {zone: example.test, targets: 'web*'}
`, port, s.Key("ddns-key").Secret))
	m.start()
	send := func(args ...string) {
		t.Helper()
		if _, errOut, code := m.run(nil, append([]string{"event", "send"}, args...)...); code != 0 {
			t.Fatalf("event send: exit %d: %s", code, errOut)
		}
	}
	wait := func(name string, qtype uint16, want ...string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for got := resolve(t, s, name, qtype); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0); got = resolve(t, s, name, qtype) {
			if time.Now().After(deadline) {
				t.Fatalf("%s = %v, want %v; master log:\n%s", name, got, want, m.log)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	send("salt/cloud/web5/created", `{"name": "web5", "private_ips": ["10.20.0.55"], "event": "created instance"}`)
	wait("web5.example.test", dns.TypeA, "10.20.0.55")
	wait("55.0.20.10.in-addr.arpa", dns.TypePTR, "web5.example.test.")
	wait("web5.example.test", dns.TypeTXT, `"heritage=brine,owner=test"`)
	send("salt/cloud/web5/destroyed", `{"name": "web5", "event": "destroyed instance"}`)
	wait("web5.example.test", dns.TypeA)
	wait("55.0.20.10.in-addr.arpa", dns.TypePTR)
}
