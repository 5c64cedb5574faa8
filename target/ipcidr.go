package target

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ipcidr matches an address, or a network, against the minion's ipv4 or
// ipv6 grain (the one of the target's family), as Salt's ipcidr matcher.
func ipcidr(s string) (matcher, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.WithZone("")
		grain := family(a)
		return func(f Facts) bool {
			for _, x := range addrs(f.Grains[grain]) {
				if x == a {
					return true
				}
			}
			return false
		}, nil
	}
	p, err := parseNetwork(s)
	if err != nil {
		return nil, fmt.Errorf("ipcidr %q: %w", s, err)
	}
	grain := family(p.Addr())
	return func(f Facts) bool {
		for _, x := range addrs(f.Grains[grain]) {
			if p.Contains(x) {
				return true
			}
		}
		return false
	}, nil
}

// family names the grain that lists a's family: ipv4 or ipv6.
func family(a netip.Addr) string {
	if a.Is4() {
		return "ipv4"
	}
	return "ipv6"
}

// parseNetwork reads a network as Python's ipaddress.ip_network: a CIDR
// ("10.0.0.0/8") or an IPv4 network with a netmask ("10.0.0.0/255.0.0.0"),
// and like it refuses host bits set ("10.0.0.1/8"), which would otherwise
// quietly mean the whole network.
func parseNetwork(s string) (netip.Prefix, error) {
	addr, mask, ok := strings.Cut(s, "/")
	if !ok {
		return netip.Prefix{}, fmt.Errorf("not an address or a network")
	}
	if strings.Contains(mask, ".") {
		m := net.ParseIP(mask).To4()
		if m == nil {
			return netip.Prefix{}, fmt.Errorf("bad netmask %q", mask)
		}
		ones, bits := net.IPMask(m).Size()
		if bits == 0 {
			return netip.Prefix{}, fmt.Errorf("bad netmask %q", mask)
		}
		s = fmt.Sprintf("%s/%d", addr, ones)
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("not an address or a network: %w", err)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("has host bits set")
	}
	return p, nil
}

// addrs reads an ipv4 or ipv6 grain: a list of addresses (one string is
// taken for a list of one). What does not parse is left out.
func addrs(v any) []netip.Addr {
	var ss []string
	switch t := v.(type) {
	case string:
		ss = []string{t}
	case []string:
		ss = t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				ss = append(ss, s)
			}
		}
	}
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a.WithZone(""))
		}
	}
	return out
}
