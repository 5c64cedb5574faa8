package grains

import (
	"testing"
)

// TestCollectWindows reads the real system (under wine, wine's registry):
// the grains Salt's Windows minion has are there with Windows' values.
func TestCollectWindows(t *testing.T) {
	g := Collector{Version: "v1.2.3"}.Collect("win01", map[string]any{"roles": []any{"web"}})
	for k, want := range map[string]any{"os": "Windows", "os_family": "Windows", "kernel": "Windows",
		"init": "Windows", "id": "win01", "brineversion": "v1.2.3", "saltversion": SaltVersion} {
		if g[k] != want {
			t.Errorf("grain %s = %#v, want %#v", k, g[k], want)
		}
	}
	for _, k := range []string{"osrelease", "osversion", "kernelrelease", "osfullname", "osfinger", "cpuarch",
		"host", "nodename", "fqdn", "shell", "username", "saltversion"} {
		if s, _ := g[k].(string); s == "" {
			t.Errorf("grain %s = %#v, want a value", k, g[k])
		}
	}
	if n, _ := g["mem_total"].(int); n <= 0 {
		t.Errorf("mem_total = %#v, want MiB > 0", g["mem_total"])
	}
	if n, _ := g["num_cpus"].(int); n <= 0 {
		t.Errorf("num_cpus = %#v", g["num_cpus"])
	}
	if _, ok := g["ipv4"].([]any); !ok {
		t.Errorf("ipv4 = %#v, want a list", g["ipv4"])
	}
	if _, ok := g["uid"]; ok {
		t.Errorf("uid = %v, want it left out on Windows", g["uid"])
	}
	t.Logf("osfullname=%v osrelease=%v osversion=%v cpuarch=%v mem_total=%v windowsdomain=%v virtual=%v",
		g["osfullname"], g["osrelease"], g["osversion"], g["cpuarch"], g["mem_total"], g["windowsdomain"], g["virtual"])
}
