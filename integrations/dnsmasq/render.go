package dnsmasq

import (
	"bytes"
	"cmp"
	"fmt"
	"iter"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/brinehq/brine/mine"
)

// header starts both files, so that nobody edits them by hand.
const header = "# Written by brine from the mine; changes made here are overwritten.\n"

// Conflict kinds.
const (
	DuplicateIP  = "duplicate_ip"
	DuplicateMAC = "duplicate_mac"
	InvalidIP    = "invalid_ip"
	InvalidMAC   = "invalid_mac"
	InvalidName  = "invalid_name"
	OutOfRange   = "out_of_range"
)

// Conflict is something left out of the files, and why.
type Conflict struct {
	Kind string `json:"kind"`
	// Value is the address, MAC or name at issue.
	Value string `json:"value"`
	// Hosts are the mine ids involved: both claimants of a duplicate.
	Hosts   []string `json:"hosts"`
	Message string   `json:"message"`
}

func (c Conflict) key() string {
	return c.Kind + "\x00" + c.Value + "\x00" + strings.Join(c.Hosts, ",")
}

// Rendered is the content of both files for one state of the mine.
type Rendered struct {
	DHCP      []byte // dhcp-hostsfile
	Addn      []byte // addn-hosts
	Hosts     int    // hosts with at least one line
	DHCPLines int
	AddnLines int
	Conflicts []Conflict
}

// entry is one host on its way to the files.
type entry struct {
	id, fqdn, name string
	addrs          []netip.Addr
	macs           []string
	hadMACs        bool
}

// Render builds both files from hosts. The output depends only on the set
// of records, not their order: hosts sorted by id, each host's addresses in
// the order the mine holds them. Anything a file must not hold (an address
// or MAC two hosts claim, an invalid one, a host with no address in range,
// a name DNS cannot carry) is left out and returned as a Conflict.
func Render(hosts []*mine.Host, cfg *Config) *Rendered {
	r := &Rendered{}
	sorted := slices.Clone(hosts)
	slices.SortFunc(sorted, func(a, b *mine.Host) int { return cmp.Compare(a.ID, b.ID) })

	entries := make([]*entry, 0, len(sorted))
	ipOwners := map[netip.Addr][]*entry{}
	macOwners := map[string][]*entry{}
	for _, h := range sorted {
		if !cfg.includes(h.ID) {
			continue
		}
		e, conflicts := newEntry(h, cfg)
		r.Conflicts = append(r.Conflicts, conflicts...)
		if e == nil {
			continue
		}
		entries = append(entries, e)
		for _, a := range e.addrs {
			ipOwners[a] = append(ipOwners[a], e)
		}
		for _, m := range e.macs {
			macOwners[m] = append(macOwners[m], e)
		}
	}
	// Two hosts claiming one address or MAC: neither gets it, since either
	// answer could be the wrong machine.
	for _, a := range slices.SortedFunc(shared(ipOwners), netip.Addr.Compare) {
		owners := ipOwners[a]
		r.Conflicts = append(r.Conflicts, duplicate(DuplicateIP, a.String(), owners))
		for _, e := range owners {
			e.addrs = slices.DeleteFunc(e.addrs, func(x netip.Addr) bool { return x == a })
		}
	}
	for _, m := range slices.Sorted(shared(macOwners)) {
		owners := macOwners[m]
		r.Conflicts = append(r.Conflicts, duplicate(DuplicateMAC, m, owners))
		for _, e := range owners {
			e.macs = slices.DeleteFunc(e.macs, func(x string) bool { return x == m })
		}
	}

	var dhcp, addn bytes.Buffer
	dhcp.WriteString(header)
	addn.WriteString(header)
	for _, e := range entries {
		lines := 0
		if cfg.HostsFile != "" {
			n := e.writeDHCP(&dhcp, cfg.LeaseTime)
			r.DHCPLines += n
			lines += n
		}
		if cfg.AddnHosts != "" {
			n := e.writeAddn(&addn)
			r.AddnLines += n
			lines += n
		}
		if lines > 0 {
			r.Hosts++
		}
	}
	r.DHCP, r.Addn = dhcp.Bytes(), addn.Bytes()
	return r
}

// shared yields the keys more than one host claims.
func shared[K comparable](owners map[K][]*entry) iter.Seq[K] {
	return func(yield func(K) bool) {
		for k, es := range owners {
			if len(es) > 1 && !yield(k) {
				return
			}
		}
	}
}

func duplicate(kind, value string, owners []*entry) Conflict {
	ids := make([]string, len(owners))
	for i, e := range owners {
		ids[i] = e.id
	}
	what := "address"
	if kind == DuplicateMAC {
		what = "MAC"
	}
	return Conflict{Kind: kind, Value: value, Hosts: ids,
		Message: fmt.Sprintf("%s %s is claimed by %s; left out for all of them", what, value, strings.Join(ids, " and "))}
}

// newEntry checks one host; nil when nothing of it can be written.
func newEntry(h *mine.Host, cfg *Config) (*entry, []Conflict) {
	var conflicts []Conflict
	bad := func(kind, value, format string, args ...any) {
		conflicts = append(conflicts, Conflict{Kind: kind, Value: value, Hosts: []string{h.ID},
			Message: h.ID + ": " + fmt.Sprintf(format, args...)})
	}
	fqdn, name, err := names(h, cfg.Domain)
	if err != nil {
		bad(InvalidName, fqdn, "%v", err)
		return nil, conflicts
	}
	e := &entry{id: h.ID, fqdn: fqdn, name: name}
	var outside []string
	for _, s := range h.IPs {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			bad(InvalidIP, s, "%q is not an IP address", s)
			continue
		}
		a = a.Unmap()
		if !inRanges(a, cfg.Ranges) {
			outside = append(outside, s)
			continue
		}
		if !slices.Contains(e.addrs, a) {
			e.addrs = append(e.addrs, a)
		}
	}
	if len(e.addrs) == 0 && len(outside) > 0 {
		bad(OutOfRange, strings.Join(outside, ","), "no address in range %s (has %s)", prefixes(cfg.Ranges), strings.Join(outside, ", "))
	}
	// A host the mine gives MACs for is reserved by MAC only, even when
	// they are all left out: a reservation by name would go to any client
	// that sends the name.
	e.hadMACs = len(h.MACs) > 0
	for _, s := range h.MACs {
		hw, err := net.ParseMAC(s)
		if err != nil || len(hw) != 6 {
			bad(InvalidMAC, s, "%q is not an Ethernet MAC address (like 00:50:56:aa:bb:01)", s)
			continue
		}
		if m := hw.String(); !slices.Contains(e.macs, m) {
			e.macs = append(e.macs, m)
		}
	}
	return e, conflicts
}

func inRanges(a netip.Addr, ranges []netip.Prefix) bool {
	if len(ranges) == 0 {
		return true
	}
	for _, p := range ranges {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func prefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// names returns the host's fully qualified name and short name: the
// record's fqdn, else its id (qualified with domain when it has no dot).
func names(h *mine.Host, domain string) (fqdn, short string, err error) {
	fqdn = strings.TrimSuffix(h.FQDN, ".")
	if fqdn == "" {
		fqdn = h.ID
		if !strings.Contains(fqdn, ".") && domain != "" {
			fqdn += "." + domain
		}
	}
	short, _, _ = strings.Cut(fqdn, ".")
	if err := validName(fqdn); err != nil {
		return fqdn, "", err
	}
	return fqdn, short, nil
}

// validName checks a DNS host name: labels of letters, digits and inner
// hyphens, at most 63 bytes each and 253 in all.
func validName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%q is not a host name (1 to 253 bytes)", name)
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("%q is not a host name: label %q", name, l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("%q is not a host name: %q in label %q", name, c, l)
			}
		}
	}
	return nil
}

// writeDHCP writes the host's reservations: `mac,ip,name[,lease]` for each
// MAC paired with an IPv4 address in order, or `name,ip[,lease]` (a
// reservation by the name the client sends) when the mine knows no MAC.
// A host whose MACs were all left out gets no reservation.
func (e *entry) writeDHCP(b *bytes.Buffer, lease string) int {
	var v4 []netip.Addr
	for _, a := range e.addrs {
		if a.Is4() {
			v4 = append(v4, a)
		}
	}
	if len(v4) == 0 {
		return 0
	}
	line := func(fields ...string) {
		if lease != "" {
			fields = append(fields, lease)
		}
		b.WriteString(strings.Join(fields, ","))
		b.WriteByte('\n')
	}
	if !e.hadMACs {
		line(e.name, v4[0].String())
		return 1
	}
	n := min(len(e.macs), len(v4))
	for i := range n {
		line(e.macs[i], v4[i].String(), e.name)
	}
	return n
}

// writeAddn writes `ip fqdn name` for every address, IPv4 and IPv6.
func (e *entry) writeAddn(b *bytes.Buffer) int {
	for _, a := range e.addrs {
		b.WriteString(a.String())
		b.WriteByte(' ')
		b.WriteString(e.fqdn)
		if e.name != e.fqdn {
			b.WriteByte(' ')
			b.WriteString(e.name)
		}
		b.WriteByte('\n')
	}
	return len(e.addrs)
}
