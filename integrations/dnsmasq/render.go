package dnsmasq

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
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

// entry is one host on its way to the files. Its addresses and MACs are
// ranges of slices shared by all entries (one allocation for the lot); a
// value left out is zeroed in place.
type entry struct {
	id     string
	fqdn   string // empty: id + "." + domain
	name   string
	addrs  []netip.Addr
	macs   []string
	hasMAC bool // the mine gives MACs: reserve by MAC only
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

	entries := make([]entry, 0, len(sorted))
	addrs := make([]netip.Addr, 0, len(sorted)+len(sorted)/4)
	macs := make([]string, 0, len(sorted))
	for _, h := range sorted {
		if !cfg.includes(h.ID) {
			continue
		}
		e, ok := r.check(h, cfg, &addrs, &macs)
		if ok {
			entries = append(entries, e)
		}
	}
	r.leaveOutShared(entries)

	var dhcp, addn bytes.Buffer
	dhcp.Grow(len(header) + 48*len(entries))
	addn.Grow(len(header) + 48*len(entries))
	dhcp.WriteString(header)
	addn.WriteString(header)
	for i := range entries {
		e := &entries[i]
		lines := 0
		if cfg.HostsFile != "" {
			n := e.writeDHCP(&dhcp, cfg.LeaseTime)
			r.DHCPLines += n
			lines += n
		}
		if cfg.AddnHosts != "" {
			n := e.writeAddn(&addn, cfg.Domain)
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

// leaveOutShared zeroes every address and MAC that more than one host
// claims: neither gets it, since either answer could be the wrong machine.
func (r *Rendered) leaveOutShared(entries []entry) {
	ipOwner := make(map[netip.Addr]int, len(entries))
	macOwner := make(map[string]int, len(entries))
	ipShared := map[netip.Addr][]int{}
	macShared := map[string][]int{}
	for i := range entries {
		for _, a := range entries[i].addrs {
			if j, dup := ipOwner[a]; !dup {
				ipOwner[a] = i
			} else if j != i {
				if ipShared[a] == nil {
					ipShared[a] = []int{j}
				}
				ipShared[a] = append(ipShared[a], i)
			}
		}
		for _, m := range entries[i].macs {
			if j, dup := macOwner[m]; !dup {
				macOwner[m] = i
			} else if j != i {
				if macShared[m] == nil {
					macShared[m] = []int{j}
				}
				macShared[m] = append(macShared[m], i)
			}
		}
	}
	for _, a := range slices.SortedFunc(maps.Keys(ipShared), netip.Addr.Compare) {
		owners := ipShared[a]
		r.Conflicts = append(r.Conflicts, duplicate(DuplicateIP, a.String(), entries, owners))
		for _, i := range owners {
			for k, x := range entries[i].addrs {
				if x == a {
					entries[i].addrs[k] = netip.Addr{}
				}
			}
		}
	}
	for _, m := range slices.Sorted(maps.Keys(macShared)) {
		owners := macShared[m]
		r.Conflicts = append(r.Conflicts, duplicate(DuplicateMAC, m, entries, owners))
		for _, i := range owners {
			for k, x := range entries[i].macs {
				if x == m {
					entries[i].macs[k] = ""
				}
			}
		}
	}
}

func duplicate(kind, value string, entries []entry, owners []int) Conflict {
	ids := make([]string, len(owners))
	for k, i := range owners {
		ids[k] = entries[i].id
	}
	what := "address"
	if kind == DuplicateMAC {
		what = "MAC"
	}
	return Conflict{Kind: kind, Value: value, Hosts: ids,
		Message: fmt.Sprintf("%s %s is claimed by %s; left out for all of them", what, value, strings.Join(ids, " and "))}
}

// check turns one host into an entry, appending its usable addresses and
// MACs to the shared slices; false when nothing of it can be written.
func (r *Rendered) check(h *mine.Host, cfg *Config, addrs *[]netip.Addr, macs *[]string) (entry, bool) {
	bad := func(kind, value, format string, args ...any) {
		r.Conflicts = append(r.Conflicts, Conflict{Kind: kind, Value: value, Hosts: []string{h.ID},
			Message: h.ID + ": " + fmt.Sprintf(format, args...)})
	}
	e := entry{id: h.ID}
	if err := e.setNames(h, cfg.Domain); err != nil {
		bad(InvalidName, e.fqdnOr(cfg.Domain), "%v", err)
		return e, false
	}
	start := len(*addrs)
	var outside []string
	for _, s := range h.IPs {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			bad(InvalidIP, s, "%q is not an IP address", s)
			continue
		}
		a = a.Unmap()
		if mine.LinkScoped(a) {
			continue
		}
		if !inRanges(a, cfg.Ranges) {
			outside = append(outside, s)
			continue
		}
		if !slices.Contains((*addrs)[start:], a) {
			*addrs = append(*addrs, a)
		}
	}
	e.addrs = (*addrs)[start:len(*addrs):len(*addrs)]
	if len(e.addrs) == 0 && len(outside) > 0 {
		bad(OutOfRange, strings.Join(outside, ","), "no address in range %s (has %s)", prefixes(cfg.Ranges), strings.Join(outside, ", "))
	}
	// A host the mine gives MACs for is reserved by MAC only, even when
	// they are all left out: a reservation by name would go to any client
	// that sends the name.
	e.hasMAC = len(h.MACs) > 0
	start = len(*macs)
	for _, s := range h.MACs {
		m, ok := canonicalMAC(s)
		if !ok {
			bad(InvalidMAC, s, "%q is not an Ethernet MAC address (like 00:50:56:aa:bb:01)", s)
			continue
		}
		if !slices.Contains((*macs)[start:], m) {
			*macs = append(*macs, m)
		}
	}
	e.macs = (*macs)[start:len(*macs):len(*macs)]
	return e, true
}

// canonicalMAC returns an Ethernet MAC in lower-case colon form. The mine
// stores them so; other spellings are parsed.
func canonicalMAC(s string) (string, bool) {
	if len(s) == 17 {
		ok := true
		for i := 0; i < 17 && ok; i++ {
			c := s[i]
			if i%3 == 2 {
				ok = c == ':'
			} else {
				ok = c >= '0' && c <= '9' || c >= 'a' && c <= 'f'
			}
		}
		if ok {
			return s, true
		}
	}
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return "", false
	}
	return hw.String(), true
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

// setNames sets the host's names: the record's fqdn, else its id
// (qualified with domain when it has no dot); the short name is the first
// label.
func (e *entry) setNames(h *mine.Host, domain string) error {
	e.fqdn = strings.TrimSuffix(h.FQDN, ".")
	if e.fqdn == "" && (strings.Contains(h.ID, ".") || domain == "") {
		e.fqdn = h.ID
	}
	full := e.fqdn
	if full == "" {
		full = h.ID // + "." + domain, which Validate checked
	}
	e.name, _, _ = strings.Cut(full, ".")
	if err := validName(full); err != nil {
		return fmt.Errorf("%q is not a host name: %w", e.fqdnOr(domain), err)
	}
	return nil
}

// fqdnOr is the fully qualified name.
func (e *entry) fqdnOr(domain string) string {
	if e.fqdn != "" {
		return e.fqdn
	}
	return e.id + "." + domain
}

// validName checks a DNS host name: labels of letters, digits and inner
// hyphens, at most 63 bytes each and 253 in all.
func validName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%d bytes (1 to 253)", len(name))
	}
	for l := range strings.SplitSeq(name, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("label %q", l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("%q in label %q", c, l)
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
	v4 := func(yield func(netip.Addr) bool) {
		for _, a := range e.addrs {
			if a.Is4() && !yield(a) {
				return
			}
		}
	}
	line := func(mac string, a netip.Addr) {
		if mac != "" {
			b.WriteString(mac)
			b.WriteByte(',')
			b.Write(a.AppendTo(b.AvailableBuffer()))
			b.WriteByte(',')
			b.WriteString(e.name)
		} else {
			b.WriteString(e.name)
			b.WriteByte(',')
			b.Write(a.AppendTo(b.AvailableBuffer()))
		}
		if lease != "" {
			b.WriteByte(',')
			b.WriteString(lease)
		}
		b.WriteByte('\n')
	}
	if !e.hasMAC {
		for a := range v4 {
			line("", a)
			return 1
		}
		return 0
	}
	n, i := 0, 0
	for a := range v4 {
		for i < len(e.macs) && e.macs[i] == "" {
			i++
		}
		if i == len(e.macs) {
			break
		}
		line(e.macs[i], a)
		i++
		n++
	}
	return n
}

// writeAddn writes `ip fqdn name` for every address, IPv4 and IPv6.
func (e *entry) writeAddn(b *bytes.Buffer, domain string) int {
	n := 0
	for _, a := range e.addrs {
		if !a.IsValid() {
			continue // left out
		}
		b.Write(a.AppendTo(b.AvailableBuffer()))
		b.WriteByte(' ')
		if e.fqdn != "" {
			b.WriteString(e.fqdn)
		} else {
			b.WriteString(e.id)
			b.WriteByte('.')
			b.WriteString(domain)
		}
		if e.name != e.fqdn {
			b.WriteByte(' ')
			b.WriteString(e.name)
		}
		b.WriteByte('\n')
		n++
	}
	return n
}
