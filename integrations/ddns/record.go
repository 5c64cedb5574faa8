package ddns

import (
	"context"
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// parseRR builds one record from Salt's (rdtype, data) arguments.
func parseRR(fqdn string, ttl uint32, rdtype, data string) (dns.RR, uint16, error) {
	typ, ok := dns.StringToType[strings.ToUpper(strings.TrimSpace(rdtype))]
	if !ok {
		return nil, 0, fmt.Errorf("%w: rdtype %q is not a DNS record type", ErrConfig, rdtype)
	}
	if data == "" {
		return nil, typ, nil
	}
	rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", fqdn, ttl, dns.TypeToString[typ], data))
	if err != nil || rr == nil {
		return nil, typ, fmt.Errorf("%w: data %q is not valid %s data: %v", ErrConfig, data, dns.TypeToString[typ], err)
	}
	return rr, typ, nil
}

// recordCall is one call, resolved: the name, the zone's target, the
// record (nil without data) and its type (0 without rdtype).
type recordCall struct {
	fq  string
	t   target
	ch  *Change
	rr  dns.RR
	typ uint16
}

// prepare resolves a call's name, target and record (for create, update
// and delete; add_host and delete_host pass no rdtype); needData makes data
// (and so rdtype) required.
func (c *Client) prepare(zone, name, rdtype, data string, s Settings, needData bool) (*recordCall, error) {
	fq, err := FQDN(zone, name)
	if err != nil {
		return nil, err
	}
	t, err := c.conf().target(zone, s)
	if err != nil {
		return nil, err
	}
	k := &recordCall{fq: fq, t: t, ch: &Change{Zone: t.zone, FQDN: fq}}
	switch {
	case rdtype != "":
		if k.rr, k.typ, err = parseRR(fq, t.ttl, rdtype, data); err != nil {
			return nil, err
		}
	case data != "":
		return nil, fmt.Errorf("%w: data given without rdtype", ErrConfig)
	}
	if needData && k.rr == nil {
		return nil, fmt.Errorf("%w: data: missing", ErrConfig)
	}
	return k, nil
}

// ownerTXT reads name's TXT records when ownership is on.
func (c *Client) ownerTXT(ctx context.Context, t target, name string) ([]dns.RR, error) {
	if !c.conf().Ownership {
		return nil, nil
	}
	return query(ctx, t, name, dns.TypeTXT)
}

// Create adds one record, Salt's ddns.create: nothing happens when a record
// with the same data exists.
func (c *Client) Create(ctx context.Context, zone, name, rdtype, data string, s Settings) (*Change, error) {
	k, err := c.prepare(zone, name, rdtype, data, s, true)
	if err != nil {
		return nil, err
	}
	fq, t, ch, rr, typ := k.fq, k.t, k.ch, k.rr, k.typ
	err = retryConflicts(ctx, fq, func() error {
		cur, err := query(ctx, t, fq, typ)
		if err != nil {
			return err
		}
		if containsData(cur, rr) {
			ch.Messages = []string{fmt.Sprintf("Record of type '%s' already exists with ttl of %d", dns.TypeToString[typ], cur[0].Header().Ttl)}
			return nil
		}
		txt, err := c.ownerTXT(ctx, t, fq)
		if err != nil {
			return err
		}
		m := newUpdate(t.zone)
		claimed, err := c.claim(m, fq, t.ttl, txt)
		if err != nil {
			return err
		}
		if len(cur) == 0 {
			m.RRsetNotUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: fq, Rrtype: typ}}})
		} else {
			used(m, cur)
		}
		m.Insert([]dns.RR{dns.Copy(rr)})
		if err := c.update(ctx, t, m, claimed, fq); err != nil {
			return err
		}
		ch.add(rr)
		ch.Messages = []string{fmt.Sprintf("Created record of type '%s': %s -> %s", dns.TypeToString[typ], fq, data)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// Update changes an existing record, Salt's ddns.update: nothing is done
// when no record of the type exists or the same data and TTL are there;
// with replace the RRset becomes this one record, without it the record is
// added (and the RRset takes its TTL).
func (c *Client) Update(ctx context.Context, zone, name, rdtype, data string, replace bool, s Settings) (*Change, error) {
	k, err := c.prepare(zone, name, rdtype, data, s, true)
	if err != nil {
		return nil, err
	}
	fq, t, ch, rr, typ := k.fq, k.t, k.ch, k.rr, k.typ
	tname := dns.TypeToString[typ]
	err = retryConflicts(ctx, fq, func() error {
		ch.Added, ch.Removed = nil, nil
		cur, err := query(ctx, t, fq, typ)
		if err != nil {
			return err
		}
		if len(cur) == 0 {
			ch.Messages = []string{"No matching DNS record(s) found"}
			return nil
		}
		if containsData(cur, rr) && cur[0].Header().Ttl == t.ttl && (!replace || len(cur) == 1) {
			ch.Messages = []string{fmt.Sprintf("Record of type '%s' already present with ttl of %d", tname, t.ttl)}
			return nil
		}
		txt, err := c.ownerTXT(ctx, t, fq)
		if err != nil {
			return err
		}
		m := newUpdate(t.zone)
		if _, err := c.claim(m, fq, t.ttl, txt); err != nil {
			return err
		}
		used(m, cur)
		if replace {
			m.RemoveRRset([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: fq, Rrtype: typ}}})
			for _, x := range cur {
				if !containsData([]dns.RR{rr}, x) {
					ch.remove(x)
				}
			}
		}
		m.Insert([]dns.RR{dns.Copy(rr)})
		if err := c.send(ctx, t, m); err != nil {
			return err
		}
		ch.add(rr)
		ch.Messages = []string{fmt.Sprintf("Updated record of type '%s': %s -> %s", tname, fq, data)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// Delete removes records, Salt's ddns.delete: every record of the name
// (no rdtype), an RRset (rdtype), or one record (rdtype and data). With
// ownership on, this brine's owner TXT is kept unless the whole name goes.
func (c *Client) Delete(ctx context.Context, zone, name, rdtype, data string, s Settings) (*Change, error) {
	k, err := c.prepare(zone, name, rdtype, data, s, false)
	if err != nil {
		return nil, err
	}
	fq, t, ch, rr, qtype := k.fq, k.t, k.ch, k.rr, k.typ
	if qtype == 0 {
		qtype = dns.TypeANY
	}
	err = retryConflicts(ctx, fq, func() error {
		ch.Removed = nil
		cur, err := query(ctx, t, fq, qtype)
		if err != nil {
			return err
		}
		var gone []dns.RR
		for _, x := range cur {
			if (rr == nil || containsData([]dns.RR{rr}, x)) && !(qtype != dns.TypeANY && c.isOwnerRR(x)) {
				gone = append(gone, x)
			}
		}
		if len(gone) == 0 {
			return nil
		}
		m := newUpdate(t.zone)
		if _, err := c.mustOwn(ctx, t, m, fq); err != nil {
			return err
		}
		if qtype == dns.TypeANY {
			m.RemoveName([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: fq}}})
		} else {
			used(m, cur)
			m.Remove(copyRRs(gone))
		}
		if err := c.send(ctx, t, m); err != nil {
			return err
		}
		ch.remove(gone...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ch.Removed) == 0 {
		ch.say("No matching DNS record(s) found")
	} else {
		ch.say("Deleted DNS record(s)")
	}
	return ch, nil
}

func (c *Client) isOwnerRR(rr dns.RR) bool {
	return c.conf().Ownership && c.owns([]dns.RR{rr})
}
