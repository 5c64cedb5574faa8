package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/py"
)

// maxPrefixes bounds the tag prefixes counted separately; tags beyond go
// under "other", so that senders cannot grow /metrics without bound.
const maxPrefixes = 200

// metrics are the API's own counters and those it derives from the events
// on the bus: every part of brine reports its work as events (reaction
// results, reactor errors, dropped watchers), so counting them here needs no
// part to know about Prometheus.
type metrics struct {
	requests   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	accepted   *prometheus.CounterVec
	streams    prometheus.Gauge
	streamed   *prometheus.CounterVec
	dropped    prometheus.Counter
	sigRefused *prometheus.CounterVec

	reactions    *prometheus.CounterVec
	latency      prometheus.Histogram
	retries      prometheus.Counter
	reactorErrs  prometheus.Counter
	loopsCut     prometheus.Counter
	watcherDrops prometheus.Counter
	ddns         *prometheus.CounterVec
	dnsmasq      *prometheus.CounterVec
	slackErrs    prometheus.Counter

	mu       sync.Mutex
	prefixes map[string]struct{}
}

func newMetrics(reg *prometheus.Registry, gauges []Gauge) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brine_api_requests_total",
			Help: "HTTP API requests by route and status code."}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brine_api_request_duration_seconds",
			Help: "HTTP API request duration by route (event streams: until the client leaves).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"route"}),
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brine_api_events_in_total",
			Help: "Events stored from HTTP requests, by route (hook, events_post) and tag prefix (first two segments)."}, []string{"route", "prefix"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{Name: "brine_api_stream_clients",
			Help: "Clients following GET /events now."}),
		streamed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brine_api_events_out_total",
			Help: "Events written to GET /events clients, by tag prefix (first two segments)."}, []string{"prefix"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "brine_api_stream_clients_dropped_total",
			Help: "GET /events clients disconnected for not keeping up: too slow, or no longer reading."}),
		sigRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brine_api_hook_signatures_refused_total",
			Help: "Signed hook requests refused, by reason: missing, malformed, v1 (retired X-Brine-Signature form), mismatch, time, before_start, replay, memory_full."}, []string{"reason"}),
		reactions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brine_reactor_reactions_total",
			Help: "Reactions by result: succeeded, failed (after the last attempt), skipped (require/onfail)."}, []string{"result"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "brine_reactor_reaction_duration_seconds",
			Help: "Reaction run time, all attempts included.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 18)}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "brine_reactor_retries_total",
			Help: "Reaction attempts beyond the first."}),
		reactorErrs: prometheus.NewCounter(prometheus.CounterOpts{Name: "brine_reactor_errors_total",
			Help: "brine/reactor/error events: render, compile and run failures."}),
		loopsCut: prometheus.NewCounter(prometheus.CounterOpts{Name: "brine_reactor_loops_cut_total",
			Help: "brine/reactor/loop events: reactions not run past reactor.max_depth."}),
		watcherDrops: prometheus.NewCounter(prometheus.CounterOpts{Name: "brine_gateway_watchers_dropped_total",
			Help: "ZeroMQ watchers disconnected for not keeping up."}),
		ddns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brine_ddns_updates_total",
			Help: "DNS updates by the server's rcode (NOERROR for changes made; \"none\" when no answer came)."}, []string{"rcode"}),
		dnsmasq: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brine_dnsmasq_events_total",
			Help: "dnsmasq integration events: reloaded, conflict, error."}, []string{"event"}),
		slackErrs: prometheus.NewCounter(prometheus.CounterOpts{Name: "brine_slack_errors_total",
			Help: "brine/slack/error events: audit messages Slack did not take."}),
		prefixes: make(map[string]struct{}),
	}
	for _, r := range refusalReasons {
		m.sigRefused.WithLabelValues(r) // shown at 0 from the start, for alerts
	}
	cs := []prometheus.Collector{m.requests, m.duration, m.accepted, m.streams, m.streamed, m.dropped, m.sigRefused,
		m.reactions, m.latency, m.retries, m.reactorErrs, m.loopsCut, m.watcherDrops, m.ddns, m.dnsmasq, m.slackErrs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
	for _, g := range gauges {
		cs = append(cs, newSampled(g))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observedTags are the tags observe counts; subscribing to them alone
// spares decoding every other event (hooks, cloud, jobs) a second time.
var observedTags = []string{"salt/run/*", "brine/*"}

// observe counts one event from the bus.
func (m *metrics) observe(ev *bus.Event) {
	switch {
	case strings.HasPrefix(ev.Tag, "salt/run/") && strings.HasSuffix(ev.Tag, "/ret"):
		m.observeRet(ev)
	case ev.Tag == "brine/reactor/error":
		m.reactorErrs.Inc()
	case ev.Tag == "brine/reactor/loop":
		m.loopsCut.Inc()
	case ev.Tag == "brine/reactor/skipped":
		m.reactions.WithLabelValues("skipped").Inc()
	case ev.Tag == "brine/bus/watcher/dropped":
		m.watcherDrops.Inc()
	case ev.Tag == "brine/slack/error":
		m.slackErrs.Inc()
	case strings.HasPrefix(ev.Tag, "brine/dnsmasq/"):
		switch what := ev.Tag[len("brine/dnsmasq/"):]; what {
		case "reloaded", "conflict", "error":
			m.dnsmasq.WithLabelValues(what).Inc()
		}
	case strings.HasPrefix(ev.Tag, "brine/ddns/"):
		m.observeDDNS(ev)
	}
}

// observeDDNS counts brine/ddns/<zone>/updated as NOERROR and
// brine/ddns/<zone>/error by the rcode it carries.
func (m *metrics) observeDDNS(ev *bus.Event) {
	switch {
	case strings.HasSuffix(ev.Tag, "/updated"):
		m.ddns.WithLabelValues("NOERROR").Inc()
	case strings.HasSuffix(ev.Tag, "/error"):
		rcode := "none"
		if d, err := ev.DataMap(); err == nil {
			if s, ok := d["rcode"].(string); ok && isRcode(s) {
				rcode = s
			}
		}
		m.ddns.WithLabelValues(rcode).Inc()
	}
}

// isRcode accepts DNS rcode mnemonics (NXDOMAIN, REFUSED, BADSIG…), which
// keeps the label set small whatever an event carries.
func isRcode(s string) bool {
	if s == "" || len(s) > 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// observeRet counts a reaction's result: a runner job's return event that
// names the reaction it ran.
func (m *metrics) observeRet(ev *bus.Event) {
	d, err := ev.DataMap()
	if err != nil {
		return
	}
	if _, ok := d["reaction"]; !ok {
		return
	}
	result := "failed"
	if ok, _ := d["success"].(bool); ok {
		result = "succeeded"
	}
	m.reactions.WithLabelValues(result).Inc()
	if secs, ok := py.Number(d["duration"]); ok {
		m.latency.Observe(secs)
	}
	if n, ok := py.Number(d["attempts"]); ok && n > 1 {
		m.retries.Add(n - 1)
	}
}

// prefix is the label of a tag: its first two segments, "jid" for Salt's
// bare job-id tags, "other" once maxPrefixes distinct ones are counted.
func (m *metrics) prefix(tag string) string {
	segs := strings.SplitN(tag, "/", 3)
	if isDigits(segs[0]) {
		return "jid"
	}
	p := segs[0]
	if len(segs) > 1 {
		p += "/" + segs[1]
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.prefixes[p]; ok {
		return p
	}
	if len(m.prefixes) >= maxPrefixes {
		return "other"
	}
	m.prefixes[p] = struct{}{}
	return p
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// AddCounters exports the counters a part of the master keeps (a
// Stats().Snapshot() as the reactor and the Slack audit have) as
// brine_<subsystem>_<name>_total, read at each scrape, so that the part need
// not know Prometheus. names fixes the counters exported.
func (s *Server) AddCounters(subsystem, help string, names []string, snapshot func() map[string]uint64) error {
	return s.reg.Register(&snapshotCounters{subsystem: subsystem, help: help, names: names, snapshot: snapshot})
}

type snapshotCounters struct {
	subsystem, help string
	names           []string
	snapshot        func() map[string]uint64
}

func (c *snapshotCounters) desc(name string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName("brine", c.subsystem, name+"_total"), c.help+": "+name+".", nil, nil)
}

func (c *snapshotCounters) Describe(ch chan<- *prometheus.Desc) {
	for _, n := range c.names {
		ch <- c.desc(n)
	}
}

func (c *snapshotCounters) Collect(ch chan<- prometheus.Metric) {
	snap := c.snapshot()
	for _, n := range c.names {
		ch <- prometheus.MustNewConstMetric(c.desc(n), prometheus.CounterValue, float64(snap[n]))
	}
}

// sampled is a Gauge read at scrape time.
type sampled struct {
	g    Gauge
	desc *prometheus.Desc
}

func newSampled(g Gauge) *sampled {
	var labels []string
	if g.Label != "" {
		labels = []string{g.Label}
	}
	return &sampled{g: g, desc: prometheus.NewDesc(g.Name, g.Help, labels, nil)}
}

func (s *sampled) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

func (s *sampled) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	vals, err := s.g.Sample(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(s.desc, err)
		return
	}
	for label, v := range vals {
		if s.g.Label == "" {
			ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, v)
			continue
		}
		ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, v, label)
	}
}

// recorder notes the status and size of a response; Unwrap lets
// http.ResponseController reach the connection (flushes, deadlines).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logged wraps h with a write deadline, an access log line per request
// (credentials in the query string redacted) and request metrics.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		_ = http.NewResponseController(rec).SetWriteDeadline(start.Add(s.cfg.WriteTimeout))
		h.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		rt := route(r)
		d := time.Since(start)
		s.metrics.requests.WithLabelValues(rt, strconv.Itoa(rec.status)).Inc()
		s.metrics.duration.WithLabelValues(rt).Observe(d.Seconds())
		level := slog.LevelInfo
		if rec.status >= 500 {
			level = slog.LevelWarn
		}
		s.log.LogAttrs(r.Context(), level, "api request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("query", redactQuery(r.URL.RawQuery)), slog.Int("status", rec.status),
			slog.Int64("bytes", rec.bytes), slog.Duration("duration", d), slog.String("remote", r.RemoteAddr))
	})
}

// redactQuery hides the values of query parameters that carry tokens.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "(unparseable)"
	}
	for _, k := range []string{"token", "salt_token"} {
		if q.Has(k) {
			q.Set(k, "REDACTED")
		}
	}
	return q.Encode()
}
