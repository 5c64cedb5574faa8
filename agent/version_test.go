package agent

import "testing"

// The agent's grains carry its Options.Version as brineversion, which
// salt-run manage.versions reads.
func TestGrainsCarryBrineVersion(t *testing.T) {
	a := testAgent(t, t.TempDir())
	if got := a.Grains()["brineversion"]; got != "test" {
		t.Errorf("brineversion = %#v, want the agent's version %q", got, "test")
	}
}
