package ddns

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// checkName is the name a check's no-op update touches: deleting a record
// that does not exist proves the key may update the zone and changes
// nothing (the serial stays).
const checkName = "_brine-check"

// ZoneCheck is what Check found for one zone.
type ZoneCheck struct {
	Zone   string `json:"zone"`
	Server string `json:"server"`
	// Key names the TSIG key used ("" for unsigned), never its secret.
	Key string `json:"key"`
	// Serial is the zone's SOA serial as the server answered it.
	Serial uint32 `json:"serial"`
	// SOA, Update and Transfer are "ok" or the error of that step.
	SOA      string `json:"soa"`
	Update   string `json:"update"`
	Transfer string `json:"transfer"`
	// Records is the number of records a signed AXFR returned.
	Records int  `json:"records"`
	OK      bool `json:"ok"`
}

// Check verifies, for zone, that the server answers authoritatively, that
// the key may update it (a signed update that changes nothing), and that
// it may transfer it (a signed AXFR, which reconciling needs).
func (c *Client) Check(ctx context.Context, zone string) ZoneCheck {
	zone = dns.CanonicalName(zone)
	zc := ZoneCheck{Zone: zone, SOA: "not checked", Update: "not checked", Transfer: "not checked"}
	t, err := c.conf().target(zone, Settings{})
	zc.Server = t.server
	if err != nil {
		zc.SOA = err.Error()
		return zc
	}
	if t.key != nil {
		zc.Key = t.key.String()
	}
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeSOA)
	m.RecursionDesired = false
	plain := t // unsigned: is the zone served, apart from the key
	plain.key = nil
	r, err := exchange(ctx, plain, m)
	switch {
	case err != nil:
		zc.SOA = err.Error()
		return zc
	case !r.Authoritative || len(r.Answer) == 0:
		zc.SOA = fmt.Sprintf("%s is not authoritative for %s", t.server, zone)
		return zc
	}
	if soa, ok := r.Answer[0].(*dns.SOA); ok {
		zc.Serial = soa.Serial
	}
	zc.SOA = "ok"

	u := newUpdate(zone)
	u.RemoveRRset([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: checkName + "." + zone, Rrtype: dns.TypeTXT}}})
	if _, err := exchange(ctx, t, u); err != nil {
		zc.Update = err.Error()
	} else {
		zc.Update = "ok"
	}
	rrs, err := c.transfer(ctx, t)
	if err != nil {
		zc.Transfer = err.Error()
	} else {
		zc.Transfer, zc.Records = "ok", len(rrs)
	}
	zc.OK = zc.Update == "ok" && zc.Transfer == "ok"
	return zc
}

// Transfer reads a whole zone with a signed AXFR: the current state that a
// reconcile compares against.
func (c *Client) Transfer(ctx context.Context, zone string) ([]dns.RR, error) {
	t, err := c.conf().target(zone, Settings{})
	if err != nil {
		return nil, err
	}
	return c.transfer(ctx, t)
}

func (c *Client) transfer(ctx context.Context, t target) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetAxfr(t.zone)
	tr := &dns.Transfer{DialTimeout: t.timeout, ReadTimeout: t.timeout}
	if t.key != nil {
		m.SetTsig(t.key.Name, t.key.Algorithm, 300, time.Now().Unix())
		tr.TsigProvider = t.key
	}
	if d, ok := ctx.Deadline(); ok {
		tr.ReadTimeout = min(tr.ReadTimeout, time.Until(d))
	}
	ch, err := tr.In(m, t.server)
	if err != nil {
		return nil, fmt.Errorf("axfr %s at %s: %w", strings.TrimSuffix(t.zone, "."), t.server, err)
	}
	var out []dns.RR
	var first error
	for env := range ch {
		if env.Error != nil && first == nil {
			first = env.Error
		}
		out = append(out, env.RR...)
	}
	if first != nil {
		if strings.Contains(first.Error(), "rcode") {
			first = fmt.Errorf("%w (transfer refused: allow-transfer must include the key)", first)
		}
		if errors.Is(first, dns.ErrAuth) || errors.Is(first, dns.ErrSig) {
			first = fmt.Errorf("%w: %w", first, ErrNotAuth)
		}
		return nil, fmt.Errorf("axfr %s at %s: %w", strings.TrimSuffix(t.zone, "."), t.server, first)
	}
	return out, nil
}
