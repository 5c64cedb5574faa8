package api

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/fnmatch"
)

// Defaults of the api: settings.
const (
	// DefaultListen keeps the API on loopback unless an address is configured.
	DefaultListen = "127.0.0.1:8000"
	// DefaultMaxBody is salt-api's max_request_body_size: 1 MiB.
	DefaultMaxBody = 1 << 20
	// DefaultHeartbeat is how often an idle event stream gets a comment line,
	// so proxies and clients see a live connection.
	DefaultHeartbeat = 15 * time.Second
	// DefaultClientQueue bounds the events waiting to be written to one
	// event-stream client before it is dropped as too slow.
	DefaultClientQueue = 4096
	// DefaultMaxStreams bounds the event-stream clients served at once.
	DefaultMaxStreams = 256
	// DefaultWriteTimeout bounds one write to a client. An event-stream
	// client whose write waits this long has stopped reading (its socket
	// buffers are full) and is dropped.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultStreamWait is how long an event waits for room in a stream
	// client's full queue before the client is dropped.
	DefaultStreamWait = 2 * time.Second
	// MinTokenLen is the shortest accepted token or secret: a guessable one
	// would make the authentication decorative.
	MinTokenLen = 16
)

// Auth is how a hook path authenticates its senders.
type Auth string

// Hook authentication modes.
const (
	// AuthToken requires one of the API tokens as a bearer token (or in
	// X-Auth-Token, as salt-api takes it).
	AuthToken Auth = "token"
	// AuthHMAC requires an HMAC-SHA256 keyed with the hook's secret in the
	// hook's signature header: of the raw body (GitHubSignatureHeader), or
	// of the hook path, time and body (BrineSignatureHeader).
	AuthHMAC Auth = "hmac"
	// AuthNone accepts anyone who can reach the port; it must be chosen
	// explicitly and is logged loudly at start.
	AuthNone Auth = "none"
)

// Signature header names with a known format.
const (
	// GitHubSignatureHeader carries "sha256=<hex>" over the body (GitHub,
	// Gitea, and most services that copied them).
	GitHubSignatureHeader = "X-Hub-Signature-256"
	// BrineSignatureHeader carries "t=<unix seconds>,v2=<hex>", an
	// HMAC-SHA256 of "<hook path>\n<t>\n<body>" (see SignHook): it binds the
	// body to one hook path and one moment, and each signature is accepted
	// once. Its first form, "t=…,sha256=<hex>" over "<t>.<body>", is refused
	// with a message saying what to send instead.
	BrineSignatureHeader = "X-Brine-Signature"
	// SignatureTolerance is how far behind the server's clock the time in
	// an X-Brine-Signature may be: the time a request may take to arrive,
	// retries included, and how long its signature is remembered.
	SignatureTolerance = 5 * time.Minute
	// SignatureMaxAhead is how far ahead of the server's clock the time in
	// an X-Brine-Signature may be (a sender's clock running fast). It is
	// short because the API refuses signatures timed before its start plus
	// this much, for a replay across a restart could not be told otherwise.
	SignatureMaxAhead = 5 * time.Second
)

// Settings is the api: key of the master configuration as written:
//
//	api:
//	  listen: 127.0.0.1:8000
//	  tls_cert: /etc/brine/api.crt
//	  tls_key: /etc/brine/api.key
//	  token_file: /etc/brine/api.tokens   # or tokens: [...]
//	  public: [healthz]                   # endpoints served without a token
//	  hooks:
//	    'github/*': {auth: hmac, secret_file: /etc/brine/github.secret}
//	    'ci/**':    {auth: token}
//
// Secrets may be given inline or, better, in files that only the master can
// read; they never appear in logs or events.
type Settings struct {
	Listen         string                  `yaml:"listen"`
	TLSCert        string                  `yaml:"tls_cert"`
	TLSKey         string                  `yaml:"tls_key"`
	AllowPlainHTTP bool                    `yaml:"allow_plain_http"`
	Tokens         []string                `yaml:"tokens"`
	TokenFile      string                  `yaml:"token_file"`
	MaxBody        int64                   `yaml:"max_request_body_size"`
	MaxStreams     int                     `yaml:"max_streams"`
	Public         []string                `yaml:"public"`
	Hooks          map[string]HookSettings `yaml:"hooks"`
}

// HookSettings configure the hook paths matching one glob.
type HookSettings struct {
	Auth            string `yaml:"auth"`
	Secret          string `yaml:"secret"`
	SecretFile      string `yaml:"secret_file"`
	SignatureHeader string `yaml:"signature_header"`
}

var (
	settingsKeys = []string{"listen", "tls_cert", "tls_key", "allow_plain_http", "tokens", "token_file",
		"max_request_body_size", "max_streams", "public", "hooks"}
	hookKeys = []string{"auth", "secret", "secret_file", "signature_header"}
	// publicEndpoints may be served without a token when listed in public.
	publicEndpoints = []string{"healthz", "metrics"}
)

// ConfigKey is the master configuration key of the API.
const ConfigKey = "api"

// LoadConfig reads the api: section and resolves it; on is false when there
// is none (the API is off).
func LoadConfig(d config.Decoder) (cfg Config, on bool, err error) {
	if !d.Has(ConfigKey) {
		return Config{}, false, nil
	}
	src := d.Source(ConfigKey)
	// A misspelt key is reported at its line, with the key it probably means.
	if err := d.CheckKeys(settingsKeys, ConfigKey); err != nil {
		return Config{}, true, err
	}
	if err := d.CheckKeys(hookKeys, ConfigKey, "hooks", "*"); err != nil {
		return Config{}, true, err
	}
	var raw map[string]any
	if err := d.Decode(ConfigKey, &raw); err != nil {
		return Config{}, true, err
	}
	if err := CheckKeys(raw); err != nil {
		return Config{}, true, fmt.Errorf("%s: %w", src, err)
	}
	var st Settings
	if err := d.Decode(ConfigKey, &st); err != nil {
		return Config{}, true, err
	}
	if cfg, err = st.Resolve(filepath.Dir(src)); err != nil {
		return Config{}, true, fmt.Errorf("%s: %w", src, err)
	}
	return cfg, true, nil
}

// CheckKeys reports keys of the raw api: mapping that Settings does not
// know, so that a misspelt secret_file is an error instead of a hook
// silently left without its secret.
func CheckKeys(raw map[string]any) error {
	if err := unknownKeys("api", raw, settingsKeys); err != nil {
		return err
	}
	hooks, _ := raw["hooks"].(map[string]any)
	for path, h := range hooks {
		m, ok := h.(map[string]any)
		if !ok {
			return fmt.Errorf("api.hooks[%q]: want a mapping of %s", path, strings.Join(hookKeys, ", "))
		}
		if err := unknownKeys(fmt.Sprintf("api.hooks[%q]", path), m, hookKeys); err != nil {
			return err
		}
	}
	return nil
}

func unknownKeys(where string, m map[string]any, known []string) error {
	var bad []string
	for k := range m {
		if !slices.Contains(known, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%s: unknown key %q (known: %s)", where, bad[0], strings.Join(known, ", "))
}

// Resolve checks the settings and reads the secret files, giving the
// Config a Server runs with. Relative file names are taken from dir, the
// directory of the configuration file. Errors name the field at fault.
func (s Settings) Resolve(dir string) (Config, error) {
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	s.TLSCert, s.TLSKey, s.TokenFile = rel(s.TLSCert), rel(s.TLSKey), rel(s.TokenFile)
	hooks := make(map[string]HookSettings, len(s.Hooks))
	for path, h := range s.Hooks {
		h.SecretFile = rel(h.SecretFile)
		hooks[path] = h
	}
	s.Hooks = hooks
	cfg := Config{Listen: s.Listen, TLSCert: s.TLSCert, TLSKey: s.TLSKey, MaxBody: s.MaxBody, MaxStreams: s.MaxStreams}
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return Config{}, fmt.Errorf("api.listen %q: %w", cfg.Listen, err)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return Config{}, errors.New("api: tls_cert and tls_key go together: set both or neither")
	}
	if s.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey); err != nil {
			return Config{}, fmt.Errorf("api.tls_cert %s, api.tls_key %s: %w", s.TLSCert, s.TLSKey, err)
		}
	}
	if s.TLSCert == "" && !isLoopback(host) && !s.AllowPlainHTTP {
		return Config{}, fmt.Errorf("api.listen %q is reachable from other hosts: tokens and events would cross the network in clear; set tls_cert and tls_key, or allow_plain_http: true behind a TLS proxy", cfg.Listen)
	}
	if cfg.MaxBody < 0 {
		return Config{}, fmt.Errorf("api.max_request_body_size %d is negative", cfg.MaxBody)
	}
	if cfg.MaxStreams < 0 {
		return Config{}, fmt.Errorf("api.max_streams %d is negative", cfg.MaxStreams)
	}
	for i, t := range s.Tokens {
		if err := checkSecret(t); err != nil {
			return Config{}, fmt.Errorf("api.tokens[%d]: %w", i, err)
		}
		cfg.Tokens = append(cfg.Tokens, []byte(t))
	}
	if s.TokenFile != "" {
		toks, err := readTokens(s.TokenFile)
		if err != nil {
			return Config{}, fmt.Errorf("api.token_file: %w", err)
		}
		cfg.Tokens = append(cfg.Tokens, toks...)
	}
	for _, p := range s.Public {
		if !slices.Contains(publicEndpoints, p) {
			return Config{}, fmt.Errorf("api.public: %q is not an endpoint that may be public (want %s)", p, strings.Join(publicEndpoints, ", "))
		}
	}
	cfg.PublicHealth = s.Public == nil || slices.Contains(s.Public, "healthz")
	cfg.PublicMetrics = slices.Contains(s.Public, "metrics")
	for path, h := range s.Hooks {
		hook, err := h.resolve(path)
		if err != nil {
			return Config{}, fmt.Errorf("api.hooks[%q]: %w", path, err)
		}
		if hook.Auth == AuthToken && len(cfg.Tokens) == 0 {
			return Config{}, fmt.Errorf("api.hooks[%q]: auth token, but no tokens or token_file is configured", path)
		}
		cfg.Hooks = append(cfg.Hooks, hook)
	}
	return cfg, nil
}

func (h HookSettings) resolve(path string) (Hook, error) {
	hook := Hook{Path: path, Auth: Auth(h.Auth), SignatureHeader: h.SignatureHeader}
	if strings.HasPrefix(path, "/") || path == "" {
		return Hook{}, errors.New("a hook path glob is relative to /hook/ and not empty")
	}
	switch hook.Auth {
	case "":
		return Hook{}, errors.New("auth is required: token, hmac or none")
	case AuthToken, AuthNone:
		if h.Secret != "" || h.SecretFile != "" || h.SignatureHeader != "" {
			return Hook{}, fmt.Errorf("auth %s takes no secret, secret_file or signature_header", hook.Auth)
		}
	case AuthHMAC:
		switch {
		case h.Secret != "" && h.SecretFile != "":
			return Hook{}, errors.New("set secret or secret_file, not both")
		case h.Secret != "":
			hook.Secret = []byte(h.Secret)
		case h.SecretFile != "":
			toks, err := readTokens(h.SecretFile)
			if err != nil {
				return Hook{}, fmt.Errorf("secret_file: %w", err)
			}
			if len(toks) != 1 {
				return Hook{}, fmt.Errorf("secret_file %s: holds %d secrets, want 1", h.SecretFile, len(toks))
			}
			hook.Secret = toks[0]
		default:
			return Hook{}, errors.New("auth hmac needs secret or secret_file")
		}
		if err := checkSecret(string(hook.Secret)); err != nil {
			return Hook{}, fmt.Errorf("secret: %w", err)
		}
		if hook.SignatureHeader == "" {
			hook.SignatureHeader = GitHubSignatureHeader
		}
		hook.SignatureHeader = http.CanonicalHeaderKey(hook.SignatureHeader)
	default:
		return Hook{}, fmt.Errorf("auth %q: want token, hmac or none", h.Auth)
	}
	return hook, nil
}

func checkSecret(s string) error {
	if len(s) < MinTokenLen {
		return fmt.Errorf("too short (%d characters, at least %d)", len(s), MinTokenLen)
	}
	if strings.TrimSpace(s) != s {
		return errors.New("has leading or trailing white space")
	}
	return nil
}

// readTokens reads one secret per line; blank lines and # comments are
// skipped. A file others may read is refused: it holds credentials.
func readTokens(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %04o lets other users read it; chmod 600 it", path, st.Mode().Perm())
	}
	var out [][]byte
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if err := checkSecret(string(line)); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, bytes.Clone(line))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no secret in the file", path)
	}
	return out, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// matchHook returns the hook configuration for path: the most specific
// matching glob (one without wildcards first, then the longest literal
// prefix), or nil.
func matchHook(hooks []compiledHook, path string) *compiledHook {
	for i := range hooks {
		if hooks[i].glob.Match(path) {
			return &hooks[i]
		}
	}
	return nil
}

type compiledHook struct {
	Hook
	glob *fnmatch.Glob
}

// compileHooks orders hooks most specific first, so that matchHook can
// stop at the first match.
func compileHooks(hooks []Hook) []compiledHook {
	out := make([]compiledHook, 0, len(hooks))
	for _, h := range hooks {
		out = append(out, compiledHook{Hook: h, glob: fnmatch.Compile(h.Path)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		al, bl := a.glob.Prefix() == a.Path, b.glob.Prefix() == b.Path
		if al != bl {
			return al
		}
		if pa, pb := len(a.glob.Prefix()), len(b.glob.Prefix()); pa != pb {
			return pa > pb
		}
		if len(a.Path) != len(b.Path) {
			return len(a.Path) > len(b.Path)
		}
		return a.Path < b.Path
	})
	return out
}
