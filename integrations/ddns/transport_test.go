package ddns

import (
	"context"
	"errors"
	"net"
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
