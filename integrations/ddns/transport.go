package ddns

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/internal/backoff"
)

// Errors a call can end with; test them with errors.Is. An *RcodeError
// matches the sentinel of its rcode.
var (
	// ErrNotAuth: NOTAUTH, the server rejected the TSIG key (wrong secret,
	// unknown key name, wrong algorithm) or is not authoritative for the zone.
	ErrNotAuth = errors.New("NOTAUTH")
	// ErrRefused: REFUSED, the server's policy does not allow this update
	// (no key, or the key may not change this name or type).
	ErrRefused = errors.New("REFUSED")
	// ErrNotZone: NOTZONE, the name is not in the zone the update was sent to.
	ErrNotZone = errors.New("NOTZONE")
	// ErrServFail: SERVFAIL after every retry.
	ErrServFail = errors.New("SERVFAIL")
	// ErrPrerequisite: a prerequisite failed (YXDOMAIN, YXRRSET, NXDOMAIN,
	// NXRRSET): someone changed the records since they were read.
	ErrPrerequisite = errors.New("prerequisite failed")
	// ErrUnreachable: no answer from the server after every retry.
	ErrUnreachable = errors.New("name server unreachable")
)

// RcodeError is an error answer from the name server.
type RcodeError struct {
	Op     string // "update" or "query"
	Zone   string
	Server string
	Rcode  int
	// Key names the TSIG key the request was signed with ("" unsigned).
	Key string
	// TSIGError is the TSIG error of a NOTAUTH answer (BADKEY, BADSIG,
	// BADTIME), if the server gave one.
	TSIGError uint16
}

func (e *RcodeError) Error() string {
	rc := dns.RcodeToString[e.Rcode]
	if e.TSIGError != 0 {
		rc += " (" + dns.RcodeToString[int(e.TSIGError)] + ")"
	}
	msg := fmt.Sprintf("%s %s at %s: %s", e.Op, strings.TrimSuffix(e.Zone, "."), e.Server, rc)
	key := "key " + e.Key
	if e.Key == "" {
		key = "no key"
	}
	switch {
	case e.Rcode == dns.RcodeNotAuth && e.TSIGError == dns.RcodeBadTime:
		msg += ": the server's clock and this host's differ by more than 5 minutes (" + key + ")"
	case e.Rcode == dns.RcodeNotAuth:
		msg += ": the server rejected " + key + " (check keyname, keyfile and keyalgorithm) or is not authoritative for the zone"
	case e.Rcode == dns.RcodeRefused:
		msg += ": the server's policy refuses this update with " + key + " (unsigned, or the key may not change this name or type)"
	case e.Rcode == dns.RcodeNotZone:
		msg += ": the name is not in this zone"
	}
	return msg
}

// Is matches the sentinel of the rcode.
func (e *RcodeError) Is(target error) bool {
	switch e.Rcode {
	case dns.RcodeNotAuth:
		return target == ErrNotAuth
	case dns.RcodeRefused:
		return target == ErrRefused
	case dns.RcodeNotZone:
		return target == ErrNotZone
	case dns.RcodeServerFailure:
		return target == ErrServFail
	case dns.RcodeYXDomain, dns.RcodeYXRrset, dns.RcodeNameError, dns.RcodeNXRrset:
		return target == ErrPrerequisite
	}
	return false
}

// now is the clock TSIG signatures carry (a variable so that a test can
// skew it).
var now = time.Now

// maxUDP is the largest message sent over UDP; larger ones go over TCP.
const maxUDP = 512

// exchange sends m to t's server and returns a successful answer: signed
// when t has a key, over UDP unless the message is large or the answer
// truncated, retried with backoff on timeout, network error or SERVFAIL.
// Queries accept NXDOMAIN; anything else but NOERROR is an *RcodeError.
func exchange(ctx context.Context, t target, m *dns.Msg) (*dns.Msg, error) {
	op := "query"
	if m.Opcode == dns.OpcodeUpdate {
		op = "update"
	}
	var last error
	for attempt := 0; attempt <= t.retries; attempt++ {
		if attempt > 0 {
			if err := wait(ctx, backoff.Delay(100*time.Millisecond, 2*time.Second, attempt)); err != nil {
				return nil, err
			}
		}
		r, err := exchangeOnce(ctx, t, m)
		if err == nil {
			switch {
			case r.Rcode == dns.RcodeSuccess, op == "query" && r.Rcode == dns.RcodeNameError:
				return r, nil
			case r.Rcode == dns.RcodeServerFailure:
				last = &RcodeError{Op: op, Zone: t.zone, Server: t.server, Rcode: r.Rcode}
				continue
			}
			return r, rcodeError(op, t, r)
		}
		if r != nil && r.Rcode != dns.RcodeSuccess {
			// An unsigned or badly signed error answer to a signed request
			// (BIND's NOTAUTH for a wrong secret) still says what went wrong.
			return r, rcodeError(op, t, r)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, dns.ErrAuth) || errors.Is(err, dns.ErrSig) || errors.Is(err, dns.ErrSecret) {
			return nil, fmt.Errorf("%s %s at %s: the answer's TSIG signature does not verify: %w", op, t.zone, t.server, ErrNotAuth)
		}
		last = err
	}
	if errors.Is(last, ErrServFail) {
		return nil, fmt.Errorf("after %d attempts: %w", t.retries+1, last)
	}
	return nil, fmt.Errorf("%s %s at %s: no answer after %d attempts (%v): %w",
		op, strings.TrimSuffix(t.zone, "."), t.server, t.retries+1, last, ErrUnreachable)
}

func rcodeError(op string, t target, r *dns.Msg) error {
	e := &RcodeError{Op: op, Zone: t.zone, Server: t.server, Rcode: r.Rcode}
	if t.key != nil {
		e.Key = t.key.String()
	}
	if ts := r.IsTsig(); ts != nil {
		e.TSIGError = ts.Error
	}
	return e
}

func exchangeOnce(ctx context.Context, t target, m *dns.Msg) (*dns.Msg, error) {
	m = m.Copy()
	c := &dns.Client{Net: "udp", Timeout: t.timeout}
	if t.key != nil {
		m.SetTsig(t.key.Name, t.key.Algorithm, 300, now().Unix())
		c.TsigProvider = t.key
	}
	if m.Len() > maxUDP {
		c.Net = "tcp"
	}
	r, _, err := c.ExchangeContext(ctx, m, t.server)
	if err == nil && r.Truncated && c.Net == "udp" {
		c.Net = "tcp"
		r, _, err = c.ExchangeContext(ctx, m, t.server)
	}
	return r, err
}

// wait sleeps d, or returns ctx's error when it ends first.
func wait(ctx context.Context, d time.Duration) error {
	if !backoff.Sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}

// query returns the records of type qtype at name, following nothing: the
// answer of the zone's primary, which is what updates are checked against.
func query(ctx context.Context, t target, name string, qtype uint16) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = false
	r, err := exchange(ctx, t, m)
	if err != nil {
		return nil, err
	}
	var out []dns.RR
	for _, rr := range r.Answer {
		h := rr.Header()
		if (h.Rrtype == qtype || qtype == dns.TypeANY) && strings.EqualFold(h.Name, name) {
			out = append(out, rr)
		}
	}
	return out, nil
}
