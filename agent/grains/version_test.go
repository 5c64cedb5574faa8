//go:build !windows

package grains

import "testing"

// brineversion is the agent's release beside Salt's saltversion, and left
// out when the agent does not know its release.
func TestBrineVersionGrain(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    any
	}{
		{"v0.4.0-12-gabcdef0", "v0.4.0-12-gabcdef0"},
		{"", nil},
	} {
		c := fakeCommands(t.TempDir(), nil)
		c.Version = tc.version
		g := c.Collect("web01", nil)
		if g["brineversion"] != tc.want {
			t.Errorf("Version %q: brineversion = %#v, want %#v", tc.version, g["brineversion"], tc.want)
		}
		if g["saltversion"] != SaltVersion {
			t.Errorf("Version %q: saltversion = %v, want %s", tc.version, g["saltversion"], SaltVersion)
		}
	}
}
