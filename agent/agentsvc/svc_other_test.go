//go:build !windows

package agentsvc

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Off Windows, Run is the agent itself, and Install/Remove point the
// operator to the systemd unit.
func TestRunCallsFn(t *testing.T) {
	want := errors.New("agent stopped")
	ran := false
	err := Run(context.Background(), "brine-agent", func(context.Context) error { ran = true; return want })
	if !ran || !errors.Is(err, want) {
		t.Errorf("Run: ran %v, err %v; want fn run and its error", ran, err)
	}
	for name, err := range map[string]error{
		"Install": Install("brine-agent", "brine agent", "/usr/bin/brine-agent", nil),
		"Remove":  Remove("brine-agent"),
	} {
		if err == nil || !strings.Contains(err.Error(), "brine-agent.service") {
			t.Errorf("%s: %v, want an error naming the systemd unit brine-agent.service", name, err)
		}
	}
}
