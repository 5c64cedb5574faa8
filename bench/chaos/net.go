package main

import (
	"fmt"
	"os/exec"
	"strings"
)

// The suite's network: a bridge in this namespace (the hub: BIND, the Slack
// capture, the agents and the CLI live here) and one network namespace per
// master, each joined to the bridge by a veth pair. Cutting a master's link
// is `ip link set <its veth> down` on the hub side: the master loses its
// cluster routes and its agents at once, as a pulled cable would.
const (
	bridge  = "brchaos0"
	subnet  = "10.78.0"
	hubAddr = subnet + ".1"
)

// masterAddr is master i's (1-based) address on the bridge.
func masterAddr(i int) string { return fmt.Sprintf("%s.%d", subnet, 10+i) }

// nsName is master i's network namespace.
func nsName(i int) string { return fmt.Sprintf("brine-chaos-m%d", i) }

// vethName is the hub side of master i's link.
func vethName(i int) string { return fmt.Sprintf("bchaos%d", i) }

func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// netUp builds the bridge and the masters' namespaces, removing what an
// earlier run that was killed left behind first.
func netUp(masters int) error {
	netDown(masters)
	if err := ip("link", "add", bridge, "type", "bridge"); err != nil {
		return fmt.Errorf("the chaos suite needs root and network namespaces: %w", err)
	}
	steps := [][]string{
		{"addr", "add", hubAddr + "/24", "dev", bridge},
		{"link", "set", bridge, "up"},
	}
	for i := 1; i <= masters; i++ {
		ns, veth := nsName(i), vethName(i)
		steps = append(steps,
			[]string{"netns", "add", ns},
			[]string{"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
			[]string{"link", "set", veth, "master", bridge},
			[]string{"link", "set", veth, "up"},
			[]string{"-n", ns, "addr", "add", masterAddr(i) + "/24", "dev", "eth0"},
			[]string{"-n", ns, "link", "set", "eth0", "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"},
		)
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			netDown(masters)
			return err
		}
	}
	return nil
}

// netDown removes the namespaces and links (errors ignored: some may not
// exist).
func netDown(masters int) {
	for i := 1; i <= masters; i++ {
		_ = ip("netns", "del", nsName(i))
		_ = ip("link", "del", vethName(i))
	}
	_ = ip("link", "del", bridge)
}

// setLink cuts (up false) or heals master i's link.
func setLink(i int, up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	return ip("link", "set", vethName(i), state)
}
