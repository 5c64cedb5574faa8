package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// forbidden are the packages brine-agent must not link, by import path
// prefix: the master and what only it runs (the bus's NATS server, the
// reactor, salt-api, the cloud drivers and their SDKs, the integrations),
// which would make the agent on every managed machine several times its
// size and give it code it never runs.
var forbidden = []string{
	"github.com/brinehq/brine/api",
	"github.com/brinehq/brine/bus/natsbus",
	"github.com/brinehq/brine/cloud",
	"github.com/brinehq/brine/deploy",
	"github.com/brinehq/brine/integrations",
	"github.com/brinehq/brine/keys",
	"github.com/brinehq/brine/lease",
	"github.com/brinehq/brine/master",
	"github.com/brinehq/brine/reactor",
	"github.com/brinehq/brine/remote",
	"github.com/brinehq/brine/saltapi",
	"github.com/brinehq/brine/saltmaster",
	"github.com/brinehq/brine/saltproto",
	"github.com/vmware/govmomi",
	"github.com/aws/",
	"github.com/nats-io/",
	"github.com/prometheus/",
}

// TestAgentLinksNoMasterCode lists brine-agent's dependencies for every
// OS it is built for (make cross) and fails naming each forbidden package
// it links. -e lists what can be listed while a port is unfinished:
// whether every target builds is make cross's to say, not this test's.
func TestAgentLinksNoMasterCode(t *testing.T) {
	for _, goos := range []string{"linux", "windows", "darwin", "freebsd"} {
		t.Run(goos, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-e", "-deps", ".")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
			out, err := cmd.Output()
			if err != nil {
				var stderr string
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("go list -deps (GOOS=%s): %v\n%s", goos, err, stderr)
			}
			pkgs := strings.Fields(string(out))
			if len(pkgs) < 50 {
				t.Fatalf("go list -deps listed only %d packages: %q", len(pkgs), pkgs)
			}
			for _, p := range pkgs {
				for _, f := range forbidden {
					if p == strings.TrimSuffix(f, "/") || strings.HasPrefix(p, strings.TrimSuffix(f, "/")+"/") {
						t.Errorf("brine-agent (GOOS=%s) links %s, which only the master uses", goos, p)
					}
				}
			}
		})
	}
}
