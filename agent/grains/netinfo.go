package grains

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/internal/py"
)

// resolverTimeout bounds the name lookups of fqdn_ip4, fqdn_ip6 and fqdns,
// which run when the agent starts and on every grains refresh: a resolver
// that does not answer costs this, never a hung agent.
const resolverTimeout = 5 * time.Second

// dns is Salt's dns grain, the resolver configuration
// (salt.utils.dns.parse_resolv), from systemd-resolved's resolv.conf when
// it exists.
func (c Collector) dns(g map[string]any) {
	src := c.Root + "/run/systemd/resolve/resolv.conf"
	if _, err := os.Stat(src); err != nil {
		src = c.Root + "/etc/resolv.conf"
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return
	}
	var ns, ns4, ns6, sortlist []string
	search, options := []any{}, []string{}
	domain := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		directive, args := strings.ToLower(f[0]), []string{}
		for _, a := range f[1:] {
			if a[0] == '#' || a[0] == ';' {
				break
			}
			args = append(args, a)
		}
		if len(args) == 0 {
			continue
		}
		switch directive {
		case "nameserver":
			ip, err := netip.ParseAddr(args[0])
			if err != nil {
				continue
			}
			s := ip.String()
			ns = appendNew(ns, s)
			if ip.Is4() {
				ns4 = appendNew(ns4, s)
			} else {
				ns6 = appendNew(ns6, s)
			}
		case "domain":
			domain = args[0]
		case "search":
			search = []any{}
			for _, a := range args {
				search = append(search, a)
			}
		case "sortlist":
			for _, a := range args {
				if n, ok := sortNet(a); ok {
					sortlist = appendNew(sortlist, n)
				}
			}
		case "options":
			options = appendNew(options, args[0])
		}
	}
	g["dns"] = map[string]any{
		"nameservers": py.List(ns), "ip4_nameservers": py.List(ns4), "ip6_nameservers": py.List(ns6),
		"sortlist": py.List(sortlist), "domain": domain, "search": search, "options": py.List(options),
	}
}

// sortNet writes a sortlist entry as Python's ip_network(...).with_netmask:
// the mask may be a length or dotted; an address without one gets its
// class's natural mask; a network with host bits set is refused, as
// Python refuses it.
func sortNet(s string) (string, bool) {
	addr, mask, hasMask := strings.Cut(s, "/")
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return "", false
	}
	bits := a.BitLen()
	switch {
	case hasMask && strings.Contains(mask, "."):
		m := net.ParseIP(mask).To4()
		if m == nil {
			return "", false
		}
		ones, size := net.IPMask(m).Size()
		if size == 0 {
			return "", false
		}
		bits = ones
	case hasMask:
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return "", false
		}
		bits = p.Bits()
	}
	p := netip.PrefixFrom(a, bits)
	if p.Masked() != p {
		return "", false
	}
	if !hasMask && a.Is4() {
		switch first := a.As4()[0]; {
		case first >= 192:
			bits = 24
		case first >= 128:
			bits = 16
		default:
			bits = 8
		}
		p = netip.PrefixFrom(a, bits).Masked()
	}
	return p.Addr().String() + "/" + net.IP(net.CIDRMask(p.Bits(), a.BitLen())).String(), true
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// gateways sets ip_gw, ip4_gw and ip6_gw from `ip -4|-6 route show` as
// Salt's default_gateway: the first default route's gateway address, true
// for a default route without one, false for none; nothing without ip(8).
func (c Collector) gateways(g map[string]any) {
	if _, err := c.lookPath("ip"); err != nil {
		return
	}
	g["ip_gw"], g["ip4_gw"], g["ip6_gw"] = false, false, false
	for _, v := range []string{"4", "6"} {
		out, err := c.output("ip", "-"+v, "route", "show")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "default") {
				continue
			}
			g["ip_gw"] = true
			g["ip"+v+"_gw"] = true
			if f := strings.Fields(line); len(f) >= 3 && f[1] == "via" {
				g["ip"+v+"_gw"] = f[2]
			}
			break
		}
	}
}

// fqdnIPs sets fqdn_ip4 and fqdn_ip6, the addresses the fqdn grain
// resolves to ([] when the machine has no address of that family).
func fqdnIPs(ctx context.Context, g map[string]any) {
	fqdn, _ := g["fqdn"].(string)
	for _, v := range []string{"4", "6"} {
		ips := []string{}
		if have, _ := g["ipv"+v].([]any); len(have) > 0 && fqdn != "" {
			if addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip"+v, fqdn); err == nil {
				for _, a := range addrs {
					ips = appendNew(ips, a.Unmap().String())
				}
			}
		}
		slices.Sort(ips)
		g["fqdn_ip"+v] = py.List(ips)
	}
}

// fqdns is Salt's fqdns grain: the names the machine's addresses
// (loopback left out) resolve back to, looked up in parallel.
func fqdns(ctx context.Context, g map[string]any) {
	var addrs []string
	for _, v := range []string{"ipv4", "ipv6"} {
		list, _ := g[v].([]any)
		for _, a := range list {
			s, _ := a.(string)
			if ip, err := netip.ParseAddr(s); err == nil && !ip.IsLoopback() {
				addrs = append(addrs, s)
			}
		}
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		names []string
	)
	for _, a := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := net.DefaultResolver.LookupAddr(ctx, a)
			if err != nil || len(got) == 0 {
				return
			}
			name := FQDN(strings.TrimSuffix(got[0], "."))
			mu.Lock()
			names = appendNew(names, name)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(names)
	g["fqdns"] = py.List(names)
}
