package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/reactor"
)

func TestHealthz(t *testing.T) {
	var busErr error
	cfg := testConfig()
	cfg.Checks = []Check{
		{Name: "bus", Func: func(context.Context) error { return busErr }},
		{Name: "reactor", Func: func(context.Context) error { return nil }},
	}
	f := start(t, cfg, nil)
	status, out := f.do(http.MethodGet, "/healthz", nil, nil)
	if status != 200 || out["status"] != "ok" {
		t.Fatalf("healthy: %d %v", status, out)
	}
	busErr = errors.New("stream info: nats: connection closed")
	status, out = f.do(http.MethodGet, "/healthz", nil, nil)
	checks, _ := out["checks"].(map[string]any)
	bus, _ := checks["bus"].(map[string]any)
	if status != 503 || out["status"] != "degraded" || bus["status"] != "degraded" || bus["reason"] != busErr.Error() {
		t.Fatalf("degraded: %d %v", status, out)
	}
	if r, _ := checks["reactor"].(map[string]any); r["status"] != "ok" {
		t.Errorf("reactor %v, want ok", r)
	}

	private := testConfig()
	private.PublicHealth = false
	p := start(t, private, nil)
	if status, _ := p.do(http.MethodGet, "/healthz", nil, nil); status != 401 {
		t.Errorf("private healthz without a token: %d, want 401", status)
	}
	if status, _ := p.do(http.MethodGet, "/healthz", nil, map[string]string{"Authorization": "Bearer " + testToken}); status != 200 {
		t.Errorf("private healthz with a token: %d, want 200", status)
	}
}

func (f *fixture) scrape(header map[string]string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.url+"/metrics", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitMetric scrapes until the exposition holds line.
func (f *fixture) waitMetric(line string) string {
	f.t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := f.scrape(auth)
		if strings.Contains(body, line+"\n") {
			return body
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("metrics never showed %q:\n%s", line, grepBrine(body))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func grepBrine(body string) string {
	var out []string
	for l := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(l, "brine_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestSignedWebhookRunsReaction is the "done when": a GitHub-style
// signed webhook becomes a salt/netapi/hook event that a reaction file
// handles, and /metrics shows the reaction afterwards.
func TestSignedWebhookRunsReaction(t *testing.T) {
	cfg := testConfig()
	cfg.Gauges = []Gauge{{Name: "brine_test_pending", Help: "pending", Label: "consumer",
		Sample: func(context.Context) (map[string]float64, error) { return map[string]float64{"reactor": 3}, nil }}}
	f := start(t, cfg, nil)
	sls, err := filepath.Abs("../testdata/api/github_push.sls")
	if err != nil {
		t.Fatal(err)
	}
	r := reactor.New(reactor.Config{Mapping: []reactor.MapEntry{{Glob: HookTagPrefix + "github/*", Files: []string{sls}}}},
		function.NewWithBuiltins(), reactor.WithLogger(quiet()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, f.bus, nil) }()
	defer func() {
		cancel()
		<-done
	}()

	if status, _ := f.scrape(nil); status != 401 {
		t.Errorf("metrics without a token: %d, want 401", status)
	}
	before := f.waitMetric(`brine_test_pending{consumer="reactor"} 3`)
	if strings.Contains(before, `brine_reactor_reactions_total{result="succeeded"}`) {
		t.Fatalf("a reaction counted before any ran:\n%s", grepBrine(before))
	}

	pushed := make(chan *bus.Event, 1)
	sub, err := f.bus.Subscribe(ctx, bus.SubscribeOptions{Pattern: "myco/push/**"}, func(ev *bus.Event) { pushed <- ev })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()

	body, err := os.ReadFile("../testdata/api/github_push.json")
	if err != nil {
		t.Fatal(err)
	}
	status, out := f.do(http.MethodPost, "/hook/github/push", body, map[string]string{
		"Content-Type":        "application/json",
		"X-Github-Event":      "push",
		GitHubSignatureHeader: SignHook(GitHubSignatureHeader, "", []byte(testSecret), body, time.Now()),
	})
	if status != 200 {
		t.Fatalf("hook: %d %v", status, out)
	}
	select {
	case ev := <-pushed:
		if ev.Tag != "myco/push/brinehq/brine" || !strings.Contains(string(ev.Data), `"ref":"refs/heads/main"`) || !strings.Contains(string(ev.Data), `"event":"push"`) {
			t.Errorf("reaction fired %s %s", ev.Tag, ev.Data)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reaction did not run within 30s")
	}
	after := f.waitMetric(`brine_reactor_reactions_total{result="succeeded"} 1`)
	for _, want := range []string{
		`brine_api_events_in_total{prefix="salt/netapi",route="hook"} 1`,
		`brine_api_requests_total{code="200",route="hook"} 1`,
		`brine_reactor_reaction_duration_seconds_count 1`,
	} {
		if !strings.Contains(after, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, grepBrine(after))
		}
	}
}

func TestMetricsPrefixLabel(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ tag, want string }{
		{"salt/cloud/web1/created", "salt/cloud"},
		{"salt/auth", "salt/auth"},
		{"20260101120000123456", "jid"},
		{"myco", "myco"},
	}
	for _, tc := range tests {
		if got := m.prefix(tc.tag); got != tc.want {
			t.Errorf("prefix(%q) = %q, want %q", tc.tag, got, tc.want)
		}
	}
	for i := range maxPrefixes {
		m.prefix("flood/" + strings.Repeat("x", i+1))
	}
	if got := m.prefix("late/comer"); got != "other" {
		t.Errorf("prefix past the cap = %q, want other", got)
	}
	if got := m.prefix("salt/cloud/x"); got != "salt/cloud" {
		t.Errorf("known prefix past the cap = %q", got)
	}
}

// TestEventMetrics: the counters derived from what the parts of the master
// report as events, and counters added from a part's Stats snapshot.
func TestEventMetrics(t *testing.T) {
	f := start(t, testConfig(), nil)
	var stats reactor.Stats
	names := []string{"events", "reactions", "succeeded", "failed", "retries", "dead_lettered", "skipped", "errors", "loops_cut"}
	if err := f.srv.AddCounters("reactor_stats", "Reactor counters", names, stats.Snapshot); err != nil {
		t.Fatal(err)
	}
	stats.DeadLettered.Add(2)
	for _, e := range []struct {
		tag  string
		data map[string]any
	}{
		{"brine/ddns/example.com/updated", map[string]any{"fqdn": "web1.example.com."}},
		{"brine/ddns/example.com/error", map[string]any{"rcode": "REFUSED"}},
		{"brine/ddns/example.com/error", map[string]any{"error": "i/o timeout"}},
		{"brine/ddns/example.com/error", map[string]any{"rcode": "not an rcode"}},
		{"brine/dnsmasq/reloaded", nil},
		{"brine/dnsmasq/conflict", nil},
		{"brine/slack/error", nil},
		{"brine/bus/watcher/dropped", nil},
		{"brine/reactor/error", nil},
		{"brine/reactor/loop", nil},
		{"brine/reactor/skipped", nil},
		{"salt/run/20260101000000000001/ret", map[string]any{"reaction": "a", "success": false, "duration": 0.5, "attempts": 3}},
		{"salt/run/20260101000000000002/ret", map[string]any{"success": true, "duration": 0.1}}, // `brine run`: not a reaction
	} {
		publish(t, f.bus, e.tag, e.data)
	}
	body := f.waitMetric(`brine_reactor_reactions_total{result="failed"} 1`)
	for _, want := range []string{
		`brine_ddns_updates_total{rcode="NOERROR"} 1`,
		`brine_ddns_updates_total{rcode="REFUSED"} 1`,
		`brine_ddns_updates_total{rcode="none"} 2`,
		`brine_dnsmasq_events_total{event="reloaded"} 1`,
		`brine_dnsmasq_events_total{event="conflict"} 1`,
		`brine_slack_errors_total 1`,
		`brine_gateway_watchers_dropped_total 1`,
		`brine_reactor_errors_total 1`,
		`brine_reactor_loops_cut_total 1`,
		`brine_reactor_reactions_total{result="skipped"} 1`,
		`brine_reactor_retries_total 2`,
		`brine_reactor_reaction_duration_seconds_sum 0.5`,
		`brine_reactor_stats_dead_lettered_total 2`,
		`brine_reactor_stats_events_total 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, grepBrine(body))
		}
	}
	if strings.Contains(body, `result="succeeded"`) {
		t.Errorf("a non-reaction job counted as a reaction:\n%s", grepBrine(body))
	}
}
