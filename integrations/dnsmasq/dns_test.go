package dnsmasq

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/integrations/dnsmasq/dnsmasqtest"
)

// TestDNSWithRealDnsmasq: hosts created through cloud events on the bus
// resolve through a real dnsmasq after brine's SIGHUP; a destroyed one
// answers NXDOMAIN; an address two hosts claim is reported, not served.
func TestDNSWithRealDnsmasq(t *testing.T) {
	dir := dnsmasqtest.SharedDir(t)
	cfg := &Config{
		HostsFile: filepath.Join(dir, "dhcp-hosts"),
		AddnHosts: filepath.Join(dir, "addn-hosts"),
		Domain:    "cloud.test",
		PidFile:   filepath.Join(dir, "dnsmasq.pid"),
	}
	p := startPipeline(t, cfg)
	// The first regeneration writes the (empty) files dnsmasq is started with.
	dnsmasqtest.WaitFor(t, "initial files", func() (bool, string) {
		_, err1 := os.Stat(cfg.HostsFile)
		_, err2 := os.Stat(cfg.AddnHosts)
		return err1 == nil && err2 == nil, fmt.Sprint(err1, err2)
	})
	_, server := dnsmasqtest.StartDNS(t, "cloud.test", cfg.AddnHosts, cfg.HostsFile, cfg.PidFile)
	resolves := func(name string, qtype uint16, want ...string) {
		t.Helper()
		dnsmasqtest.WaitResolves(t, server, name, qtype, want...)
	}
	resolves("web1.cloud.test", dns.TypeA) // NXDOMAIN before the cloud creates it

	reloadsBefore := p.syncer.Stats().Reloads
	p.publish(t, "web1", "created", map[string]any{"instance_id": "vm-101", "ip_address": "10.20.0.11",
		"private_ips": []any{"10.20.0.11"}, "macs": []any{"00:50:56:aa:bb:11"}})
	p.publish(t, "web2", "created", map[string]any{"instance_id": "vm-102", "private_ips": []any{"10.20.0.12", "fd00::12"}})
	resolves("web1.cloud.test", dns.TypeA, "10.20.0.11")
	resolves("web1", dns.TypeA, "10.20.0.11") // short name
	resolves("web2.cloud.test", dns.TypeAAAA, "fd00::12")
	resolves("11.0.20.10.in-addr.arpa", dns.TypePTR, "web1.cloud.test.")
	if got := p.syncer.Stats().Reloads - reloadsBefore; got < 1 || got > 2 {
		t.Errorf("%d reloads for two creations, want 1 (or 2 if they fell in separate bursts)", got)
	}
	dhcp, _ := os.ReadFile(cfg.HostsFile)
	if !strings.Contains(string(dhcp), "00:50:56:aa:bb:11,10.20.0.11,web1\n") || !strings.Contains(string(dhcp), "web2,10.20.0.12\n") {
		t.Errorf("dhcp-hostsfile:\n%s", dhcp)
	}

	p.publish(t, "web1", "destroyed", nil)
	resolves("web1.cloud.test", dns.TypeA)
	resolves("web2.cloud.test", dns.TypeA, "10.20.0.12")

	// web3 claims web2's address: neither is served, the conflict names both.
	p.publish(t, "web3", "created", map[string]any{"private_ips": []any{"10.20.0.12"}})
	dnsmasqtest.WaitFor(t, "conflict event", func() (bool, string) {
		evs := p.eventsTagged(ConflictTag)
		for _, d := range evs {
			if d["kind"] == DuplicateIP && d["value"] == "10.20.0.12" && fmt.Sprint(d["hosts"]) == "[web2 web3]" {
				return true, ""
			}
		}
		return false, fmt.Sprint(evs)
	})
	resolves("web2.cloud.test", dns.TypeA, []string{}...)
	resolves("web2.cloud.test", dns.TypeAAAA, "fd00::12") // its other address stays
	addn, _ := os.ReadFile(cfg.AddnHosts)
	if strings.Contains(string(addn), "10.20.0.12") {
		t.Errorf("the disputed address was written:\n%s", addn)
	}
	// Destroying the newcomer resolves the conflict.
	p.publish(t, "web3", "destroyed", nil)
	resolves("web2.cloud.test", dns.TypeA, "10.20.0.12")

	// dnsmasq answers as soon as it has reread the files; the reloaded event
	// is published after the SIGHUP, so it is waited for, not read at once.
	dnsmasqtest.WaitFor(t, "the last reloaded event: sighup with 2 host records, 1 reservation, 0 conflicts", func() (bool, string) {
		reloaded := p.eventsTagged(ReloadedTag)
		if len(reloaded) == 0 {
			return false, "no brine/dnsmasq/reloaded event"
		}
		last := reloaded[len(reloaded)-1]
		return last["reload"] == "sighup" && last["addn_hosts"] == int64(2) && last["dhcp_hosts"] == int64(1) && last["conflicts"] == int64(0), fmt.Sprint(last)
	})
}
