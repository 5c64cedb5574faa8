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
// names alone, and reports whether there was one to delete.
func (c *Client) removePTR(ctx context.Context, call Settings, fwd target, a netip.Addr, fqdn string, ch *Change) (bool, error) {
	t, ptrName, ok, err := c.ptrTarget(ctx, call, fwd, a)
	if err != nil || !ok {
		return false, err
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
		return false, err
	}
	ch.remove(ptr)
	ch.say("Deleted DNS record(s) of type 'PTR'")
	return true, nil
}

// AddHost makes ips the addresses of name in zone (A for IPv4, AAAA for
// IPv6) with their PTRs, Salt's ddns.add_host. Old addresses of the
// families given are replaced and their PTRs removed; the other family and
// other record types are left alone.
//
// A registration is all or nothing: the forward records are written first,
// because the forward zone is the one a wrong zone name, key or server
// fails on, and only then the PTRs; when a PTR or the removal of an old one
// fails, the forward records are put back and the new PTRs removed, so that
// no PTR points at a name that did not get its address.
func (c *Client) AddHost(ctx context.Context, zone, name string, ips []netip.Addr, call Settings) (*Change, error) {
	return c.setHost(ctx, zone, name, ips, call, false)
}

// setHost is AddHost; with all, ips are every address the host has, and
// the records of a family absent from them are removed too (the sync knows
// a host's whole address set, a Salt call knows one address).
//
// Writers racing on one name leave no PTR to an address the name no longer
// has: whoever replaces an address removes its PTR after the forward
// update, and whoever writes a PTR checks afterwards that the name still
// has the address, so one of the two always sees the other's write.
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

	w, removed, err := c.setForward(ctx, t, fq, want, types, ch)
	if err != nil {
		return nil, err
	}

	ptrs := &Change{}
	if tried, err := c.linkPTRs(ctx, call, t, fq, ips, ptrs); err != nil {
		return nil, c.undoHost(ctx, call, w, tried, nil, err)
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
	ch.Removed = append(ch.Removed, ptrs.Removed...)
	ch.Messages = append(ch.Messages, ptrs.Messages...)
	var unlinked []netip.Addr
	for _, rr := range removed {
		did, err := c.removePTR(ctx, call, t, rrAddr(rr), fq, ch)
		if err != nil {
			err = fmt.Errorf("%s: PTR of the replaced address %s: %w", fq, rrAddr(rr), err)
			return nil, c.undoHost(ctx, call, w, ips, unlinked, err)
		}
		if did {
			unlinked = append(unlinked, rrAddr(rr))
		}
	}
	return ch, nil
}

// linkPTRs points the PTR of each of ips at fq, after fq got the
// addresses, and then removes those whose address fq no longer has: a
// writer that replaced the address in between found no PTR to remove. On
// failure it returns the addresses whose PTR it tried to write.
func (c *Client) linkPTRs(ctx context.Context, call Settings, t target, fq string, ips []netip.Addr, ch *Change) ([]netip.Addr, error) {
	for i, a := range ips {
		if err := c.setPTR(ctx, call, t, a, fq, ch); err != nil {
			return ips[:i+1], fmt.Errorf("%s: PTR of %s: %w", fq, a, err)
		}
	}
	if len(ch.Added) > 0 {
		if err := c.dropPTRs(ctx, call, t, fq, ips, ch); err != nil {
			c.log.Warn("ddns: add_host cannot check its PTRs against the name's addresses", "fqdn", fq, "err", err)
		}
	}
	return nil, nil
}

// setForward makes want the records of fq for each of types, adding to ch
// the records it adds. It returns what it changed, for undoing it, and the
// records it replaced.
func (c *Client) setForward(ctx context.Context, t target, fq string, want map[uint16][]dns.RR, types []uint16, ch *Change) (*hostWrite, []dns.RR, error) {
	var w *hostWrite
	var removed []dns.RR
	optimistic := true
	err := retryConflicts(ctx, fq, func() error {
		w = newHostWrite(t, fq)
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
				w.changed(typ, nil, want[typ])
			}
			w.ownerAdded = claimed
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
		w.ownerAdded = claimed
		var added []dns.RR
		for _, typ := range types {
			if sameSet(cur[typ], want[typ]) {
				continue
			}
			w.changed(typ, cur[typ], want[typ])
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
		if len(w.types) == 0 && !claimed {
			return nil
		}
		if err := c.update(ctx, t, m, claimed, fq); err != nil {
			return err
		}
		ch.add(added...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return w, removed, nil
}

// hostWrite is what the forward step of add_host or delete_host changed at
// a name, so that a failure of a later step can put it back.
type hostWrite struct {
	t  target
	fq string
	// types are the changed types; before and after hold, for each, the
	// records before the change and the ones it left (nil: none).
	types         []uint16
	before, after map[uint16][]dns.RR
	// ownerAdded and ownerRemoved say whether the change added or removed
	// this brine's owner TXT.
	ownerAdded, ownerRemoved bool
}

func newHostWrite(t target, fq string) *hostWrite {
	return &hostWrite{t: t, fq: fq, before: map[uint16][]dns.RR{}, after: map[uint16][]dns.RR{}}
}

func (w *hostWrite) changed(typ uint16, before, after []dns.RR) {
	w.types = append(w.types, typ)
	w.before[typ], w.after[typ] = before, after
}

// restore puts the records w changed back as they were, provided they are
// still what w left: a writer that changed them since has the last word.
func (c *Client) restore(ctx context.Context, w *hostWrite) error {
	if len(w.types) == 0 && !w.ownerAdded && !w.ownerRemoved {
		return nil
	}
	m := newUpdate(w.t.zone)
	for _, typ := range w.types {
		set := &dns.ANY{Hdr: dns.RR_Header{Name: w.fq, Rrtype: typ}}
		if len(w.after[typ]) == 0 {
			m.RRsetNotUsed([]dns.RR{set})
		} else {
			used(m, w.after[typ])
			m.RemoveRRset([]dns.RR{set})
		}
		m.Insert(copyRRs(w.before[typ]))
	}
	if w.ownerAdded {
		m.Remove([]dns.RR{c.ownerRR(w.fq, 0)})
	}
	if w.ownerRemoved {
		m.Insert([]dns.RR{c.ownerRR(w.fq, w.t.ttl)})
	}
	return c.send(ctx, w.t, m)
}

// undoHost puts back what a failed add_host or delete_host did before
// cause ended it: the forward records as w found them, no PTR of added for
// an address the name does not have after that, and the PTR of each
// address of removed that the name has again. The error wraps cause, and
// says what could not be undone, if anything.
func (c *Client) undoHost(ctx context.Context, call Settings, w *hostWrite, added, removed []netip.Addr, cause error) error {
	// A caller that gave up (cause may be its ctx ending) must not leave
	// half a registration behind; every exchange is bounded by the target's
	// timeout and retries.
	ctx = context.WithoutCancel(ctx)
	var failed []error
	if err := c.restore(ctx, w); err != nil {
		failed = append(failed, fmt.Errorf("restoring the records of %s: %w", w.fq, err))
	}
	if err := c.dropPTRs(ctx, call, w.t, w.fq, added, &Change{}); err != nil {
		failed = append(failed, err)
	}
	if len(removed) > 0 {
		have, err := c.hostAddrs(ctx, w.t, w.fq)
		if err != nil {
			failed = append(failed, err)
		}
		for _, a := range removed {
			if err == nil && containsData(have, addrRR(w.fq, 0, a)) {
				if perr := c.setPTR(ctx, call, w.t, a, w.fq, &Change{}); perr != nil {
					failed = append(failed, fmt.Errorf("restoring the PTR of %s: %w", a, perr))
				}
			}
		}
	}
	if len(failed) > 0 {
		// The undo's errors are told, not wrapped: the caller's errors.Is
		// is about why the call failed.
		return fmt.Errorf("%w; undoing the call failed too: %v", cause, joinErrors(failed))
	}
	return fmt.Errorf("%w (nothing changed: the call was undone)", cause)
}

// dropPTRs removes the PTRs to fq of those of ips that fq does not have.
// When fq's addresses cannot be read, nothing is removed.
func (c *Client) dropPTRs(ctx context.Context, call Settings, t target, fq string, ips []netip.Addr, ch *Change) error {
	if len(ips) == 0 {
		return nil
	}
	have, err := c.hostAddrs(ctx, t, fq)
	if err != nil {
		return err
	}
	var failed []error
	for _, a := range ips {
		if containsData(have, addrRR(fq, 0, a)) {
			continue
		}
		if _, err := c.removePTR(ctx, call, t, a, fq, ch); err != nil {
			failed = append(failed, fmt.Errorf("removing the PTR of %s: %w", a, err))
		}
	}
	return joinErrors(failed)
}

// errList is several errors on one line: errors.Join puts one per line,
// which breaks the one-line errors of events and logs.
type errList []error

func (l errList) Error() string {
	parts := make([]string, len(l))
	for i, err := range l {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (l errList) Unwrap() []error { return l }

// joinErrors returns nil for no error, the error itself for one, and an
// errList for more.
func joinErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errList(errs)
}

// hostAddrs reads fq's A and AAAA records.
func (c *Client) hostAddrs(ctx context.Context, t target, fq string) ([]dns.RR, error) {
	var have []dns.RR
	for _, typ := range []uint16{dns.TypeA, dns.TypeAAAA} {
		rrs, err := query(ctx, t, fq, typ)
		if err != nil {
			return nil, fmt.Errorf("reading the addresses of %s: %w", fq, err)
		}
		have = append(have, rrs...)
	}
	return have, nil
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
// (TXT, MX… stay), and each address only if it is still the one read. Like
// AddHost it is all or nothing: when a PTR cannot be removed, the forward
// records (and the PTRs already removed) are put back.
func (c *Client) DeleteHost(ctx context.Context, zone, name string, call Settings) (*Change, error) {
	k, err := c.prepare(zone, name, "", "", call, false)
	if err != nil {
		return nil, err
	}
	fq, t, ch := k.fq, k.t, k.ch
	var gone []dns.RR
	owned := false
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
		var err error
		if owned, err = c.mustOwn(ctx, t, m, fq); err != nil {
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
	w := newHostWrite(t, fq)
	w.ownerRemoved = owned
	for _, typ := range []uint16{dns.TypeA, dns.TypeAAAA} {
		var before []dns.RR
		for _, rr := range gone {
			if rr.Header().Rrtype == typ {
				before = append(before, rr)
			}
		}
		if before != nil {
			w.changed(typ, before, nil)
		}
	}
	ch.remove(gone...)
	ch.say("Deleted DNS record(s) of type 'A'")
	var unlinked []netip.Addr
	for _, rr := range gone {
		did, err := c.removePTR(ctx, call, t, rrAddr(rr), fq, ch)
		if err != nil {
			err = fmt.Errorf("%s: PTR of %s: %w", fq, rrAddr(rr), err)
			return nil, c.undoHost(ctx, call, w, nil, unlinked, err)
		}
		if did {
			unlinked = append(unlinked, rrAddr(rr))
		}
	}
	return ch, nil
}
