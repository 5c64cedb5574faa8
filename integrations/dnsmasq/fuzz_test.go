package dnsmasq

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/brinehq/brine/mine"
)

// FuzzRender checks Render's promises on arbitrary mines (one host per
// line: "id ip,ip… mac,mac…"): the output does not depend on the order of
// the hosts, no address is written for two names, no MAC is reserved
// twice, and every written address is valid.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		"web1 10.0.0.1 00:50:56:aa:bb:01\nweb2 10.0.0.2",
		"a 10.0.0.5\nb 10.0.0.5,fd00::5 00:00:00:00:00:01\nc 10.0.0.6 00:00:00:00:00:01",
		"x_y 1.2.3.4\nbad 999.1.1.1 zz\n.dot 10.0.0.9",
		"h ::ffff:10.0.0.1,10.0.0.1 00-50-56-AA-BB-01",
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	cfg := &Config{HostsFile: dir + "/dhcp-hosts", AddnHosts: dir + "/addn-hosts", Domain: "cloud.test", LeaseTime: "1h"}
	if err := cfg.Validate(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var hosts []*mine.Host
		seen := map[string]bool{}
		for _, line := range strings.Split(src, "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 || seen[fields[0]] {
				continue // ids are unique in the mine
			}
			seen[fields[0]] = true
			h := &mine.Host{ID: fields[0]}
			if len(fields) > 1 {
				h.IPs = strings.Split(fields[1], ",")
			}
			if len(fields) > 2 {
				h.MACs = strings.Split(fields[2], ",")
			}
			hosts = append(hosts, h)
		}
		r := Render(hosts, cfg)
		rev := slices.Clone(hosts)
		slices.Reverse(rev)
		if r2 := Render(rev, cfg); string(r2.DHCP) != string(r.DHCP) || string(r2.Addn) != string(r.Addn) {
			t.Fatal("output depends on the order of the hosts")
		}
		names := map[string]string{}
		for _, line := range lines(r.Addn) {
			f := strings.Fields(line)
			a, err := netip.ParseAddr(f[0])
			if err != nil || a.Zone() != "" {
				t.Fatalf("addn-hosts line %q: bad address", line)
			}
			if prev, ok := names[f[0]]; ok && prev != f[1] {
				t.Fatalf("address %s written for %s and %s", f[0], prev, f[1])
			}
			names[f[0]] = f[1]
		}
		macs := map[string]bool{}
		for _, line := range lines(r.DHCP) {
			switch f := strings.Split(line, ","); len(f) {
			case 3: // name,ip,lease
			case 4: // mac,ip,name,lease
				if macs[f[0]] {
					t.Fatalf("MAC %s reserved twice", f[0])
				}
				macs[f[0]] = true
			default:
				t.Fatalf("dhcp-hostsfile line %q", line)
			}
		}
	})
}

// lines returns the lines of a rendered file after its header.
func lines(b []byte) []string {
	s := strings.TrimSuffix(body(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
