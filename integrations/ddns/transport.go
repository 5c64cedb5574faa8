package ddns

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/internal/backoff"
)

// Errors a call can end with; test them with errors.Is. An *RcodeError
// matches the sentinel of its rcode, and ErrKeyRejected or ErrNoZone when
// the answer says which of the two a NOTAUTH or NXDOMAIN means.
var (
	// ErrNotAuth: NOTAUTH, the server rejected the TSIG key (wrong secret,
	// unknown key name, wrong algorithm, clock skew) or is not
	// authoritative for the zone.
	ErrNotAuth = errors.New("NOTAUTH")
	// ErrKeyRejected: the server rejected the request's TSIG signature
	// (NOTAUTH with the TSIG error BADKEY, BADSIG or BADTIME).
	ErrKeyRejected = errors.New("TSIG key rejected")
	// ErrNoZone: the server does not serve the zone the update was sent to
	// (NOTAUTH without a TSIG error, as BIND answers, or NXDOMAIN to an
	// update that had no "name is in use" prerequisite, as some other
	// servers answer): the zone name or the nameserver is wrong.
	ErrNoZone = errors.New("zone not served")
	// ErrRefused: REFUSED, the server's policy does not allow this update
	// (no key, or the key may not change this name or type).
	ErrRefused = errors.New("REFUSED")
	// ErrNotZone: NOTZONE, the name is not in the zone the update was sent to.
	ErrNotZone = errors.New("NOTZONE")
	// ErrServFail: SERVFAIL after every retry.
	ErrServFail = errors.New("SERVFAIL")
	// ErrPrerequisite: a prerequisite failed (YXDOMAIN, YXRRSET, NXRRSET,
	// or NXDOMAIN to an update with a "name is in use" prerequisite):
	// someone changed the records since they were read.
	ErrPrerequisite = errors.New("prerequisite failed")
	// ErrUnreachable: no answer from the server after every retry.
	ErrUnreachable = errors.New("name server unreachable")
)

// RcodeError is an error answer from the name server. Its message names
// the zone, the server that answered and what the answer means for whoever
// runs that server, since an operator reading "NOTAUTH" alone cannot tell a
// wrong secret from a wrong nameserver.
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
	// NoZone marks an NXDOMAIN answer to an update without a "name is in
	// use" prerequisite: it cannot be a failed prerequisite, so it means
	// the server has no such zone.
	NoZone bool
}

func (e *RcodeError) Error() string {
	rc := dns.RcodeToString[e.Rcode]
	if rc == "" {
		rc = "rcode " + strconv.Itoa(e.Rcode)
	}
	if e.TSIGError != 0 {
		rc += " (" + dns.RcodeToString[int(e.TSIGError)] + ")"
	}
	zone := strings.TrimSuffix(e.Zone, ".")
	msg := fmt.Sprintf("%s %s at %s: %s", e.Op, zone, e.Server, rc)
	if m := e.meaning(zone); m != "" {
		msg += ": " + m
	}
	return msg
}

// meaning says what the answer means and what to check.
func (e *RcodeError) meaning(zone string) string {
	key := "key " + e.Key
	if e.Key == "" {
		key = "no key"
	}
	update := e.Op == "update"
	switch e.Rcode {
	case dns.RcodeNotAuth:
		switch e.TSIGError {
		case 0:
			return "the server is not authoritative for " + zone + " (it does not serve that zone: check the zone name and the nameserver)"
		case dns.RcodeBadTime:
			return "the server's clock and this host's differ by more than 5 minutes (" + key + ")"
		case dns.RcodeBadKey:
			return "the server does not know " + key + " (check keyname and keyalgorithm against the server's key statement)"
		case dns.RcodeBadSig:
			return "the server rejected the signature of " + key + ": the secret differs from the server's (check keyfile)"
		}
		return "the server rejected " + key + " (check keyname, keyfile and keyalgorithm)"
	case dns.RcodeRefused:
		switch {
		case !update:
			return "the server refuses to answer for " + zone + " (it does not serve that zone, or does not answer this host)"
		case e.Key == "":
			return "the server refuses unsigned updates to " + zone + ": no key was used (set keyname and keyfile)"
		}
		return "the server's policy does not let " + key + " make this change in " + zone + " (update-policy or allow-update)"
	case dns.RcodeNotZone:
		return "a name in the update is not in zone " + zone
	case dns.RcodeNameError:
		if e.NoZone {
			return "the server has no zone " + zone + " (check the zone name and the nameserver)"
		}
		return "a prerequisite failed: a name the update expected is gone (changed concurrently)"
	case dns.RcodeYXDomain, dns.RcodeYXRrset, dns.RcodeNXRrset:
		return "a prerequisite failed: the records changed since they were read"
	case dns.RcodeServerFailure:
		return "the server failed to process the request (see its log)"
	case dns.RcodeNotImplemented:
		if update {
			return "the server does not implement dynamic update"
		}
	case dns.RcodeFormatError:
		return "the server could not parse the request"
	}
	return ""
}

// Is matches the sentinel of the rcode, and for NOTAUTH and NXDOMAIN the
// sentinel of what the answer means.
func (e *RcodeError) Is(target error) bool {
	switch e.Rcode {
	case dns.RcodeNotAuth:
		if e.TSIGError != 0 {
			return target == ErrNotAuth || target == ErrKeyRejected
		}
		return target == ErrNotAuth || target == ErrNoZone
	case dns.RcodeRefused:
		return target == ErrRefused
	case dns.RcodeNotZone:
		return target == ErrNotZone
	case dns.RcodeServerFailure:
		return target == ErrServFail
	case dns.RcodeNameError:
		if e.NoZone {
			return target == ErrNoZone
		}
		return target == ErrPrerequisite
	case dns.RcodeYXDomain, dns.RcodeYXRrset, dns.RcodeNXRrset:
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
// truncated. Only what may pass by itself is retried, with backoff: a
// timeout, a network error, SERVFAIL. Any other error answer (NOTAUTH,
// REFUSED, NOTZONE, NXDOMAIN to an update) would be the same on every
// attempt, so it is returned at once as an *RcodeError. Queries accept
// NXDOMAIN (the name has no records).
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
				last = rcodeError(op, t, m, r)
				continue
			}
			return r, rcodeError(op, t, m, r)
		}
		if r != nil && r.Rcode != dns.RcodeSuccess {
			// An unsigned or badly signed error answer to a signed request
			// (BIND's NOTAUTH for a wrong secret, or for a zone it does not
			// serve) still says what went wrong.
			return r, rcodeError(op, t, m, r)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, dns.ErrAuth) || errors.Is(err, dns.ErrSig) || errors.Is(err, dns.ErrSecret) {
			return nil, fmt.Errorf("%s %s at %s: the answer's TSIG signature does not verify: %w",
				op, strings.TrimSuffix(t.zone, "."), t.server, ErrNotAuth)
		}
		last = err
	}
	if errors.Is(last, ErrServFail) {
		return nil, fmt.Errorf("%w (after %d attempts)", last, t.retries+1)
	}
	return nil, fmt.Errorf("%s %s at %s: no answer after %d attempts (%v): %w",
		op, strings.TrimSuffix(t.zone, "."), t.server, t.retries+1, last, ErrUnreachable)
}

// rcodeError describes the error answer r to the request m.
func rcodeError(op string, t target, m, r *dns.Msg) error {
	e := &RcodeError{Op: op, Zone: t.zone, Server: t.server, Rcode: r.Rcode}
	if t.key != nil {
		e.Key = t.key.String()
	}
	if ts := r.IsTsig(); ts != nil {
		e.TSIGError = ts.Error
	}
	if op == "update" && r.Rcode == dns.RcodeNameError {
		e.NoZone = !namePrerequisite(m)
	}
	return e
}

// namePrerequisite reports whether the update m has a "name is in use"
// prerequisite (RFC 2136 2.4.4), the only one whose failure is NXDOMAIN.
func namePrerequisite(m *dns.Msg) bool {
	for _, rr := range m.Answer {
		h := rr.Header()
		if h.Class == dns.ClassANY && h.Rrtype == dns.TypeANY {
			return true
		}
	}
	return false
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
