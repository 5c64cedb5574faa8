package ddns

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/integrations/ddns/named"
)

func TestNotZoneFromBIND(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := named.Start(ctx, named.Config{Zones: []string{"example.test"}, Keys: []named.Key{{Name: "k"}}})
	if err != nil {
		t.Fatalf("starting BIND: %v", err)
	}
	defer s.Close()
	key, err := NewKey("k", "hmac-sha256", s.Key("k").Secret)
	if err != nil {
		t.Fatal(err)
	}
	tg := target{zone: "example.test.", server: s.Addr, key: key, timeout: 2 * time.Second}
	m := newUpdate("example.test.")
	rr, _ := dns.NewRR("web1.elsewhere.test. 60 IN A 10.0.0.1")
	m.Insert([]dns.RR{rr})
	_, err = exchange(ctx, tg, m)
	var re *RcodeError
	if !errors.Is(err, ErrNotZone) || !errors.As(err, &re) || re.Op != "update" {
		t.Fatalf("err %v, want NOTZONE", err)
	}
}

// flaky answers SERVFAIL to the first failures requests, then NOERROR. BIND
// cannot be made to fail transiently on cue, so the retry policy on
// SERVFAIL is checked against this scripted server.
func flaky(t *testing.T, failures int32) (addr string, calls *atomic.Int32) {
	t.Helper()
	calls = new(atomic.Int32)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if calls.Add(1) <= failures {
			m.Rcode = dns.RcodeServerFailure
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String(), calls
}

func TestRetriesOnServFail(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failures  int32
		retries   int
		wantErr   error
		wantCalls int32
	}{
		{"recovers", 2, 3, nil, 3},
		{"gives up", 10, 2, ErrServFail, 3},
		{"no retries", 1, 0, ErrServFail, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, calls := flaky(t, tc.failures)
			tg := target{zone: "example.test.", server: addr, timeout: time.Second, retries: tc.retries}
			m := new(dns.Msg)
			m.SetQuestion("example.test.", dns.TypeSOA)
			_, err := exchange(context.Background(), tg, m)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if calls.Load() != tc.wantCalls {
				t.Errorf("%d requests, want %d", calls.Load(), tc.wantCalls)
			}
		})
	}
}

func TestTimeoutIsRetriedThenUnreachable(t *testing.T) {
	// A UDP socket that never answers.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	tg := target{zone: "example.test.", server: pc.LocalAddr().String(), timeout: 100 * time.Millisecond, retries: 2}
	m := new(dns.Msg)
	m.SetQuestion("example.test.", dns.TypeSOA)
	start := time.Now()
	_, err = exchange(context.Background(), tg, m)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err %v", err)
	}
	// Three attempts of 100 ms each plus two backoffs of at least 50 ms.
	if d := time.Since(start); d < 350*time.Millisecond {
		t.Errorf("gave up after %v: not retried", d)
	}
	// A cancelled context stops the retries at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := exchange(ctx, tg, m); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestClockSkew: BIND refuses a signature from a clock an hour off with
// BADTIME, and the error says to look at the clocks.
func TestClockSkew(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := named.Start(ctx, named.Config{Zones: []string{"example.test"}, Keys: []named.Key{{Name: "k"}}})
	if err != nil {
		t.Fatalf("starting BIND: %v", err)
	}
	defer s.Close()
	now = func() time.Time { return time.Now().Add(time.Hour) }
	defer func() { now = time.Now }()
	host, port, _ := net.SplitHostPort(s.Addr)
	p, _ := strconv.Atoi(port)
	c := New(Config{Settings: Settings{Nameserver: host, Port: p, Keyname: "k"}, Keys: map[string]InlineKey{"k": {Secret: s.Key("k").Secret}}})
	_, err = c.Create(ctx, "example.test", "skew", "TXT", `"x"`, Settings{})
	var re *RcodeError
	if !errors.Is(err, ErrNotAuth) || !errors.As(err, &re) || re.TSIGError != dns.RcodeBadTime || !strings.Contains(err.Error(), "clock") {
		t.Fatalf("err %v, want NOTAUTH (BADTIME) about clocks", err)
	}
}

// TestRcodeErrorMeaning: each error answer says what it means for whoever
// runs the server, and matches the sentinels of that meaning only.
func TestRcodeErrorMeaning(t *testing.T) {
	all := []error{ErrNotAuth, ErrKeyRejected, ErrNoZone, ErrRefused, ErrNotZone, ErrServFail, ErrPrerequisite}
	for _, tc := range []struct {
		name string
		err  *RcodeError
		want []string // in the message
		not  []string // not in the message
		is   []error  // the sentinels it matches, of all
	}{
		{"NOTAUTH, zone not served", &RcodeError{Op: "update", Rcode: dns.RcodeNotAuth, Key: "k"},
			[]string{"NOTAUTH", "not authoritative for example.test", "check the zone name and the nameserver"}, []string{"reject", "key"},
			[]error{ErrNotAuth, ErrNoZone}},
		{"NOTAUTH, unknown key", &RcodeError{Op: "update", Rcode: dns.RcodeNotAuth, Key: "k", TSIGError: dns.RcodeBadKey},
			[]string{"NOTAUTH (BADKEY)", "does not know key k"}, []string{"authoritative"},
			[]error{ErrNotAuth, ErrKeyRejected}},
		{"NOTAUTH, wrong secret", &RcodeError{Op: "update", Rcode: dns.RcodeNotAuth, Key: "k", TSIGError: dns.RcodeBadSig},
			[]string{"NOTAUTH (BADSIG)", "rejected the signature of key k", "secret"}, []string{"authoritative"},
			[]error{ErrNotAuth, ErrKeyRejected}},
		{"NOTAUTH, clock skew", &RcodeError{Op: "update", Rcode: dns.RcodeNotAuth, Key: "k", TSIGError: dns.RcodeBadTime},
			[]string{"NOTAUTH (BADTIME)", "clock"}, []string{"authoritative"},
			[]error{ErrNotAuth, ErrKeyRejected}},
		{"REFUSED, no key", &RcodeError{Op: "update", Rcode: dns.RcodeRefused},
			[]string{"REFUSED", "refuses unsigned updates to example.test", "no key was used"}, nil,
			[]error{ErrRefused}},
		{"REFUSED, key not allowed", &RcodeError{Op: "update", Rcode: dns.RcodeRefused, Key: "k"},
			[]string{"REFUSED", "does not let key k make this change in example.test", "update-policy"}, []string{"unsigned"},
			[]error{ErrRefused}},
		{"REFUSED query", &RcodeError{Op: "query", Rcode: dns.RcodeRefused, Key: "k"},
			[]string{"query example.test", "refuses to answer for example.test", "does not serve"}, []string{"update"},
			[]error{ErrRefused}},
		{"NOTZONE", &RcodeError{Op: "update", Rcode: dns.RcodeNotZone},
			[]string{"NOTZONE", "not in zone example.test"}, nil,
			[]error{ErrNotZone}},
		{"NXDOMAIN, no such zone", &RcodeError{Op: "update", Rcode: dns.RcodeNameError, NoZone: true},
			[]string{"NXDOMAIN", "has no zone example.test"}, []string{"prerequisite"},
			[]error{ErrNoZone}},
		{"NXDOMAIN, prerequisite", &RcodeError{Op: "update", Rcode: dns.RcodeNameError},
			[]string{"NXDOMAIN", "prerequisite failed"}, []string{"no zone"},
			[]error{ErrPrerequisite}},
		{"YXRRSET", &RcodeError{Op: "update", Rcode: dns.RcodeYXRrset},
			[]string{"YXRRSET", "changed since they were read"}, nil,
			[]error{ErrPrerequisite}},
		{"SERVFAIL", &RcodeError{Op: "update", Rcode: dns.RcodeServerFailure},
			[]string{"SERVFAIL", "failed to process"}, nil,
			[]error{ErrServFail}},
		{"NOTIMP", &RcodeError{Op: "update", Rcode: dns.RcodeNotImplemented},
			[]string{"NOTIMP", "does not implement dynamic update"}, nil,
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.err.Zone, tc.err.Server = "example.test.", "192.0.2.53:53"
			msg := tc.err.Error()
			for _, s := range append([]string{tc.err.Op + " example.test at 192.0.2.53:53: "}, tc.want...) {
				if !strings.Contains(msg, s) {
					t.Errorf("%q lacks %q", msg, s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(msg, s) {
					t.Errorf("%q has %q", msg, s)
				}
			}
			for _, sentinel := range all {
				if got, want := errors.Is(tc.err, sentinel), slices.Contains(tc.is, sentinel); got != want {
					t.Errorf("errors.Is(%v) = %v, want %v", sentinel, got, want)
				}
			}
		})
	}
}

// answering is a name server that answers every UPDATE with rcode after
// delay and every query with NXDOMAIN, as a server without the zone may,
// and counts the UPDATEs. BIND never answers an UPDATE with NXDOMAIN, so
// that case is checked against this one.
func answering(t *testing.T, rcode int, delay time.Duration) (addr string, updates *atomic.Int32) {
	t.Helper()
	updates = new(atomic.Int32)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		if r.Opcode == dns.OpcodeUpdate {
			updates.Add(1)
			time.Sleep(delay)
			m.SetRcode(r, rcode)
		} else {
			m.SetRcode(r, dns.RcodeNameError)
		}
		w.WriteMsg(m)
	})}
	// The default rejects UPDATEs with NOTIMP before the handler sees them.
	srv.MsgAcceptFunc = func(dns.Header) dns.MsgAcceptAction { return dns.MsgAccept }
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String(), updates
}

// TestFinalAnswersAreNotRetried: an answer that would be the same on a
// second try ends the exchange at once; only SERVFAIL is tried again.
func TestFinalAnswersAreNotRetried(t *testing.T) {
	nameUsed := func(m *dns.Msg) { m.NameUsed([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: "web1.example.test."}}}) }
	for _, tc := range []struct {
		name    string
		rcode   int
		prereq  func(*dns.Msg)
		want    error
		updates int32
	}{
		{"NOTAUTH", dns.RcodeNotAuth, nil, ErrNoZone, 1},
		{"REFUSED", dns.RcodeRefused, nil, ErrRefused, 1},
		{"NOTZONE", dns.RcodeNotZone, nil, ErrNotZone, 1},
		{"NXDOMAIN", dns.RcodeNameError, nil, ErrNoZone, 1},
		{"NXDOMAIN on a name-in-use prerequisite", dns.RcodeNameError, nameUsed, ErrPrerequisite, 1},
		{"YXRRSET", dns.RcodeYXRrset, nil, ErrPrerequisite, 1},
		{"SERVFAIL", dns.RcodeServerFailure, nil, ErrServFail, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, updates := answering(t, tc.rcode, 0)
			tg := target{zone: "example.test.", server: addr, timeout: time.Second, retries: 2}
			m := newUpdate("example.test.")
			if tc.prereq != nil {
				tc.prereq(m)
			}
			rr, _ := dns.NewRR("web1.example.test. 60 IN A 10.0.0.1")
			m.Insert([]dns.RR{rr})
			_, err := exchange(context.Background(), tg, m)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), "update example.test at "+addr) {
				t.Errorf("%q does not name the zone and the server", err)
			}
			if n := updates.Load(); n != tc.updates {
				t.Errorf("%d UPDATEs sent, want %d", n, tc.updates)
			}
		})
	}
}

// TestNXDomainUpdateFailsFast: a server answering NXDOMAIN to an update
// does not have the zone; add_host and create say so at once, instead of
// taking it for a concurrent change and trying again.
func TestNXDomainUpdateFailsFast(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(*Client) error
	}{
		{"add_host", func(c *Client) error {
			_, err := c.AddHost(context.Background(), "example.test", "web1", []netip.Addr{netip.MustParseAddr("10.0.0.1")}, Settings{})
			return err
		}},
		{"create", func(c *Client) error {
			_, err := c.Create(context.Background(), "example.test", "web1", "TXT", `"x"`, Settings{})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, updates := answering(t, dns.RcodeNameError, 0)
			host, port, _ := net.SplitHostPort(addr)
			p, _ := strconv.Atoi(port)
			c := New(Config{Settings: Settings{Nameserver: host, Port: p, Timeout: 1}})
			start := time.Now()
			err := tc.call(c)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("failed after %v", d)
			}
			if !errors.Is(err, ErrNoZone) || errors.Is(err, ErrConflict) || errors.Is(err, ErrPrerequisite) {
				t.Fatalf("err %v, want ErrNoZone alone", err)
			}
			for _, s := range []string{"example.test", addr, "has no zone"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q lacks %q", err, s)
				}
			}
			if n := updates.Load(); n != 1 {
				t.Errorf("%d UPDATEs sent, want 1", n)
			}
		})
	}
}
