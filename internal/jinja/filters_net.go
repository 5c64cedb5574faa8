package jinja

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Salt's network filters (salt/utils/network.py), on Python's ipaddress
// module's terms: what an address or an interface is, how it prints,
// and which ranges are private, reserved, link-local….

// pyIP is an address as Python's ipaddress reads it: ip_address, or
// ip_interface when it has a prefix (or a netmask).
type pyIP struct {
	addr  netip.Addr
	bits  int // the prefix; -1 for an address
	iface bool
}

// parsePyIP reads an address or an interface, or says it is neither.
func parsePyIP(v any) (pyIP, bool) {
	s, ok := v.(string)
	if !ok {
		if b, isBytes := v.(pyByteString); isBytes {
			s = string(b)
		} else if n, isInt := v.(int); isInt && n >= 0 {
			// ipaddress takes integers as addresses.
			if uint64(n) <= 0xffffffff {
				return pyIP{addr: netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), bits: -1}, true
			}
			return pyIP{}, false
		} else {
			return pyIP{}, false
		}
	}
	if a, err := netip.ParseAddr(s); err == nil && !strings.ContainsAny(s, "/") {
		if a.Is4() || a.Zone() == "" || !strings.ContainsAny(a.Zone(), "%/") {
			return pyIP{addr: a, bits: -1}, true
		}
	}
	host, mask, ok := strings.Cut(s, "/")
	if !ok {
		return pyIP{}, false
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return pyIP{}, false
	}
	max := a.BitLen()
	bits, err := strconv.Atoi(mask)
	if err != nil || strings.HasPrefix(mask, "+") || strings.HasPrefix(mask, "-") {
		if !a.Is4() {
			return pyIP{}, false
		}
		m, err := netip.ParseAddr(mask)
		if err != nil || !m.Is4() {
			return pyIP{}, false
		}
		b := m.As4()
		ones, size := net.IPv4Mask(b[0], b[1], b[2], b[3]).Size()
		if size == 0 {
			// a host mask: 0.0.0.255
			ones, size = net.IPv4Mask(^b[0], ^b[1], ^b[2], ^b[3]).Size()
			if size == 0 {
				return pyIP{}, false
			}
		}
		bits = ones
	}
	if bits < 0 || bits > max {
		return pyIP{}, false
	}
	return pyIP{addr: a, bits: bits, iface: true}, true
}

func (ip pyIP) version() int {
	if ip.addr.Is4() {
		return 4
	}
	return 6
}

// String is Python's str() of the address or interface.
func (ip pyIP) String() string {
	s := pyAddr(ip.addr)
	if ip.iface {
		s += "/" + strconv.Itoa(ip.bits)
	}
	return s
}

// pyAddr prints an address as ipaddress does: IPv6 compressed per RFC
// 5952 but never with a dotted quad, its scope after %.
func pyAddr(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	b := a.As16()
	var groups [8]int
	for i := range groups {
		groups[i] = int(b[2*i])<<8 | int(b[2*i+1])
	}
	bestStart, bestLen := -1, 0
	for i := 0; i < 8; {
		if groups[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && groups[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestStart, bestLen = i, j-i
		}
		i = j
	}
	hexs := func(gs []int) string {
		parts := make([]string, len(gs))
		for i, g := range gs {
			parts[i] = strconv.FormatInt(int64(g), 16)
		}
		return strings.Join(parts, ":")
	}
	var s string
	if bestLen > 1 {
		s = hexs(groups[:bestStart]) + "::" + hexs(groups[bestStart+bestLen:])
	} else {
		s = hexs(groups[:])
	}
	if z := a.Zone(); z != "" {
		s += "%" + z
	}
	return s
}

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// The ranges of Python 3.11's ipaddress.
var (
	private4 = mustPrefixes("0.0.0.0/8", "10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/29", "192.0.0.170/31", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32")
	private6 = mustPrefixes("::1/128", "::/128", "::ffff:0:0/96", "100::/64", "2001::/23", "2001:2::/48",
		"2001:db8::/32", "2001:10::/28", "fc00::/7", "fe80::/10")
	reserved6 = mustPrefixes("::/8", "100::/8", "200::/7", "400::/6", "800::/5", "1000::/4", "4000::/3",
		"6000::/3", "8000::/3", "a000::/3", "c000::/3", "e000::/4", "f000::/5", "f800::/6", "fe00::/9")
)

func inAny(a netip.Addr, nets []netip.Prefix) bool {
	a = a.WithZone("")
	for _, n := range nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

func (ip pyIP) isPrivate() bool {
	a := ip.addr.WithZone("")
	if a.Is4() {
		return inAny(a, private4)
	}
	if a.Is4In6() {
		return inAny(a.Unmap(), private4)
	}
	return inAny(a, private6)
}

func (ip pyIP) has(option string) bool {
	a := ip.addr.WithZone("")
	v4 := a.Is4()
	switch option {
	case "global", "public":
		return !ip.isPrivate()
	case "link-local", "linklocal", "ll", "link_local":
		if v4 {
			return inAny(a, mustPrefixes("169.254.0.0/16"))
		}
		return inAny(a, mustPrefixes("fe80::/10"))
	case "loopback", "lo":
		if v4 {
			return inAny(a, mustPrefixes("127.0.0.0/8"))
		}
		return a == netip.IPv6Loopback() && (!ip.iface || ip.bits == 128)
	case "multicast":
		if v4 {
			return inAny(a, mustPrefixes("224.0.0.0/4"))
		}
		return inAny(a, mustPrefixes("ff00::/8"))
	case "private":
		return ip.isPrivate()
	case "reserved":
		if v4 {
			return inAny(a, mustPrefixes("240.0.0.0/4"))
		}
		return inAny(a, reserved6)
	case "site-local", "sl", "site_local":
		return !v4 && inAny(a, mustPrefixes("fec0::/10"))
	case "unspecified":
		if v4 {
			return a == netip.IPv4Unspecified()
		}
		return a == netip.IPv6Unspecified() && (!ip.iface || ip.bits == 128)
	}
	return true
}

// ipOptions are the options Salt knows, in the order it checks them.
var ipOptions = []string{"global", "link-local", "linklocal", "ll", "link_local", "loopback", "lo",
	"multicast", "private", "public", "reserved", "site-local", "sl", "site_local", "unspecified"}

// isIPv is Salt's _is_ipv: the address's text when it is of version and
// has every option (a comma-separated list), else None (nil).
func isIPv(v any, version int, options any) any {
	ip, ok := parsePyIP(v)
	if !ok || ip.version() != version {
		return nil
	}
	if truthy(options) {
		var list []string
		for _, o := range strings.Split(jinjaStr(options), ",") {
			list = append(list, strings.TrimSpace(o))
		}
		for _, o := range ipOptions {
			for _, want := range list {
				if want == o && !ip.has(o) {
					return nil
				}
			}
		}
	}
	return ip.String()
}

// isIPFilter is is_ip, is_ipv4 or is_ipv6 (version 0: either).
func isIPFilter(version int) pyFunc {
	return func(in any, args []any) (any, error) {
		if version == 0 {
			return isIPv(in, 4, args[0]) != nil || isIPv(in, 6, args[0]) != nil, nil
		}
		return isIPv(in, version, args[0]) != nil, nil
	}
}

// ipvFilter is Salt's ipv4/ipv6: a string's address or None, a list's
// addresses of the version.
func ipvFilter(value any, version int, options any) any {
	switch t := value.(type) {
	case string, pyByteString:
		return isIPv(t, version, options)
	case []any:
		out := []any{}
		for _, x := range t {
			if r := isIPv(x, version, options); r != nil {
				out = append(out, r)
			}
		}
		return out
	}
	return nil
}

func ipvFilterFunc(version int) pyFunc {
	return func(in any, args []any) (any, error) {
		if version == 0 {
			return ipaddrFilter(in, args[0]), nil
		}
		return ipvFilter(in, version, args[0]), nil
	}
}

// ipaddrFilter is Salt's ipaddr: the IPv4 answer, or the IPv6 one, or
// both lists joined.
func ipaddrFilter(value, options any) any {
	v4 := ipvFilter(value, 4, options)
	v6 := ipvFilter(value, 6, options)
	if v4 == nil || v6 == nil {
		if truthy(v4) {
			return v4
		}
		return v6
	}
	l4, ok4 := v4.([]any)
	l6, ok6 := v6.([]any)
	if ok4 && ok6 {
		return append(append([]any{}, l4...), l6...)
	}
	return jinjaStr(v4) + jinjaStr(v6)
}

// filterIPAddr is Salt's _filter_ipaddr: the addresses of the version
// (0: any) with the options, as a list; nil when none.
func filterIPAddr(value, options, version any) []any {
	var out any
	switch n, _ := asInt(version); {
	case version == nil || !truthy(version):
		out = ipaddrFilter(value, options)
	case n == 4:
		out = ipvFilter(value, 4, options)
	case n == 6:
		out = ipvFilter(value, 6, options)
	}
	if !truthy(out) {
		return nil
	}
	if l, ok := out.([]any); ok {
		return l
	}
	return []any{out}
}

// networkOf is Python's ip_network(x, strict=False).
func networkOf(v any) (netip.Prefix, error) {
	ip, ok := parsePyIP(v)
	if !ok {
		return netip.Prefix{}, fmt.Errorf("%s does not appear to be an IPv4 or IPv6 network", pyRepr(v))
	}
	bits := ip.bits
	if !ip.iface {
		bits = ip.addr.BitLen()
	}
	return netip.PrefixFrom(ip.addr.WithZone(""), bits).Masked(), nil
}

// perAddress is ip_host, network_hosts and network_size: f of the first
// address for a single value, of each for a list.
func perAddress(f func(any) (any, error)) pyFunc {
	return func(in any, args []any) (any, error) {
		addrs := filterIPAddr(in, args[0], args[1])
		if addrs == nil {
			return nil, nil
		}
		if _, ok := in.([]any); !ok {
			return f(addrs[0])
		}
		out := make([]any, len(addrs))
		for i, a := range addrs {
			r, err := f(a)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
}

func ipHost(v any) (any, error) {
	ip, _ := parsePyIP(v)
	if !ip.iface {
		ip.iface, ip.bits = true, ip.addr.BitLen()
	}
	return ip.String(), nil
}

// maxHosts bounds network_hosts: a list of more addresses than this is
// refused rather than built.
const maxHosts = 1 << 20

func networkHosts(v any) (any, error) {
	n, err := networkOf(v)
	if err != nil {
		return nil, err
	}
	hostBits := n.Addr().BitLen() - n.Bits()
	if hostBits > 20 {
		return nil, fmt.Errorf("network_hosts: %s has more than %d hosts", n, maxHosts)
	}
	count := 1 << hostBits
	var out []any
	a := n.Addr()
	for i := 0; i < count; i++ {
		first, last := i == 0, i == count-1
		switch {
		case hostBits == 0:
		case n.Addr().Is4() && hostBits == 1:
		case n.Addr().Is4() && (first || last):
			a = a.Next()
			continue
		case !n.Addr().Is4() && hostBits > 1 && first:
			a = a.Next()
			continue
		}
		out = append(out, pyAddr(a))
		a = a.Next()
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

func networkSize(v any) (any, error) {
	n, err := networkOf(v)
	if err != nil {
		return nil, err
	}
	hostBits := n.Addr().BitLen() - n.Bits()
	if hostBits < 62 {
		return 1 << hostBits, nil
	}
	return new(big.Int).Lsh(big.NewInt(1), uint(hostBits)), nil
}

// ipBracket is Salt's ip_bracket: an IPv6 address in brackets.
func ipBracket(v any) string {
	s := strings.TrimRight(strings.TrimLeft(jinjaStr(v), "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return s
	}
	if a.Is6() {
		return "[" + pyAddr(a) + "]"
	}
	return pyAddr(a)
}

func ipwrap(in any, _ []any) (any, error) {
	wrap := func(x any) any {
		if isIPv(x, 6, nil) != nil {
			return ipBracket(x)
		}
		return x
	}
	if l, ok := in.([]any); ok {
		out := make([]any, len(l))
		for i, x := range l {
			out[i] = wrap(x)
		}
		return out, nil
	}
	return wrap(in), nil
}

// genMAC is Salt's gen_mac(prefix='AC:DE:48'): the prefix and three
// random bytes.
func genMAC(in any, _ []any) (any, error) {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s:%02X:%02X:%02X", jinjaStr(in), b[0], b[1], b[2]), nil
}

func macStrToBytes(in any, _ []any) (any, error) {
	s, ok := in.(string)
	if !ok {
		return nil, fmt.Errorf("object of type '%s' has no len()", pyTypeName(in))
	}
	switch len(s) {
	case 12:
	case 17:
		s = strings.ReplaceAll(s, s[2:3], "")
	default:
		return nil, pyErr("Invalid MAC address")
	}
	out := make([]byte, 0, 6)
	for i := 0; i+2 <= len(s) && i < 12; i += 2 {
		n, err := strconv.ParseUint(strings.TrimSpace(s[i:i+2]), 16, 8)
		if err != nil {
			return nil, fmt.Errorf("invalid literal for int() with base 16: %s", pyRepr(s[i:i+2]))
		}
		out = append(out, byte(n))
	}
	return pyByteString(out), nil
}

// dnsCheck is Salt's dns_check(addr, port, safe=False, ipv6=None): the
// first address addr resolves to (IPv6 in brackets), or an error.
func dnsCheck(in any, args []any) (any, error) {
	host := jinjaStr(in)
	network := "ip"
	if args[2] == true {
		network = "ip6"
	} else if args[2] == false {
		network = "ip4"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIP(ctx, network, host)
	if (err != nil || len(ips) == 0) && args[2] == true {
		ips, err = net.DefaultResolver.LookupIP(ctx, "ip4", host)
	}
	if err != nil || len(ips) == 0 {
		return nil, pyErr("DNS lookup or connection check of '%s' failed.", host)
	}
	a, _ := netip.AddrFromSlice(ips[0])
	return ipBracket(pyAddr(a.Unmap())), nil
}

// filterByNetworks is Salt's filter_by_networks(values, networks): the
// addresses of a list (or of each list of a dictionary) inside any of
// the networks.
func filterByNetworks(in any, args []any) (any, error) {
	if args[0] == nil {
		return in, nil
	}
	list, err := asList(args[0])
	if err != nil {
		return nil, err
	}
	var nets []netip.Prefix
	for _, n := range list {
		ip, ok := parsePyIP(n)
		if !ok {
			return nil, fmt.Errorf("%s does not appear to be an IPv4 or IPv6 network", pyRepr(n))
		}
		bits := ip.bits
		if !ip.iface {
			bits = ip.addr.BitLen()
		}
		p := netip.PrefixFrom(ip.addr, bits)
		if p.Masked().Addr() != ip.addr {
			return nil, fmt.Errorf("%s has host bits set", jinjaStr(n))
		}
		nets = append(nets, p)
	}
	filter := func(ips any) ([]any, error) {
		l, err := asList(ips)
		if err != nil {
			return nil, err
		}
		out := []any{}
		for _, x := range l {
			ip, ok := parsePyIP(x)
			if !ok || ip.iface {
				return nil, fmt.Errorf("%s does not appear to be an IPv4 or IPv6 address", pyRepr(x))
			}
			for _, n := range nets {
				if n.Contains(ip.addr.WithZone("")) {
					out = append(out, x)
				}
			}
		}
		return out, nil
	}
	switch t := in.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			f, err := filter(v)
			if err != nil {
				return nil, err
			}
			out[k] = f
		}
		return out, nil
	case []any, string:
		return filter(t)
	}
	return nil, pyErr("Do not know how to filter a %s", pyClass(in))
}
