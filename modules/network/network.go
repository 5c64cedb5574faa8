// Package network is Salt's network execution module, as far as agents and
// the mine use it: ip_addrs, ip_addrs6, hw_addr, interfaces, interface_ip
// and get_hostname, with Salt's arguments and return shapes. Interfaces is
// also what the agent's grains are gathered from, so the two always agree.
package network

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// Iface is one network interface and its addresses.
type Iface struct {
	Name string
	// MAC is the hardware address, lower-case colon-separated ("" when none,
	// as for loopback).
	MAC string
	Up  bool
	// V4 and V6 are the interface's addresses with their prefix lengths.
	V4, V6 []netip.Prefix
}

// Interfaces lists the machine's interfaces, sorted by name.
func Interfaces() ([]Iface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("network interfaces: %w", err)
	}
	out := make([]Iface, 0, len(ifs))
	for _, nif := range ifs {
		it := Iface{Name: nif.Name, MAC: nif.HardwareAddr.String(), Up: nif.Flags&net.FlagUp != 0}
		addrs, err := nif.Addrs()
		if err != nil {
			return nil, fmt.Errorf("addresses of %s: %w", nif.Name, err)
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ones, _ := ipn.Mask.Size()
			p := netip.PrefixFrom(ip.Unmap(), ones)
			if p.Addr().Is4() {
				it.V4 = append(it.V4, p)
			} else {
				it.V6 = append(it.V6, p)
			}
		}
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b Iface) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Selection narrows the addresses IPAddrs returns, as Salt's arguments do.
type Selection struct {
	// Interface keeps one interface's addresses ("" for all).
	Interface string
	// IncludeLoopback keeps loopback addresses.
	IncludeLoopback bool
	// CIDR keeps addresses inside this network (invalid: none).
	CIDR string
	// Type is "public", "private" or "" (both).
	Type string
}

// IPAddrs returns the sorted addresses of family 4 or 6 that sel selects,
// as Salt's network.ip_addrs and ip_addrs6 do.
func IPAddrs(ifs []Iface, family int, sel Selection) ([]string, error) {
	var cidr netip.Prefix
	if sel.CIDR != "" {
		p, err := netip.ParsePrefix(sel.CIDR)
		if err != nil {
			return nil, fmt.Errorf("cidr %q: %w", sel.CIDR, err)
		}
		cidr = p.Masked()
	}
	switch sel.Type {
	case "", "public", "private":
	default:
		return nil, fmt.Errorf("type %q: want public or private", sel.Type)
	}
	var out []string
	for _, it := range ifs {
		if sel.Interface != "" && it.Name != sel.Interface {
			continue
		}
		addrs := it.V4
		if family == 6 {
			addrs = it.V6
		}
		for _, p := range addrs {
			a := p.Addr()
			switch {
			case a.IsLoopback() && !sel.IncludeLoopback:
			case cidr.IsValid() && !cidr.Contains(a):
			case sel.Type == "private" && !a.IsPrivate():
			case sel.Type == "public" && (a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast()):
			default:
				if s := a.String(); !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// Module declares the network functions.
func Module(*modules.Env) []function.Func {
	iface := function.Param{Name: "interface", Kind: function.String}
	loop := function.Param{Name: "include_loopback", Kind: function.Bool, Default: false}
	cidr := function.Param{Name: "cidr", Kind: function.String}
	sel := func(in *function.Input) Selection {
		return Selection{Interface: in.String("interface"), IncludeLoopback: in.Bool("include_loopback"),
			CIDR: in.String("cidr"), Type: in.String("type")}
	}
	addrs := func(family int) function.Handler {
		return func(_ context.Context, in *function.Input) (any, error) {
			ifs, err := Interfaces()
			if err != nil {
				return nil, err
			}
			return IPAddrs(ifs, family, sel(in))
		}
	}
	v4 := []function.Param{iface, loop, cidr, {Name: "type", Kind: function.String}}
	return []function.Func{
		{Name: "network.ip_addrs", Doc: "IPv4 addresses of this machine (loopback only with include_loopback=True), sorted.",
			Params: v4, ReadOnly: true, Run: addrs(4)},
		{Name: "network.ipaddrs", Doc: "Alias of network.ip_addrs.", Params: v4, ReadOnly: true, Run: addrs(4)},
		{Name: "network.ip_addrs6", Doc: "IPv6 addresses of this machine (::1 only with include_loopback=True), sorted.",
			Params: []function.Param{iface, loop, cidr}, ReadOnly: true, Run: addrs(6)},
		{Name: "network.ipaddrs6", Doc: "Alias of network.ip_addrs6.", Params: []function.Param{iface, loop, cidr}, ReadOnly: true, Run: addrs(6)},
		{
			Name: "network.hw_addr", Doc: "The hardware (MAC) address of an interface.",
			Params: []function.Param{ifaceArg}, ReadOnly: true,
			Run: byName(func(it Iface) any { return it.MAC }),
		},
		{
			Name: "network.interface_ip", Doc: "The first IPv4 address of an interface.",
			Params: []function.Param{ifaceArg}, ReadOnly: true,
			Run: byName(func(it Iface) any {
				if len(it.V4) == 0 {
					return ""
				}
				return it.V4[0].Addr().String()
			}),
		},
		{
			Name: "network.interfaces", Doc: "Every interface with its hardware address, state and addresses, in Salt's shape.",
			ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) {
				ifs, err := Interfaces()
				if err != nil {
					return nil, err
				}
				return Describe(ifs), nil
			},
		},
		{
			Name: "network.ping", Doc: "Ping host (4 packets, each waiting timeout seconds): ping's output, or with return_boolean=True whether it answered.",
			Params: []function.Param{{Name: "host", Kind: function.String, Required: true},
				{Name: "timeout", Kind: function.Int, Default: int64(0)}, {Name: "return_boolean", Kind: function.Bool, Default: false}},
			ReadOnly: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				host := in.String("host")
				if host == "" || strings.HasPrefix(host, "-") {
					return nil, fmt.Errorf("network.ping: %q is not a host name or address", host)
				}
				args := []string{"-c", "4"}
				if t := in.Int("timeout"); t > 0 {
					args = append(args, "-W", strconv.FormatInt(t, 10))
				}
				out, err := exec.CommandContext(ctx, "ping", append(args, host)...).CombinedOutput()
				if in.Bool("return_boolean") {
					return err == nil, nil
				}
				if _, notRun := err.(*exec.ExitError); err != nil && !notRun {
					return nil, fmt.Errorf("network.ping: %w", err)
				}
				return strings.TrimRight(string(out), "\n"), nil
			},
		},
		{
			Name: "network.get_hostname", Doc: "This machine's host name.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return os.Hostname() },
		},
	}
}

// ifaceArg names one interface.
var ifaceArg = function.Param{Name: "iface", Kind: function.String, Required: true, Aliases: []string{"interface"}}

// byName answers with what of the interface named by the iface argument,
// or Salt's message naming the interfaces there are.
func byName(what func(Iface) any) function.Handler {
	return func(_ context.Context, in *function.Input) (any, error) {
		ifs, err := Interfaces()
		if err != nil {
			return nil, err
		}
		name := in.String("iface")
		for _, it := range ifs {
			if it.Name == name {
				return what(it), nil
			}
		}
		return fmt.Sprintf("Interface %q not in available interfaces: %s", name, strings.Join(names(ifs), ", ")), nil
	}
}

func names(ifs []Iface) []string {
	out := make([]string, len(ifs))
	for i, it := range ifs {
		out[i] = it.Name
	}
	return out
}

// Describe returns interfaces in the shape of Salt's network.interfaces:
// {name: {hwaddr, up, inet: [{address, netmask, label}], inet6: [{address, prefixlen, scope}]}}.
func Describe(ifs []Iface) map[string]any {
	out := make(map[string]any, len(ifs))
	for _, it := range ifs {
		d := map[string]any{"up": it.Up}
		if it.MAC != "" {
			d["hwaddr"] = it.MAC
		}
		var inet, inet6 []any
		for _, p := range it.V4 {
			mask := net.CIDRMask(p.Bits(), 32)
			inet = append(inet, map[string]any{"address": p.Addr().String(), "netmask": net.IP(mask).String(), "label": it.Name})
		}
		for _, p := range it.V6 {
			scope := "global"
			switch a := p.Addr(); {
			case a.IsLoopback():
				scope = "host"
			case a.IsLinkLocalUnicast():
				scope = "link"
			}
			inet6 = append(inet6, map[string]any{"address": p.Addr().String(), "prefixlen": fmt.Sprint(p.Bits()), "scope": scope})
		}
		if inet != nil {
			d["inet"] = inet
		}
		if inet6 != nil {
			d["inet6"] = inet6
		}
		out[it.Name] = d
	}
	return out
}
