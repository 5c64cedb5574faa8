package named

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// start runs a server for the test; a machine without bind9 fails the test
// with the reason, as the project's tests must not skip.
func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, cfg)
	if errors.Is(err, ErrNotInstalled) {
		t.Fatalf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestStartUpdateRestart(t *testing.T) {
	s := start(t, Config{Zones: []string{"example.test", "0.20.10.in-addr.arpa"}, Keys: []Key{{Name: "k1"}}})
	k := s.Key("k1")
	if k.Secret == "" || k.Algorithm != "hmac-sha256" {
		t.Fatalf("key %+v", k)
	}
	m := new(dns.Msg)
	m.SetUpdate("example.test.")
	a, _ := dns.NewRR("web1.example.test. 60 IN A 10.20.0.1")
	m.Insert([]dns.RR{a})
	m.SetTsig("k1.", dns.HmacSHA256, 300, time.Now().Unix())
	c := &dns.Client{TsigSecret: map[string]string{"k1.": k.Secret}}
	r, _, err := c.Exchange(m, s.Addr)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		t.Fatalf("update: %v %v", err, r)
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := new(dns.Msg)
	q.SetQuestion("web1.example.test.", dns.TypeA)
	r, _, err = new(dns.Client).Exchange(q, s.Addr)
	if err != nil || len(r.Answer) != 1 {
		t.Fatalf("after restart: %v %v", err, r)
	}
	rrs, err := s.Transfer("example.test")
	var found bool
	for _, rr := range rrs {
		found = found || rr.String() == a.String()
	}
	if err != nil || !found {
		t.Fatalf("transfer: %v, the update's record not among %v", err, rrs)
	}
	s.Stop()
	if s.serves("example.test") {
		t.Fatal("still answering after Stop")
	}
}
