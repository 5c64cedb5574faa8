package saltapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/bus"
)

// Server serves salt-api's interface.
type Server struct {
	cfg    Config
	tokens *tokens
	low    *lowstate
	events *api.EventStream
	bus    Bus
	source string
	fails  *failures
	// held counts the turned-away requests being tarpitted (refuseLogin).
	held chan struct{}
	log  *slog.Logger
	mux  *http.ServeMux
}

// Bus is the event bus: /events streams from it, /hook and the login
// audit publish to it.
type Bus interface {
	bus.Publisher
	Subscribe(ctx context.Context, opts bus.SubscribeOptions, fn func(*bus.Event)) (bus.Subscription, error)
}

// maxStreams bounds the /events clients served at once: every SaltGUI
// tab holds one, so more than brine's own API allows (Salt sets none); a
// client's queue is smaller than the API's so that they all fit in a few
// megabytes. A client that falls behind its queue is dropped and
// resumes with Last-Event-ID.
const (
	maxStreams  = 4096
	streamQueue = 1024
)

// sessionCookie is rest_cherrypy's session cookie, which holds the token
// (SaltGUI and browsers send it instead of X-Auth-Token).
const sessionCookie = "session_id"

// New prepares a salt-api server on backend, its tokens kept in kv
// (TokenBucket), its event stream from events; source names its jobs'
// origin.
func New(cfg Config, backend Backend, kv bus.Bucket, events Bus, source string, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, tokens: newTokens(kv), log: log.With("component", "salt-api"), bus: events, source: source,
		fails: newFailures(), held: make(chan struct{}, maxHeld),
		low: &lowstate{backend: backend, enabled: cfg.Enabled, source: source, authList: authList(cfg.EAuth)}, mux: http.NewServeMux()}
	s.mux.HandleFunc("/", s.root)
	s.mux.HandleFunc("/login", s.login)
	s.mux.HandleFunc("/logout", s.logout)
	s.mux.HandleFunc("/token", s.token)
	s.mux.HandleFunc("/run", s.runInline)
	s.events = &api.EventStream{Bus: events, Log: s.log, MaxStreams: maxStreams, ClientQueue: streamQueue,
		StreamWait: api.DefaultStreamWait, WriteTimeout: api.DefaultWriteTimeout, Heartbeat: api.DefaultHeartbeat,
		LimitKey: "rest_cherrypy", Shared: true}
	s.mux.HandleFunc("/events", s.streamEvents)
	s.mux.HandleFunc("/minions", s.minions)
	s.mux.HandleFunc("/minions/", s.minions)
	s.mux.HandleFunc("/keys", s.keys)
	s.mux.HandleFunc("/keys/", s.keys)
	s.mux.HandleFunc("/jobs", s.jobs)
	s.mux.HandleFunc("/jobs/", s.jobs)
	s.mux.HandleFunc("/hook/", s.hook)
	s.mux.HandleFunc("/stats", s.stats)
	if cfg.App != "" {
		s.mux.HandleFunc(cfg.AppPath, s.app)
		s.mux.HandleFunc(cfg.AppPath+"/", s.app)
	}
	if cfg.Static != "" {
		s.mux.Handle(cfg.StaticPath+"/", http.StripPrefix(cfg.StaticPath, http.FileServer(http.Dir(cfg.Static))))
	}
	return s
}

// authList is what a login's calls are checked against: Salt's
// get_auth_list, read again at each call (so that a change to
// external_auth applies to tokens already out), which is not quite the
// /login reply's perms.
func authList(e *EAuth) func(*Token) []any {
	return func(t *Token) []any {
		if e == nil {
			return nil
		}
		return e.AuthList(t.EAuth, t.Name)
	}
}

// Handler is the API's HTTP handler (for tests and for Serve). With an
// app, a page a browser asks for (Accept naming text/html) is the app at
// every path but the app's and static files' (rest_cherrypy's
// html_override_tool): SaltGUI's /login page and its API's /login share a
// path, told apart by what the request accepts.
func (s *Server) Handler() http.Handler {
	if s.cfg.App == "" {
		return s.mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		under := func(prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
		if r.Method == http.MethodGet && !under(s.cfg.AppPath) && !under(s.cfg.StaticPath) && wantsHTML(r) {
			s.app(w, r)
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// wantsHTML reports a request whose Accept admits text/html, other than a
// bare "*/*" (which API clients send).
func wantsHTML(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	if accept == "" || accept == "*/*" {
		return false
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q == 0 {
			continue
		}
		switch mt {
		case "text/html", "text/*", "*/*":
			return true
		}
	}
	return false
}

// Listen binds the configured address.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port)))
	if err != nil {
		return nil, fmt.Errorf("rest_cherrypy: %w", err)
	}
	return ln, nil
}

// Serve serves on ln until ctx ends, with TLS unless disable_ssl.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	if !s.cfg.DisableSSL {
		cert, err := tls.LoadX509KeyPair(s.cfg.SSLCrt, s.cfg.SSLKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("rest_cherrypy: ssl_crt/ssl_key: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	s.events.Done = ctx // the shared subscription of the event streams ends with the server
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	})
	defer stop()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// root is GET / (the welcome) and POST / (lowstate for the session's
// token).
func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		s.fail(w, r, http.StatusNotFound, "Nothing matches the given URI")
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.reply(w, r, http.StatusOK, map[string]any{"return": "Welcome", "clients": Clients})
	case http.MethodPost:
		tok, err := s.session(r)
		if err != nil {
			s.fail(w, r, http.StatusUnauthorized, err.Error())
			return
		}
		chunks, ok := s.chunks(w, r)
		if !ok {
			return
		}
		s.runChunks(w, r, chunks, func(map[string]any) (*Token, error) { return tok, nil })
	default:
		s.fail(w, r, http.StatusMethodNotAllowed, "GET or POST")
	}
}

// runInline is POST /run: lowstate whose chunks carry their own
// credentials (username, password, eauth) or token, without a session.
func (s *Server) runInline(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.fail(w, r, http.StatusMethodNotAllowed, "POST")
		return
	}
	chunks, ok := s.chunks(w, r)
	if !ok {
		return
	}
	s.runChunks(w, r, chunks, func(c map[string]any) (*Token, error) {
		if t, ok := c["token"].(string); ok {
			return s.tokens.get(r.Context(), t)
		}
		return s.authenticate(r, c)
	})
}

// runChunks runs each chunk with the identity auth gives it and replies
// {"return": [...]}, or the first refusal's status.
func (s *Server) runChunks(w http.ResponseWriter, r *http.Request, chunks []map[string]any, auth func(map[string]any) (*Token, error)) {
	out := make([]any, 0, len(chunks))
	for _, c := range chunks {
		tok, err := auth(c)
		if err != nil {
			s.refuseLogin(w, r, err)
			return
		}
		ret, err := s.low.run(r.Context(), tok, c)
		if err != nil {
			s.log.Warn("salt-api: refused", "user", tok.Name, "client", c["client"], "fun", c["fun"], "err", err)
			s.fail(w, r, statusOf(err), err.Error())
			return
		}
		if items, ok := ret.(flat); ok {
			out = append(out, items...)
			continue
		}
		out = append(out, ret)
	}
	s.reply(w, r, http.StatusOK, map[string]any{"return": out})
}

// statusOf is the HTTP status of a lowstate refusal, as salt-api's
// hypermedia_handler maps Salt's exceptions.
func statusOf(err error) int {
	switch {
	case errors.Is(err, errAuth), errors.Is(err, errNoToken):
		return http.StatusUnauthorized
	case errors.Is(err, errInvocation):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// login is POST /login: the credentials checked by the eauth backend,
// a token minted and set as the session cookie and X-Auth-Token; GET
// /login says to log in.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("WWW-Authenticate", "Session")
		s.reply(w, r, http.StatusUnauthorized, map[string]any{"status": http.StatusUnauthorized, "return": "Please log in"})
		return
	case http.MethodPost:
	default:
		s.fail(w, r, http.StatusMethodNotAllowed, "GET or POST")
		return
	}
	chunks, ok := s.chunks(w, r)
	if !ok {
		return
	}
	tok, err := s.authenticate(r, chunks[0])
	if err != nil {
		s.refuseLogin(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: tok.Token, Path: "/", HttpOnly: true,
		Secure: !s.cfg.DisableSSL, SameSite: http.SameSiteStrictMode, Expires: time.Unix(int64(tok.Expire), 0)})
	w.Header().Set("X-Auth-Token", tok.Token)
	s.reply(w, r, http.StatusOK, map[string]any{"return": []any{loginReply(tok)}})
}

// refuseLogin answers credentials that did not authenticate: 401, or 429
// with Retry-After for an address turned away.
func (s *Server) refuseLogin(w http.ResponseWriter, r *http.Request, err error) {
	var th errThrottled
	if errors.As(err, &th) {
		w.Header().Set("Retry-After", strconv.Itoa(int(th.wait.Seconds()+1)))
		s.tarpit(w, r)
		s.fail(w, r, http.StatusTooManyRequests, "Too many failed logins from this address; try again later")
		return
	}
	s.fail(w, r, http.StatusUnauthorized, "Could not authenticate using provided credentials")
}

// tarpit holds the answer to a turned-away address for tarpitDelay: a
// guesser that ignores Retry-After then gets one answer per connection a
// second instead of as many as the master's cores can write, which is what
// slowed valid callers' logins under attack. At most maxHeld requests are
// held at once (each is a goroutine and a connection); past that the
// answer goes at once and closes the connection, so that a guesser with
// many connections pays a new handshake for every try.
func (s *Server) tarpit(w http.ResponseWriter, r *http.Request) {
	select {
	case s.held <- struct{}{}:
	default:
		w.Header().Set("Connection", "close")
		return
	}
	defer func() { <-s.held }()
	t := time.NewTimer(tarpitDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// loginReply is the /login reply's token entry.
func loginReply(t *Token) map[string]any {
	perms := any(t.Perms)
	if len(t.Perms) == 0 {
		perms = map[string]any{}
	}
	return map[string]any{"token": t.Token, "expire": t.Expire, "start": t.Start, "user": t.Name, "eauth": t.EAuth, "perms": perms}
}

// token is POST /token: a token for credentials, without a session (Salt's
// Token endpoint): [{"token": ..., ...}].
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.fail(w, r, http.StatusMethodNotAllowed, "POST")
		return
	}
	chunks, ok := s.chunks(w, r)
	if !ok {
		return
	}
	tok, err := s.authenticate(r, chunks[0])
	if err != nil {
		s.refuseLogin(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, []any{loginReply(tok)})
}

// logout is POST /logout: the session's token removed.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.fail(w, r, http.StatusMethodNotAllowed, "POST")
		return
	}
	if t := sessionToken(r); t != "" {
		s.tokens.remove(r.Context(), t)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1})
	s.reply(w, r, http.StatusOK, map[string]any{"return": "Your token has been cleared"})
}

// authenticate checks a chunk's username, password and eauth, and mints
// a token. Every outcome is audited (salt/auth/netapi and a log line,
// never the password); an address with too many failures is turned away
// for a while (errThrottled) without slowing anyone else.
func (s *Server) authenticate(r *http.Request, c map[string]any) (*Token, error) {
	user, _ := c["username"].(string)
	pass, _ := c["password"].(string)
	eauth, _ := c["eauth"].(string)
	host := remoteHost(r)
	if wait, n := s.fails.blocked(host, time.Now()); wait > 0 {
		if logRefusal(n) {
			s.log.Warn("salt-api: login refused: too many failures from this address", "user", user, "remote", r.RemoteAddr,
				"retry_in", wait, "refused", n)
		}
		return nil, errThrottled{wait}
	}
	if user == "" || eauth == "" {
		return nil, errNoToken
	}
	perms, ok, err := s.cfg.EAuth.Authenticate(eauth, user, pass)
	if err != nil {
		s.log.Error("salt-api: eauth", "eauth", eauth, "user", user, "err", err)
		return nil, errNoToken
	}
	s.audit(r, user, eauth, ok)
	if !ok {
		s.fails.add(host, time.Now())
		s.log.Warn("salt-api: login refused", "eauth", eauth, "user", user, "remote", r.RemoteAddr)
		return nil, errNoToken
	}
	return s.tokens.mint(r.Context(), user, eauth, perms, s.cfg.TokenExpire)
}

// audit fires salt/auth/netapi for a login, as the key store fires
// salt/auth for a minion's: who, how, from where, and whether it passed.
func (s *Server) audit(r *http.Request, user, eauth string, ok bool) {
	act := "accept"
	if !ok {
		act = "reject"
	}
	data := map[string]any{"act": act, "result": ok, "user": user, "eauth": eauth, "remote": r.RemoteAddr}
	if _, err := bus.Fire(r.Context(), s.bus, "salt/auth/netapi", data, bus.Origin{Source: s.source}); err != nil {
		s.log.Error("salt-api: login audit event", "err", err)
	}
}

// sessionToken is the request's token: X-Auth-Token, else the session
// cookie.
func sessionToken(r *http.Request) string {
	if t := r.Header.Get("X-Auth-Token"); t != "" {
		return t
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		return c.Value
	}
	return ""
}

// session is the login the request's token stands for.
func (s *Server) session(r *http.Request) (*Token, error) {
	t := sessionToken(r)
	if t == "" {
		return nil, refuse(errAuth, "No authentication credentials given")
	}
	return s.tokens.get(r.Context(), t)
}

// chunks reads the lowstate of a request: a list of mappings, or one
// mapping made a list (the form and single-chunk bodies).
func (s *Server) chunks(w http.ResponseWriter, r *http.Request) ([]map[string]any, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		s.fail(w, r, http.StatusRequestEntityTooLarge, "request body over max_request_body_size")
		return nil, false
	}
	v, err := api.ParseBody(r.Header.Get("Content-Type"), body)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return nil, false
	}
	var list []any
	switch t := v.(type) {
	case []any:
		list = t
	case map[string]any:
		list = []any{t}
	default:
		s.fail(w, r, http.StatusBadRequest, "Lowstates must be a list")
		return nil, false
	}
	out := make([]map[string]any, 0, len(list))
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			s.fail(w, r, http.StatusBadRequest, "Lowstates must be a list of mappings")
			return nil, false
		}
		// A form's repeated key is a list of strings: arg is a list.
		for k, x := range m {
			if ss, ok := x.([]string); ok {
				l := make([]any, len(ss))
				for i, s := range ss {
					l[i] = s
				}
				m[k] = l
			}
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		s.fail(w, r, http.StatusBadRequest, "Lowstates must be a list")
		return nil, false
	}
	return out, true
}

// streamEvents is GET /events: the bus in salt-api's SSE framing for a
// valid token, given as X-Auth-Token, the session cookie, or the token or
// salt_token query parameter (SaltGUI's EventSource cannot set headers).
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.fail(w, r, http.StatusMethodNotAllowed, "GET")
		return
	}
	t := sessionToken(r)
	q := r.URL.Query()
	for _, k := range []string{"salt_token", "token"} {
		if v := q.Get(k); v != "" {
			t = v
		}
	}
	if _, err := s.tokens.get(r.Context(), t); err != nil {
		s.fail(w, r, http.StatusUnauthorized, "No valid token")
		return
	}
	s.events.Serve(w, r)
}

// minions is GET /minions[/<id>] (grains.items on them, as a local call)
// and POST /minions (a local_async job: {"return": [{"jid", "minions"}]}).
func (s *Server) minions(w http.ResponseWriter, r *http.Request) {
	id := strings.Trim(strings.TrimPrefix(r.URL.Path, "/minions"), "/")
	switch r.Method {
	case http.MethodGet:
		tgt := "*"
		if id != "" {
			tgt = id
		}
		s.sessionChunks(w, r, []map[string]any{{"client": "local", "tgt": tgt, "fun": "grains.items"}})
	case http.MethodPost:
		chunks, ok := s.chunks(w, r)
		if !ok {
			return
		}
		for _, c := range chunks {
			c["client"] = "local_async"
		}
		s.sessionChunks(w, r, chunks)
	default:
		s.fail(w, r, http.StatusMethodNotAllowed, "GET or POST")
	}
}

// keys is GET /keys (wheel key.list_all's return) and GET /keys/<id>
// (key.finger's for that id).
func (s *Server) keys(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.fail(w, r, http.StatusMethodNotAllowed, "GET")
		return
	}
	id := strings.Trim(strings.TrimPrefix(r.URL.Path, "/keys"), "/")
	c := map[string]any{"client": "wheel", "fun": "key.list_all"}
	if id != "" {
		c = map[string]any{"client": "wheel", "fun": "key.finger", "match": id}
	}
	s.unwrapWheel(w, r, c)
}

// jobs is GET /jobs (runner jobs.list_jobs) and GET /jobs/<jid> (runner
// jobs.list_job, its info and returns as rest_cherrypy shapes them).
func (s *Server) jobs(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.fail(w, r, http.StatusMethodNotAllowed, "GET")
		return
	}
	jid := strings.Trim(strings.TrimPrefix(r.URL.Path, "/jobs"), "/")
	tok, err := s.session(r)
	if err != nil {
		s.fail(w, r, http.StatusUnauthorized, err.Error())
		return
	}
	if jid == "" {
		s.runChunks(w, r, []map[string]any{{"client": "runner", "fun": "jobs.list_jobs"}}, func(map[string]any) (*Token, error) { return tok, nil })
		return
	}
	ret, err := s.low.run(r.Context(), tok, map[string]any{"client": "runner", "fun": "jobs.list_job", "jid": jid})
	if err != nil {
		s.fail(w, r, statusOf(err), err.Error())
		return
	}
	info, _ := ret.(map[string]any)
	returns := map[string]any{}
	if rs, ok := info["Result"].(map[string]any); ok {
		for id, v := range rs {
			if m, ok := v.(map[string]any); ok {
				returns[id] = m["return"]
			}
		}
	}
	s.reply(w, r, http.StatusOK, map[string]any{"info": []any{info}, "return": []any{returns}})
}

// sessionChunks runs chunks for the request's session.
func (s *Server) sessionChunks(w http.ResponseWriter, r *http.Request, chunks []map[string]any) {
	tok, err := s.session(r)
	if err != nil {
		s.fail(w, r, http.StatusUnauthorized, err.Error())
		return
	}
	s.runChunks(w, r, chunks, func(map[string]any) (*Token, error) { return tok, nil })
}

// unwrapWheel runs a wheel chunk for the session and replies its return
// alone ({"return": data.return}), as /keys does.
func (s *Server) unwrapWheel(w http.ResponseWriter, r *http.Request, c map[string]any) {
	tok, err := s.session(r)
	if err != nil {
		s.fail(w, r, http.StatusUnauthorized, err.Error())
		return
	}
	ret, err := s.low.run(r.Context(), tok, c)
	if err != nil {
		s.fail(w, r, statusOf(err), err.Error())
		return
	}
	m, _ := ret.(map[string]any)
	data, _ := m["data"].(map[string]any)
	s.reply(w, r, http.StatusOK, map[string]any{"return": data["return"]})
}

// hook is POST /hook/<tag…>: salt/netapi/hook/<tag…> fired with Salt's
// payload (body, post, headers), for a valid token unless
// webhook_disable_auth. The credentials' headers (X-Auth-Token,
// Authorization, Cookie) are left out of the event.
func (s *Server) hook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.fail(w, r, http.StatusMethodNotAllowed, "POST")
		return
	}
	if !s.cfg.WebhookNoAuth {
		if _, err := s.session(r); err != nil {
			s.fail(w, r, http.StatusUnauthorized, err.Error())
			return
		}
	}
	tag := strings.Trim(strings.TrimPrefix(r.URL.Path, "/hook"), "/")
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		s.fail(w, r, http.StatusRequestEntityTooLarge, "request body over max_request_body_size")
		return
	}
	post, err := api.ParseBody(r.Header.Get("Content-Type"), body)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	headers := map[string]any{"Remote-Addr": remoteHost(r), "Host": r.Host}
	for k, v := range r.Header {
		switch http.CanonicalHeaderKey(k) {
		case "X-Auth-Token", "Authorization", "Cookie":
			continue
		}
		headers[http.CanonicalHeaderKey(k)] = strings.Join(v, ", ")
	}
	full := "salt/netapi/hook"
	if tag != "" {
		full += "/" + tag
	}
	if _, err := bus.Fire(r.Context(), s.bus, full, map[string]any{"body": string(body), "post": post, "headers": headers},
		bus.Origin{Source: s.source}); err != nil {
		s.fail(w, r, http.StatusServiceUnavailable, err.Error())
		return
	}
	s.reply(w, r, http.StatusOK, map[string]any{"success": true})
}

// stats is GET /stats: CherryPy's statistics in Salt, which brine does
// not have; its counters are on the master's /metrics. An empty mapping,
// as Salt answers without cpstats.
func (s *Server) stats(w http.ResponseWriter, r *http.Request) {
	if _, err := s.session(r); err != nil {
		s.fail(w, r, http.StatusUnauthorized, err.Error())
		return
	}
	s.reply(w, r, http.StatusOK, map[string]any{})
}

// app serves the web UI's index page at app_path and below it (the
// single-page application's routes).
func (s *Server) app(w http.ResponseWriter, r *http.Request) {
	http.ServeFile(w, r, s.cfg.App)
}

// reply writes v as JSON, or YAML when the client accepts
// application/x-yaml (salt-api's ct_out_map).
func (s *Server) reply(w http.ResponseWriter, r *http.Request, status int, v any) {
	w.Header().Set("Cache-Control", "private")
	if wantsYAML(r) {
		b, err := yaml.Marshal(v)
		if err == nil {
			w.Header().Set("Content-Type", "application/x-yaml")
			w.WriteHeader(status)
			w.Write(b)
			return
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"status": 500, "return": "An unexpected error occurred"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// fail replies an error as {"status": code, "return": message}.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.reply(w, r, status, map[string]any{"status": status, "return": msg})
}

// wantsYAML reports an Accept header preferring YAML.
func wantsYAML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/x-yaml", "application/yaml", "text/yaml":
			return true
		case "application/json", "*/*":
			return false
		}
	}
	return false
}
