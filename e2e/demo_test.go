package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/brinehq/brine/deploy/sshdtest"
)

// TestDemoScenario runs `make demo`'s scenario (scripts/demo.sh) against the
// binary under test and asserts each of its checks: three VMs on the
// vCenter simulator whose guests are network namespaces, deployed over SSH
// by a real sshd with brine's agent; keys accepted by a salt/auth reaction
// (and one left pending); highstates on start; BIND and a real dnsmasq
// (DNS, and DHCP from inside the guests) following the mine; a beacon's
// reaction restoring a file; a rolling orchestration that succeeds and one
// that stops at its smoke test; every job threaded in the Slack capture;
// and a destroy that removes the key, the records and the reservation. It
// needs root and the Debian packages `make test` installs, as CI has.
func TestDemoScenario(t *testing.T) {
	sshdtest.NeedRoot(t)
	for _, bin := range []string{"named", "dig", "dnsmasq", "tsig-keygen", "setpriv", "python3", "ssh", "ssh-keygen", "ip", "busybox"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is missing: install bind9, bind9-dnsutils, dnsmasq-base, openssh-server, iproute2, busybox and udhcpc (make test does)", bin)
		}
	}
	script, err := filepath.Abs("../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	out, err := tiedWith(exec.Command(script, brineBin), syscall.SIGTERM).CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v%s\n\nthe whole output:\n%s", err, demoFailures(out), out)
	}
	if !regexp.MustCompile(`(?m)^all \d+ checks passed$`).Match(out) || regexp.MustCompile(`(?m)^\s*FAIL `).Match(out) {
		t.Fatalf("demo summary not all passing:\n%s", out)
	}
	// Each part of the story was checked, not skipped.
	for _, want := range []string{"PASS  3 VMs created", "PASS  laptop-dave left pending", "PASS  web3 highstate succeeded",
		"PASS  web2 gets its reserved address by DHCP", "PASS  web1's page restored", "PASS  release 2.1 stopped at web1's smoke test (exit 1)",
		"PASS  every job threaded in Slack with its results", "PASS  web2's reservation gone", "PASS  web2's agent reported gone"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// demoFailures picks out of the demo's output the checks that failed and
// the demo's own complaints ("demo: …", the command that ended it), to
// print before the whole output: a CI log that keeps only the head and
// tail of a long failure must still say what went wrong.
func demoFailures(out []byte) string {
	var b strings.Builder
	for _, line := range strings.Split(string(out), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "✗ ") || strings.HasPrefix(l, "demo: ") {
			b.WriteString("\n  " + l)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "; what failed:" + b.String()
}
