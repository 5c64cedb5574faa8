package ddns

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// reverseTTL is how long a discovered reverse zone (or its absence) is
// remembered.
const reverseTTL = time.Minute

type reverseEntry struct {
	zone    string // "" when the server serves no reverse zone for the name
	expires time.Time
}

// reverseZone finds the zone holding the PTR name ptr: the longest
// configured zone containing it, or else the zone the server says it
// belongs to (the SOA of an authoritative answer), which is the most
// specific reverse zone it serves. "" means none.
func (c *Client) reverseZone(ctx context.Context, fwd target, ptr string) (string, error) {
	if z := c.conf().zoneFor(ptr); z != "" {
		return z, nil
	}
	parent := ptr[strings.IndexByte(ptr, '.')+1:]
	c.mu.Lock()
	e, ok := c.reverse[parent]
	c.mu.Unlock()
	if ok && time.Now().Before(e.expires) {
		return e.zone, nil
	}
	m := new(dns.Msg)
	m.SetQuestion(ptr, dns.TypeSOA)
	m.RecursionDesired = false
	t := fwd
	t.zone = parent
	r, err := exchange(ctx, t, m)
	zone := ""
	var re *RcodeError
	switch {
	case errors.As(err, &re) && (re.Rcode == dns.RcodeRefused || re.Rcode == dns.RcodeNotAuth):
		// The server serves no zone for it.
	case err != nil:
		return "", err
	case r.Authoritative:
		for _, rr := range append(r.Answer, r.Ns...) {
			if soa, ok := rr.(*dns.SOA); ok && dns.IsSubDomain(soa.Hdr.Name, ptr) {
				zone = dns.CanonicalName(soa.Hdr.Name)
				break
			}
		}
	}
	c.mu.Lock()
	c.reverse[parent] = reverseEntry{zone: zone, expires: time.Now().Add(reverseTTL)}
	c.mu.Unlock()
	return zone, nil
}

// ptrTarget returns the reverse zone's target for a, and the PTR name;
// ok is false when no reverse zone is served.
func (c *Client) ptrTarget(ctx context.Context, call Settings, fwd target, a netip.Addr) (t target, ptr string, ok bool, err error) {
	ptr, err = dns.ReverseAddr(a.String())
	if err != nil {
		return t, "", false, err
	}
	zone, err := c.reverseZone(ctx, fwd, ptr)
	if err != nil || zone == "" {
		return t, ptr, false, err
	}
	t, err = c.conf().target(zone, call)
	return t, ptr, err == nil, err
}

// setPTR points a's PTR at fqdn, replacing what was there: the address now
// belongs to this host.
func (c *Client) setPTR(ctx context.Context, call Settings, fwd target, a netip.Addr, fqdn string, ch *Change) error {
	t, ptrName, ok, err := c.ptrTarget(ctx, call, fwd, a)
	if err != nil {
		return err
	}
	if !ok {
		ch.say("No reverse zone for %s on %s: PTR not created", a, fwd.server)
		return nil
	}
	ptr := &dns.PTR{Hdr: dns.RR_Header{Name: ptrName, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: fwd.ttl}, Ptr: fqdn}
	var txt []dns.RR
	first := true
	err = retryConflicts(ctx, "PTR "+ptrName, func() error {
		optimistic := first
		first = false
		if c.conf().Ownership && !optimistic {
			var err error
			if txt, err = query(ctx, t, ptrName, dns.TypeTXT); err != nil {
				return err
			}
		}
		m := newUpdate(t.zone)
		claimed, err := c.claim(m, ptrName, fwd.ttl, txt)
		if err != nil {
			return err
		}
		m.RemoveRRset([]dns.RR{ptr})
		m.Insert([]dns.RR{dns.Copy(ptr)})
		err = c.update(ctx, t, m, claimed, ptrName)
		if optimistic && errors.Is(err, ErrNotOwner) {
			return fmt.Errorf("%w: %w", ErrPrerequisite, err) // read the TXT, then decide
		}
		return err
	})
	if err != nil {
		return err
	}
	ch.add(ptr)
	ch.say("Created record of type 'PTR': %s -> %s", ptrName, fqdn)
	return nil
}

// removePTR deletes a's PTR if it points at fqdn, leaving PTRs to other
// names alone.
func (c *Client) removePTR(ctx context.Context, call Settings, fwd target, a netip.Addr, fqdn string, ch *Change) error {
	t, ptrName, ok, err := c.ptrTarget(ctx, call, fwd, a)
	if err != nil || !ok {
		return err
	}
	ptr := &dns.PTR{Hdr: dns.RR_Header{Name: ptrName, Rrtype: dns.TypePTR, Class: dns.ClassINET}, Ptr: fqdn}
	found := false
	err = retryConflicts(ctx, "PTR "+ptrName, func() error {
		cur, err := query(ctx, t, ptrName, dns.TypePTR)
		if err != nil {
			return err
		}
		if found = containsData(cur, ptr); !found {
			return nil
		}
		m := newUpdate(t.zone)
		used(m, cur)
		m.Remove([]dns.RR{dns.Copy(ptr)})
		owned, err := c.mustOwn(ctx, t, m, ptrName)
		if err != nil {
			return err
		}
		if owned && len(cur) == 1 {
			m.Remove([]dns.RR{c.ownerRR(ptrName, 0)})
		}
		return c.send(ctx, t, m)
	})
	if err != nil || !found {
		return err
	}
	ch.remove(ptr)
	ch.say("Deleted DNS record(s) of type 'PTR'")
	return nil
}

// AddHost makes ips the addresses of name in zone (A for IPv4, AAAA for
// IPv6) with their PTRs, Salt's ddns.add_host. Old addresses of the
// families given are replaced and their PTRs removed; the other family and
// other record types are left alone. Each new PTR is written before the
// forward record and each old one removed after it, so that writers racing
// on one name leave no PTR to an address the name no longer has.
func (c *Client) AddHost(ctx context.Context, zone, name string, ips []netip.Addr, call Settings) (*Change, error) {
	return c.setHost(ctx, zone, name, ips, call, false)
}

// setHost is AddHost; with all, ips are every address the host has, and
// the records of a family absent from them are removed too (the sync knows
// a host's whole address set, a Salt call knows one address).
func (c *Client) setHost(ctx context.Context, zone, name string, ips []netip.Addr, call Settings, all bool) (*Change, error) {
	if len(ips) == 0 {
		return nil, fmt.Errorf("%w: ip: no address given", ErrConfig)
	}
	k, err := c.prepare(zone, name, "", "", call, false)
	if err != nil {
		return nil, err
	}
	fq, t, ch := k.fq, k.t, k.ch
	want := map[uint16][]dns.RR{}
	for _, a := range ips {
		rr := addrRR(fq, t.ttl, a)
		if !containsData(want[rr.Header().Rrtype], rr) {
			want[rr.Header().Rrtype] = append(want[rr.Header().Rrtype], rr)
		}
	}
	types := make([]uint16, 0, 2)
	for _, typ := range []uint16{dns.TypeA, dns.TypeAAAA} {
		if want[typ] != nil || all {
			types = append(types, typ)
		}
	}

	ptrs := &Change{}
	for i, a := range ips {
		if err := c.setPTR(ctx, call, t, a, fq, ptrs); err != nil {
			c.undoPTRs(ctx, call, t, fq, ips[:i])
			return nil, err
		}
	}

	var removed []dns.RR
	optimistic := true
	err = retryConflicts(ctx, fq, func() error {
		removed = nil
		m := newUpdate(t.zone)
		if optimistic {
			// A new host, the common case: one round trip.
			optimistic = false
			claimed, _ := c.claim(m, fq, t.ttl, nil)
			for _, typ := range types {
				if !claimed {
					m.RRsetNotUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: fq, Rrtype: typ}}})
				}
				m.Insert(copyRRs(want[typ]))
			}
			err := c.update(ctx, t, m, false, fq)
			if err == nil {
				for _, typ := range types {
					ch.add(want[typ]...)
				}
			}
			return err
		}
		cur := map[uint16][]dns.RR{}
		for _, typ := range types {
			rrs, err := query(ctx, t, fq, typ)
			if err != nil {
				return err
			}
			cur[typ] = rrs
		}
		var txt []dns.RR
		if c.conf().Ownership {
			var err error
			if txt, err = query(ctx, t, fq, dns.TypeTXT); err != nil {
				return err
			}
		}
		claimed, err := c.claim(m, fq, t.ttl, txt)
		if err != nil {
			return err
		}
		changed := false
		var added []dns.RR
		for _, typ := range types {
			if sameSet(cur[typ], want[typ]) {
				continue
			}
			changed = true
			if len(cur[typ]) == 0 {
				m.RRsetNotUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: fq, Rrtype: typ}}})
			} else {
				used(m, cur[typ])
			}
			m.RemoveRRset([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: fq, Rrtype: typ}}})
			m.Insert(copyRRs(want[typ]))
			added = append(added, want[typ]...)
			for _, rr := range cur[typ] {
				if !containsData(want[typ], rr) {
					removed = append(removed, rr)
				}
			}
		}
		if !changed && !claimed {
			return nil
		}
		if err := c.update(ctx, t, m, claimed, fq); err != nil {
			return err
		}
		ch.add(added...)
		return nil
	})
	if err != nil {
		c.undoPTRs(ctx, call, t, fq, ips)
		return nil, err
	}
	ch.remove(removed...)
	if len(ch.Added) == 0 {
		for _, typ := range types {
			if want[typ] != nil {
				ch.say("Record of type '%s' already exists with ttl of %d", dns.TypeToString[typ], t.ttl)
			}
		}
	}
	for _, typ := range types {
		for _, rr := range want[typ] {
			if slices.Contains(ch.Added, rr.String()) {
				ch.say("Created record of type '%s': %s -> %s", dns.TypeToString[typ], fq, rrAddr(rr))
			}
		}
	}
	ch.Added = append(ch.Added, ptrs.Added...)
	ch.Messages = append(ch.Messages, ptrs.Messages...)
	for _, rr := range removed {
		if err := c.removePTR(ctx, call, t, rrAddr(rr), fq, ch); err != nil {
			return ch, fmt.Errorf("%s: replaced %s but its PTR remains: %w", fq, rrAddr(rr), err)
		}
	}
	return ch, nil
}

// undoPTRs removes, after a failed add_host, the PTRs it wrote for
// addresses the name does not have: no PTR may point at a name that did not
// get the address. Addresses the name has keep their PTR; when the name
// cannot be read, nothing is removed (a stale PTR is better than a lost one).
func (c *Client) undoPTRs(ctx context.Context, call Settings, t target, fq string, ips []netip.Addr) {
	var have []dns.RR
	for _, typ := range []uint16{dns.TypeA, dns.TypeAAAA} {
		rrs, err := query(ctx, t, fq, typ)
		if err != nil {
			c.log.Warn("ddns: add_host failed and its PTRs cannot be checked", "fqdn", fq, "err", err)
			return
		}
		have = append(have, rrs...)
	}
	for _, a := range ips {
		if containsData(have, addrRR(fq, 0, a)) {
			continue
		}
		if err := c.removePTR(ctx, call, t, a, fq, &Change{}); err != nil {
			c.log.Warn("ddns: removing the PTR of a failed add_host", "fqdn", fq, "ip", a, "err", err)
		}
	}
}

// sameSet reports whether two RRsets hold the same data with the same TTL.
func sameSet(a, b []dns.RR) bool {
	if len(a) != len(b) {
		return false
	}
	for _, rr := range a {
		if !containsData(b, rr) || rr.Header().Ttl != b[0].Header().Ttl {
			return false
		}
	}
	return true
}

// DeleteHost removes name's A and AAAA records and their PTRs, Salt's
// ddns.delete_host. Unlike Salt's, it deletes nothing else at the name
// (TXT, MX… stay), and each address only if it is still the one read.
func (c *Client) DeleteHost(ctx context.Context, zone, name string, call Settings) (*Change, error) {
	k, err := c.prepare(zone, name, "", "", call, false)
	if err != nil {
		return nil, err
	}
	fq, t, ch := k.fq, k.t, k.ch
	var gone []dns.RR
	err = retryConflicts(ctx, fq, func() error {
		gone = nil
		for _, typ := range []uint16{dns.TypeA, dns.TypeAAAA} {
			rrs, err := query(ctx, t, fq, typ)
			if err != nil {
				return err
			}
			gone = append(gone, rrs...)
		}
		if len(gone) == 0 {
			return nil
		}
		m := newUpdate(t.zone)
		owned, err := c.mustOwn(ctx, t, m, fq)
		if err != nil {
			return err
		}
		if owned {
			m.Remove([]dns.RR{c.ownerRR(fq, 0)})
		}
		used(m, gone)
		m.Remove(copyRRs(gone))
		return c.send(ctx, t, m)
	})
	if err != nil {
		return nil, err
	}
	if len(gone) == 0 {
		ch.say("No matching DNS record(s) found of type 'A'")
		return ch, nil
	}
	ch.remove(gone...)
	ch.say("Deleted DNS record(s) of type 'A'")
	for _, rr := range gone {
		if err := c.removePTR(ctx, call, t, rrAddr(rr), fq, ch); err != nil {
			return ch, fmt.Errorf("%s: deleted, but the PTR of %s remains: %w", fq, rrAddr(rr), err)
		}
	}
	return ch, nil
}
