package ddns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations/ddns"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/reactor"
	"github.com/brinehq/brine/reactor/kvdlq"
)

// events keeps every event of the bus since the test started.
type events struct {
	mu  sync.Mutex
	all []*bus.Event
}

func recordEvents(t *testing.T, b bus.Bus) *events {
	t.Helper()
	rec := &events{}
	sub, err := b.Subscribe(context.Background(), bus.SubscribeOptions{Since: bus.Since{Time: time.Now().Add(-time.Minute)}},
		func(ev *bus.Event) {
			rec.mu.Lock()
			rec.all = append(rec.all, ev)
			rec.mu.Unlock()
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	return rec
}

// wait returns the first event matching glob whose data satisfies ok.
func (rec *events) wait(t *testing.T, glob string, ok func(map[string]any) bool) (*bus.Event, map[string]any) {
	t.Helper()
	g := fnmatch.Compile(glob)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		rec.mu.Lock()
		all := slices.Clone(rec.all)
		rec.mu.Unlock()
		for _, ev := range all {
			if !g.Match(ev.Tag) {
				continue
			}
			d, err := ev.DataMap()
			if err != nil {
				t.Fatal(err)
			}
			if ok == nil || ok(d) {
				return ev, d
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no event %s within 30s", glob)
	return nil, nil
}

// reactionFile copies a Salt reaction file from testdata/ddns, filling in
// the key file and port of this test's server.
func reactionFile(t *testing.T, dir, name, keyfile string, port int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ddns", name))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("@KEYFILE@", keyfile, "@PORT@", strconv.Itoa(port)).Replace(string(b))
	p := filepath.Join(dir, name)
	write(t, p, text)
	return p
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSaltReactionFiles runs Salt's add/delete reaction files, in the form
// of Salt's documentation, with the real reactor on salt-cloud's
// deploy_script and destroyed events, against BIND with TSIG from a Salt
// JSON keyring; then a wrong key: NOTAUTH on the bus, the reaction kept as a
// dead letter, and done once the key is fixed.
func TestSaltReactionFiles(t *testing.T) {
	s := startNamed(t)
	_, port := splitAddr(t, s.Addr)
	dir := t.TempDir()
	keyfile := filepath.Join(dir, "tsig.keyring")
	secret := s.Key("ddns-key").Secret
	write(t, keyfile, fmt.Sprintf(`{"ddns-key.": "%s"}`, secret))
	add := reactionFile(t, dir, "add_dns.sls", keyfile, port)
	rem := reactionFile(t, dir, "rem_dns.sls", keyfile, port)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rec := recordEvents(t, b)
	reg := function.NewWithBuiltins()
	if err := reg.RegisterAll(ddns.New(ddns.Config{}).Funcs()); err != nil {
		t.Fatal(err)
	}
	r := reactor.New(reactor.Config{
		Mapping: []reactor.MapEntry{
			{Glob: "salt/cloud/*/deploy_script", Files: []string{add}},
			{Glob: "salt/cloud/*/destroyed", Files: []string{rem}},
		},
		Retry: reactor.Retry{Attempts: 2, Interval: 20 * time.Millisecond, MaxInterval: 50 * time.Millisecond},
	}, reg)
	kv, err := b.Bucket(ctx, kvdlq.BucketConfig)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, b, kvdlq.New(kv)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("reactor: %v", err)
		}
	}()
	publish := func(tag string, data map[string]any) *bus.Event {
		t.Helper()
		ev, err := bus.NewEvent(tag, data, bus.Origin{Source: "brine://test/cloud"})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
		return ev
	}

	deployed := publish("salt/cloud/web1/deploy_script", map[string]any{
		"event": "web1 has been deployed at 10.20.0.81", "name": "web1", "host": "10.20.0.81"})
	eventually(t, "web1 resolves", func() bool {
		return slices.Equal(lookup(t, s, "web1.example.test", dns.TypeA), []string{"10.20.0.81"})
	})
	ev, d := rec.wait(t, "brine/ddns/example.test/updated", nil)
	if ev.Cause != deployed.ID || d["action"] != "add_host" || d["fqdn"] != "web1.example.test." {
		t.Errorf("updated event %+v %v", ev, d)
	}
	// The PTR is written after the A record, and is there once the call is
	// done (its updated event).
	if got := lookup(t, s, "81.0.20.10.in-addr.arpa", dns.TypePTR); !slices.Equal(got, []string{"web1.example.test."}) {
		t.Errorf("PTR %v", got)
	}
	_, ret := rec.wait(t, "salt/run/*/ret", func(d map[string]any) bool { return d["fun"] == "runner.ddns.add_host" })
	out, _ := json.Marshal(ret["return"])
	if ret["success"] != true || !strings.Contains(string(out), `{"web1.example.test":["Created record of type 'A': web1.example.test. -\u003e 10.20.0.81"`) {
		t.Errorf("job return %s (success %v)", out, ret["success"])
	}

	publish("salt/cloud/web1/destroyed", map[string]any{"event": "destroyed instance", "name": "web1"})
	eventually(t, "web1 and its PTR are gone", func() bool {
		return len(lookup(t, s, "web1.example.test", dns.TypeA)) == 0 && len(lookup(t, s, "81.0.20.10.in-addr.arpa", dns.TypePTR)) == 0
	})

	// A wrong secret: the error is on the bus, nothing is written, the
	// reaction is kept; once the key is fixed, a redrive does it.
	write(t, keyfile, `{"ddns-key.": "d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA=="}`)
	publish("salt/cloud/web2/deploy_script", map[string]any{
		"event": "web2 has been deployed at 10.20.0.82", "name": "web2", "host": "10.20.0.82"})
	_, e := rec.wait(t, reactor.TagError, func(d map[string]any) bool {
		return strings.Contains(fmt.Sprint(d["message"]), "web2") || strings.Contains(fmt.Sprint(d["id"]), "web2")
	})
	if !strings.Contains(fmt.Sprint(e["message"]), "NOTAUTH") {
		t.Errorf("reactor error event %v", e)
	}
	_, de := rec.wait(t, "brine/ddns/example.test/error", nil)
	if de["rcode"] != "NOTAUTH" || strings.Contains(fmt.Sprint(de), "d3Jvbmc") || strings.Contains(fmt.Sprint(de), secret) {
		t.Errorf("ddns error event %v", de)
	}
	var dead []*reactor.DeadLetter
	eventually(t, "a dead letter", func() bool {
		dead, err = r.DeadLetters(ctx)
		return err == nil && len(dead) == 1
	})
	if got := lookup(t, s, "web2.example.test", dns.TypeA); len(got) != 0 {
		t.Fatalf("written with a wrong key: %v", got)
	}
	write(t, keyfile, fmt.Sprintf(`{"ddns-key.": "%s"}`, secret))
	res, err := r.Redrive(ctx, dead[0].ID, false)
	if err != nil || res.Status != reactor.Succeeded {
		t.Fatalf("redrive: %+v %v", res, err)
	}
	if got := lookup(t, s, "web2.example.test", dns.TypeA); !slices.Equal(got, []string{"10.20.0.82"}) {
		t.Errorf("after redrive: %v", got)
	}
}
