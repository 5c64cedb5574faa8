package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/brinehq/brine/deploy/sshdtest"
)

// TestDemoScenario runs `make demo`'s scenario (scripts/demo.sh) against the
// binary under test: VMs on the vCenter simulator deployed over SSH to a
// real sshd, DNS in a real BIND, hosts and reservations in a real dnsmasq,
// the Slack audit trail, and a destroy. It needs the Debian packages `make
// test` installs (bind9, bind9-dnsutils, dnsmasq-base, openssh-server) and
// root, as CI has.
func TestDemoScenario(t *testing.T) {
	sshdtest.NeedRoot(t)
	for _, bin := range []string{"named", "dig", "dnsmasq", "tsig-keygen", "setpriv", "python3", "ssh-keygen"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is missing: install bind9, bind9-dnsutils, dnsmasq-base and openssh-server (make test does)", bin)
		}
	}
	script, err := filepath.Abs("../../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(script, brineBin).CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^all \d+ checks passed$`).Match(out) || regexp.MustCompile(`(?m)^\s*FAIL `).Match(out) {
		t.Fatalf("demo summary not all passing:\n%s", out)
	}
}
