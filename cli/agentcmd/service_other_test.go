//go:build !windows

package agentcmd

import (
	"bytes"
	"strings"
	"testing"
)

// service install/remove off Windows says to use the systemd unit.
func TestServiceOffWindows(t *testing.T) {
	for _, sub := range []string{"install", "remove"} {
		root := NewAgentRoot()
		root.SetArgs([]string{"service", sub})
		root.SetOut(&bytes.Buffer{})
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "brine-agent.service") {
			t.Errorf("service %s: %v, want the systemd unit named", sub, err)
		}
	}
}
