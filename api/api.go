// Package api is the master's HTTP face, in the role of salt-api's
// rest_cherrypy: webhooks in (POST /hook/<path> becomes the event
// salt/netapi/hook/<path> with Salt's {body, post, headers} data), events in
// (POST /events), the live event stream out (GET /events, Server-Sent Events
// in salt-api's framing, plus ids that resume from the durable log), a health
// report (GET /healthz), Prometheus metrics (GET /metrics), and read-only
// views of the jobs and the mine (GET /jobs, GET /mine).
//
// It is secure by default: every endpoint but /healthz needs a token, hook
// paths authenticate with a token or an HMAC signature unless `auth: none`
// is chosen explicitly, reserved tags cannot be fired, bodies are capped, and
// secrets are kept out of events and logs. A request is answered with
// success only once its event is durable.
package api

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/brinehq/brine/bus"
)

// Publisher stores an event durably; bus.Bus fits.
type Publisher interface {
	Publish(ctx context.Context, ev *bus.Event) error
}

// Subscriber follows the event log from a position; bus.Bus fits.
type Subscriber interface {
	Subscribe(ctx context.Context, opts bus.SubscribeOptions, fn func(*bus.Event)) (bus.Subscription, error)
}

// EventBus is what the API needs of the bus.
type EventBus interface {
	Publisher
	Subscriber
}

// Config is a resolved API configuration (see Settings.Resolve). Only the
// zero value's defaults are filled in by New.
type Config struct {
	// Listen is the host:port the master binds (DefaultListen).
	Listen string
	// TLSCert and TLSKey, when set, serve HTTPS.
	TLSCert, TLSKey string
	// Tokens are accepted as bearer tokens.
	Tokens [][]byte
	// Hooks authenticate hook paths; a path no hook matches needs a token.
	Hooks []Hook
	// MaxBody caps a request body in bytes (DefaultMaxBody).
	MaxBody int64
	// PublicHealth and PublicMetrics serve /healthz and /metrics without a
	// token.
	PublicHealth, PublicMetrics bool
	// Heartbeat is the idle interval of event streams (DefaultHeartbeat).
	Heartbeat time.Duration
	// ClientQueue bounds the events waiting for one stream client
	// (DefaultClientQueue).
	ClientQueue int
	// MaxStreams bounds the GET /events clients served at once
	// (DefaultMaxStreams): each holds a subscription on the bus.
	MaxStreams int
	// WriteTimeout bounds one write to a client (DefaultWriteTimeout); an
	// event-stream client whose write outlasts it is dropped.
	WriteTimeout time.Duration
	// StreamWait is how long a stream client whose queue is full may take
	// to make room before it is dropped (DefaultStreamWait).
	StreamWait time.Duration
	// Source names the API in the events it fires (default
	// brine://<hostname>/api).
	Source string
	// Checks are reported by /healthz.
	Checks []Check
	// Gauges are sampled at each scrape of /metrics.
	Gauges []Gauge
	// Jobs and Mine, when set, answer GET /jobs and GET /mine.
	Jobs Jobs
	Mine Mine
	// Now is the clock X-Brine-Signature times are checked against, and
	// the replay memory expires by (default time.Now).
	Now func() time.Time
}

// Hook is the authentication of the hook paths matching Path, a Salt glob
// relative to /hook/ (e.g. "github/*").
type Hook struct {
	Path string
	Auth Auth
	// Secret keys the HMAC for AuthHMAC.
	Secret []byte
	// SignatureHeader carries the signature (GitHubSignatureHeader by
	// default; BrineSignatureHeader selects the timestamped format).
	SignatureHeader string
}

// Check is one component in the health report: Func returns nil when the
// component works, or the reason it does not.
type Check struct {
	Name string
	Func func(ctx context.Context) error
	// Detail, when set, is reported beside the status (the cluster's
	// peers and leases); it is read after Func.
	Detail func(ctx context.Context) any
}

// Gauge is a metric read when /metrics is scraped: Sample returns a value
// per Label value (e.g. pending events per consumer). With Label empty the
// map has the single key "".
type Gauge struct {
	Name, Help, Label string
	Sample            func(ctx context.Context) (map[string]float64, error)
}

func (c *Config) setDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.ClientQueue <= 0 {
		c.ClientQueue = DefaultClientQueue
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.MaxStreams <= 0 {
		c.MaxStreams = DefaultMaxStreams
	}
	if c.StreamWait <= 0 {
		c.StreamWait = DefaultStreamWait
	}
	if c.Source == "" {
		host, err := os.Hostname()
		if err != nil {
			host = "localhost"
		}
		c.Source = "brine://" + host + "/api"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Server serves the API for one bus. Create it with New, then Run it.
type Server struct {
	cfg     Config
	bus     EventBus
	log     *slog.Logger
	access  atomic.Pointer[access]
	reg     *prometheus.Registry
	metrics *metrics
	scrape  http.Handler
	events  *EventStream // GET /events
	handler http.Handler

	// replays remembers the X-Brine-Signatures accepted in the window;
	// started (Unix ns, by cfg.Now) is when Run began serving, before
	// which the memory knows nothing (see notBefore).
	replays *replayMemory
	started atomic.Int64

	// streams ends every event stream when the server shuts down, which
	// http.Server.Shutdown does not do for long-lived responses.
	streams    context.Context
	endStreams context.CancelFunc
}

// New prepares a server. log may be nil (slog.Default()).
func New(cfg Config, b EventBus, log *slog.Logger) (*Server, error) {
	if b == nil {
		return nil, errors.New("api: a bus is required")
	}
	cfg.setDefaults()
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, bus: b, log: log, reg: prometheus.NewRegistry(), replays: newReplayMemory(maxRememberedSignatures)}
	s.access.Store(newAccess(cfg))
	var err error
	if s.metrics, err = newMetrics(s.reg, cfg.Gauges); err != nil {
		return nil, err
	}
	s.scrape = promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{s}})
	s.streams, s.endStreams = context.WithCancel(context.Background())
	s.events = &EventStream{Bus: b, Log: log.With("component", "api"), MaxStreams: cfg.MaxStreams, ClientQueue: cfg.ClientQueue,
		StreamWait: cfg.StreamWait, WriteTimeout: cfg.WriteTimeout, Heartbeat: cfg.Heartbeat, LimitKey: "api.max_streams",
		Done: s.streams, Opened: func(d int) { s.metrics.streams.Add(float64(d)) }, Dropped: s.metrics.dropped.Inc,
		Sent: func(tag string) { s.metrics.streamed.WithLabelValues(s.metrics.prefix(tag)).Inc() }}
	s.handler = s.routes()
	return s, nil
}

// access is what a reload may change: who may do what, and the body cap.
type access struct {
	tokens                      [][sha256.Size]byte
	hooks                       []compiledHook
	maxBody                     int64
	publicHealth, publicMetrics bool
}

func newAccess(cfg Config) *access {
	a := &access{hooks: compileHooks(cfg.Hooks), maxBody: cfg.MaxBody, publicHealth: cfg.PublicHealth, publicMetrics: cfg.PublicMetrics}
	if a.maxBody <= 0 {
		a.maxBody = DefaultMaxBody
	}
	for _, t := range cfg.Tokens {
		a.tokens = append(a.tokens, sha256.Sum256(t))
	}
	return a
}

// Reload applies new tokens, hooks, public endpoints and body cap to the
// requests that follow (SIGHUP rotates credentials without a restart). The
// address and TLS files take effect at the next start; Reload says so.
func (s *Server) Reload(cfg Config) error {
	cfg.setDefaults()
	s.access.Store(newAccess(cfg))
	if cfg.Listen != s.cfg.Listen || cfg.TLSCert != s.cfg.TLSCert || cfg.TLSKey != s.cfg.TLSKey {
		return errors.New("api: listen, tls_cert and tls_key take effect at the next start")
	}
	return nil
}

// Listen binds the configured address, so that a master fails at start-up
// rather than later when the port is taken.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("api: listen %s: %w", s.cfg.Listen, err)
	}
	return ln, nil
}

// Run serves on ln until ctx ends, then lets requests in flight finish
// (event streams are ended) for up to five seconds. It also counts the
// events other parts report their work with, for /metrics.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	for _, tags := range observedTags {
		sub, err := s.bus.Subscribe(ctx, bus.SubscribeOptions{Pattern: tags}, s.metrics.observe)
		if err != nil {
			ln.Close()
			return fmt.Errorf("api: event metrics: %w", err)
		}
		defer sub.Stop()
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
	}
	s.started.Store(s.cfg.Now().UnixNano())
	errc := make(chan error, 1)
	go func() {
		if s.cfg.TLSCert != "" {
			errc <- srv.ServeTLS(ln, s.cfg.TLSCert, s.cfg.TLSKey)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		s.endStreams()
		return fmt.Errorf("api: %w", err)
	case <-ctx.Done():
	}
	s.endStreams()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-errc
	return nil
}

// notBefore is the time an X-Brine-Signature must be after. The replay
// memory lives in the process, so a restart empties it; what the previous
// run accepted was timed at most SignatureMaxAhead past its last moment,
// which came before this run started. Signatures timed up to then are
// refused, so a replay across a restart is refused too, at the price of
// SignatureMaxAhead of refusals after a start.
func (s *Server) notBefore() time.Time {
	ns := s.started.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).Add(SignatureMaxAhead)
}

// errorBody is the JSON body of every error response.
type errorBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"success":false,"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="brine"`)
	}
	writeJSON(w, status, errorBody{Error: fmt.Sprintf(format, args...)})
}

// routes builds the handler: every route answers JSON errors (never
// net/http's plain text), with an access log line and request metrics.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/hook/", s.serveHook)
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			s.postEvent(w, r)
		case http.MethodGet, http.MethodHead:
			s.streamEvents(w, r)
		default:
			w.Header().Set("Allow", "GET, POST")
			writeError(w, http.StatusMethodNotAllowed, "%s /events: use GET to follow events or POST to fire one", r.Method)
		}
	})
	mux.HandleFunc("/jobs", s.serveJobs)
	mux.HandleFunc("/jobs/", s.serveJobs)
	mux.HandleFunc("/mine", s.serveMine)
	mux.HandleFunc("/healthz", s.serveHealth)
	mux.HandleFunc("/metrics", s.serveMetrics)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: %s (see /hook/<path>, /events, /jobs, /mine, /healthz, /metrics)", r.URL.Path)
	})
	return s.logged(mux)
}

// route names a request for metrics and logs; the label set is closed.
func route(r *http.Request) string {
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/hook/"):
		return "hook"
	case p == "/events" && r.Method == http.MethodPost:
		return "events_post"
	case p == "/events":
		return "events_stream"
	case p == "/jobs", strings.HasPrefix(p, "/jobs/"):
		return "jobs"
	case p == "/healthz", p == "/metrics", p == "/mine":
		return p[1:]
	}
	return "other"
}
