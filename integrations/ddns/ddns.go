// Package ddns keeps DNS in line with the machines that exist, by RFC 2136
// dynamic update, with Salt's ddns runner functions (add_host, delete_host,
// create, update, delete) and argument names, so Salt reaction files run
// unchanged. Where Salt's runner is blind, this one is careful:
//
//   - updates are TSIG-signed (hmac-sha256 by default; md5, sha1, sha224,
//     sha384, sha512), with keys from Salt's JSON keyring, a BIND key file or
//     the configuration;
//   - every change carries RFC 2136 prerequisites on what was read before
//     it, so a concurrent writer makes the update fail and be redone, never
//     clobbered;
//   - UDP, with TCP when the message is large or the answer truncated;
//     retries with backoff on timeout and SERVFAIL only; NOTAUTH, REFUSED,
//     NOTZONE and NXDOMAIN cannot change on a second try, so they end the
//     call at once with an error naming the zone, the server that answered
//     and what to fix;
//   - A for IPv4, AAAA for IPv6, each with its PTR in the most specific
//     reverse zone the server serves; add_host replaces a host's old
//     addresses and removes their PTRs; delete_host removes only the host's
//     A/AAAA and its PTRs, never other records at the name; both are all
//     or nothing: a call that fails leaves no PTR without its address;
//   - optionally (ownership), a TXT record heritage=brine,owner=<id> beside
//     every managed name, and no name owned by someone else is changed;
//   - optionally (Sync), a zone follows the mine without any reaction file,
//     reconciled from a signed AXFR when the master starts.
package ddns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// ErrNotOwner: ownership is on and the name belongs to someone else (it has
// records but no TXT heritage=brine,owner=<this owner>).
var ErrNotOwner = errors.New("name not owned by this brine")

// ErrConflict: the records kept changing under every attempt.
var ErrConflict = errors.New("concurrent changes")

// conflictAttempts bounds how often an update whose prerequisites failed is
// read again and redone.
const conflictAttempts = 10

// Client makes changes with the settings of a Config. It is safe for
// concurrent use.
type Client struct {
	cfg atomic.Pointer[Config]
	log *slog.Logger

	mu       sync.Mutex
	reverse  map[string]reverseEntry // PTR parent name -> zone
	batchers map[batchKey]*batcher
}

// Option configures a Client.
type Option func(*Client)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// New returns a client for cfg.
func New(cfg Config, opts ...Option) *Client {
	c := &Client{log: slog.Default(), reverse: map[string]reverseEntry{}, batchers: map[batchKey]*batcher{}}
	c.cfg.Store(&cfg)
	for _, o := range opts {
		o(c)
	}
	return c
}

// SetConfig replaces the configuration (on reload); calls under way finish
// with the one they started with where they already read it.
func (c *Client) SetConfig(cfg Config) {
	c.cfg.Store(&cfg)
	c.mu.Lock()
	clear(c.reverse)
	c.mu.Unlock()
}

func (c *Client) conf() *Config { return c.cfg.Load() }

// Change is what a call did: the records added and removed, and Salt's
// messages for them.
type Change struct {
	Zone string `json:"zone"`
	FQDN string `json:"fqdn"`
	// Added and Removed are records in zone-file form.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Messages are Salt's result strings, e.g. "Created record of type 'A':
	// web1.example.com. -> 10.0.0.1".
	Messages []string `json:"messages"`
}

func (ch *Change) add(rrs ...dns.RR) {
	for _, rr := range rrs {
		ch.Added = append(ch.Added, rr.String())
	}
}

func (ch *Change) remove(rrs ...dns.RR) {
	for _, rr := range rrs {
		ch.Removed = append(ch.Removed, rr.String())
	}
}

func (ch *Change) say(format string, args ...any) {
	ch.Messages = append(ch.Messages, fmt.Sprintf(format, args...))
}

// Changed reports whether any record was added or removed.
func (ch *Change) Changed() bool { return len(ch.Added)+len(ch.Removed) > 0 }

// FQDN returns the fully qualified name of name in zone. name may be short
// ("web1"), qualified without the final dot ("web1.example.com") or fully
// qualified ("web1.example.com."); "@" or "" is the zone itself. Unlike
// Salt's, a zone name inside a host name ("example.com-db") is not cut out.
func FQDN(zone, name string) (string, error) {
	zone = dns.CanonicalName(strings.TrimSpace(zone))
	if _, ok := dns.IsDomainName(zone); !ok || zone == "." {
		return "", fmt.Errorf("%w: zone %q is not a domain name", ErrConfig, zone)
	}
	n := strings.ToLower(strings.TrimSpace(name))
	bare := strings.TrimSuffix(zone, ".")
	var fq string
	switch {
	case n == "" || n == "@":
		fq = zone
	case strings.HasSuffix(n, "."):
		fq = n
	case n == bare || strings.HasSuffix(n, "."+bare):
		fq = n + "."
	default:
		fq = n + "." + zone
	}
	if _, ok := dns.IsDomainName(fq); !ok {
		return "", fmt.Errorf("%w: name %q is not a domain name", ErrConfig, name)
	}
	if !dns.IsSubDomain(zone, fq) {
		return "", fmt.Errorf("%w: name %q is not in zone %s", ErrConfig, name, bare)
	}
	return fq, nil
}

// ParseIPs reads addresses for add_host: one string, several separated by
// commas or spaces, or a list.
func ParseIPs(v any) ([]netip.Addr, error) {
	var items []string
	switch t := v.(type) {
	case string:
		items = strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' })
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%w: ip: %v is not an address", ErrConfig, x)
			}
			items = append(items, s)
		}
	case []string:
		items = t
	default:
		return nil, fmt.Errorf("%w: ip: want an address or a list of addresses, got %T", ErrConfig, v)
	}
	var out []netip.Addr
	for _, s := range items {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%w: ip: %q is not an IP address", ErrConfig, s)
		}
		out = append(out, a.Unmap())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: ip: no address given", ErrConfig)
	}
	return out, nil
}

// addrType is the record type holding a.
func addrType(a netip.Addr) uint16 {
	if a.Is4() {
		return dns.TypeA
	}
	return dns.TypeAAAA
}

func addrRR(name string, ttl uint32, a netip.Addr) dns.RR {
	h := dns.RR_Header{Name: name, Rrtype: addrType(a), Class: dns.ClassINET, Ttl: ttl}
	if a.Is4() {
		return &dns.A{Hdr: h, A: a.AsSlice()}
	}
	return &dns.AAAA{Hdr: h, AAAA: a.AsSlice()}
}

func rrAddr(rr dns.RR) netip.Addr {
	switch t := rr.(type) {
	case *dns.A:
		a, _ := netip.AddrFromSlice(t.A.To4())
		return a
	case *dns.AAAA:
		a, _ := netip.AddrFromSlice(t.AAAA)
		return a
	}
	return netip.Addr{}
}

// rdata is an RR's data in zone-file form, for comparisons that ignore TTL.
func rdata(rr dns.RR) string {
	h := rr.Header()
	return strings.TrimPrefix(rr.String(), h.String())
}

func containsData(set []dns.RR, rr dns.RR) bool {
	for _, x := range set {
		if x.Header().Rrtype == rr.Header().Rrtype && strings.EqualFold(rdata(x), rdata(rr)) {
			return true
		}
	}
	return false
}

// ownerText is the TXT brine keeps beside a name it owns.
func (c *Client) ownerText() string { return "heritage=brine,owner=" + c.conf().Owner }

func (c *Client) ownerRR(name string, ttl uint32) dns.RR {
	return &dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: ttl}, Txt: []string{c.ownerText()}}
}

// owns reports whether the TXT records include this brine's owner record.
func (c *Client) owns(txt []dns.RR) bool {
	for _, rr := range txt {
		if t, ok := rr.(*dns.TXT); ok && strings.Join(t.Txt, "") == c.ownerText() {
			return true
		}
	}
	return false
}

// claim adds to m what ownership requires before changing name: the owner
// TXT as a prerequisite when this brine owns it, or, for a name nobody
// uses, "name not in use" and the owner TXT itself. A name used by someone
// else is ErrNotOwner. claimed reports whether the TXT is being added.
func (c *Client) claim(m *dns.Msg, name string, ttl uint32, txt []dns.RR) (claimed bool, err error) {
	if !c.conf().Ownership {
		return false, nil
	}
	if c.owns(txt) {
		used(m, txt)
		return false, nil
	}
	if len(txt) > 0 {
		return false, fmt.Errorf("%s: %w", name, ErrNotOwner)
	}
	m.NameNotUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: name}}})
	m.Insert([]dns.RR{c.ownerRR(name, ttl)})
	return true, nil
}

// mustOwn, when ownership is on, reads name's TXT records, fails with
// ErrNotOwner unless this brine owns the name, and makes the records a
// prerequisite of m. It reports whether ownership is on.
func (c *Client) mustOwn(ctx context.Context, t target, m *dns.Msg, name string) (bool, error) {
	if !c.conf().Ownership {
		return false, nil
	}
	txt, err := query(ctx, t, name, dns.TypeTXT)
	if err != nil {
		return false, err
	}
	if !c.owns(txt) {
		return false, fmt.Errorf("%s: %w", name, ErrNotOwner)
	}
	used(m, txt)
	return true, nil
}

// update sends the UPDATE m (batched with concurrent ones), turning a
// failed "name not in use" prerequisite of a claim into ErrNotOwner: the
// name has records of someone else's.
func (c *Client) update(ctx context.Context, t target, m *dns.Msg, claimed bool, name string) error {
	err := c.send(ctx, t, m)
	var re *RcodeError
	if claimed && errors.As(err, &re) && re.Rcode == dns.RcodeYXDomain {
		return fmt.Errorf("%s has records not managed by this brine: %w", name, ErrNotOwner)
	}
	return err
}

// used adds "RRset exists (value dependent)" prerequisites for rrs to m,
// skipping records already there: a record listed twice would make the
// server's comparison of the whole RRset fail.
func used(m *dns.Msg, rrs []dns.RR) {
	var add []dns.RR
	for _, rr := range rrs {
		dup := slices.ContainsFunc(slices.Concat(m.Answer, add), func(x dns.RR) bool {
			return strings.EqualFold(x.Header().Name, rr.Header().Name) && containsData([]dns.RR{x}, rr)
		})
		if !dup {
			add = append(add, dns.Copy(rr))
		}
	}
	m.Used(add)
}

// copyRRs copies records, as the update helpers rewrite headers in place.
func copyRRs(rrs []dns.RR) []dns.RR {
	out := make([]dns.RR, len(rrs))
	for i, rr := range rrs {
		out[i] = dns.Copy(rr)
	}
	return out
}

// newUpdate starts an UPDATE for zone.
func newUpdate(zone string) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(zone)
	return m
}

// retryConflicts runs fn until it does not fail on a prerequisite, at most
// conflictAttempts times, with a short random pause between attempts so
// that competing writers interleave. Any other error ends it at once: only
// a failed prerequisite means the records changed and a fresh read may
// succeed (an NXDOMAIN that means "no such zone" is not one, see
// RcodeError.NoZone).
func retryConflicts(ctx context.Context, what string, fn func() error) error {
	var err error
	for range conflictAttempts {
		if err = fn(); !errors.Is(err, ErrPrerequisite) {
			return err
		}
		if werr := wait(ctx, time.Duration(2+rand.IntN(20))*time.Millisecond); werr != nil {
			return werr
		}
	}
	return fmt.Errorf("%s: %w after %d attempts: %w", what, ErrConflict, conflictAttempts, err)
}
