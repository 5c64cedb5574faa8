package wire

import (
	"errors"
	"testing"
)

// TestCheckTag: an agent fires its own tags and nobody else's: not the
// master's reserved prefixes, not salt-cloud's lifecycle (from which the
// mine, DNS and DHCP learn what exists), not another agent's start or
// beacon events.
func TestCheckTag(t *testing.T) {
	for _, tc := range []struct {
		tag string
		ok  bool
	}{
		{"instar/custom/event", true},
		{"salt/minion/a1/start", true},
		{"salt/beacon/a1/inotify//etc/x", true},
		{"salt/cloud/a2/destroyed", false},
		{"salt/cloud/a1/created", false},
		{"salt/job/20260101000000000000/ret/a2", false},
		{"salt/run/20260101000000000000/new", false},
		{"salt/auth", false},
		{"salt/key", false},
		{"brine/mine/update", false},
		{"salt/minion/a2/start", false},
		{"salt/beacon/a2/x", false},
	} {
		err := CheckTag(tc.tag, "a1")
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrReservedTag) {
			t.Errorf("CheckTag(%q, a1) = %v, want allowed %v", tc.tag, err, tc.ok)
		}
	}
}
