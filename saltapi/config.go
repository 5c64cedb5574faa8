package saltapi

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/config"
)

// ConfigKeys are the master configuration keys salt-api reads: its own
// section, Salt's external_auth, the clients it may run and how long a
// token lives.
var ConfigKeys = []string{"rest_cherrypy", "external_auth", "netapi_enable_clients", "token_expire"}

// Clients are salt-api's client kinds brine runs (salt/netapi CLIENTS
// without ssh and local_subset).
var Clients = []string{"local", "local_async", "local_batch", "runner", "runner_async", "wheel", "wheel_async"}

// Config is the rest_cherrypy: section and the options beside it.
type Config struct {
	// Host and Port are where the API listens (Salt's host, default
	// 0.0.0.0, and port, required).
	Host string
	Port int
	// SSLCrt and SSLKey serve HTTPS; DisableSSL serves plain HTTP without
	// them, as rest_cherrypy requires one or the other.
	SSLCrt, SSLKey string
	DisableSSL     bool
	// App and Static serve a web UI (SaltGUI): App at AppPath (and below
	// it, the single-page application's routes), Static's files at
	// StaticPath.
	App, AppPath       string
	Static, StaticPath string
	// WebhookNoAuth lets anyone who reaches the port fire
	// salt/netapi/hook/ events (webhook_disable_auth).
	WebhookNoAuth bool
	// MaxBody bounds a request body (max_request_body_size, default 1 MiB).
	MaxBody int64
	// Enabled are the clients netapi_enable_clients lists: none unless
	// listed, as in Salt 3006.
	Enabled []string
	// TokenExpire is how long a login's token lives (token_expire,
	// default 12 h).
	TokenExpire time.Duration
	// EAuth is external_auth.
	EAuth *EAuth
}

// sectionKeys are the keys of rest_cherrypy: brine reads; Salt's others
// (thread_pool, socket_queue_size, log files ...) tune CherryPy and are
// reported as not used.
var sectionKeys = []string{"host", "port", "ssl_crt", "ssl_key", "disable_ssl", "app", "app_path", "static",
	"static_path", "max_request_body_size", "debug", "webhook_disable_auth", "webhook_url", "collect_stats",
	"expire_responses"}

// cherrypyOnly are rest_cherrypy options that tune CherryPy itself.
var cherrypyOnly = []string{"thread_pool", "socket_queue_size", "log_access_file", "log_error_file", "ssl_chain",
	"stats_disable_auth", "cors_origin", "root_prefix", "enable_sessions", "ws_max_message_size"}

// LoadConfig reads the salt-api settings of c; on is false when c has no
// rest_cherrypy: section.
func LoadConfig(c *config.Master) (cfg Config, on bool, err error) {
	var sec map[string]any
	if err := c.Decode("rest_cherrypy", &sec); err != nil {
		return cfg, false, err
	}
	if sec == nil {
		return cfg, false, nil
	}
	at := c.Where("rest_cherrypy")
	cfg = Config{Host: "0.0.0.0", AppPath: "/app", StaticPath: "/static", MaxBody: 1 << 20, TokenExpire: 12 * time.Hour}
	for k := range sec {
		if !slices.Contains(sectionKeys, k) && !slices.Contains(cherrypyOnly, k) {
			return cfg, false, fmt.Errorf("%s: rest_cherrypy: unknown key %q", at, k)
		}
	}
	str := func(k string, out *string) error {
		switch v := sec[k].(type) {
		case nil:
		case string:
			*out = v
		default:
			return fmt.Errorf("%s: rest_cherrypy: %s: want a string, got %v", at, k, v)
		}
		return nil
	}
	num := func(k string) (int64, bool, error) {
		switch v := sec[k].(type) {
		case nil:
			return 0, false, nil
		case int:
			return int64(v), true, nil
		case int64:
			return v, true, nil
		case uint64:
			return int64(v), true, nil
		}
		return 0, false, fmt.Errorf("%s: rest_cherrypy: %s: want a number, got %v", at, k, sec[k])
	}
	for k, out := range map[string]*string{"host": &cfg.Host, "ssl_crt": &cfg.SSLCrt, "ssl_key": &cfg.SSLKey, "app": &cfg.App,
		"app_path": &cfg.AppPath, "static": &cfg.Static, "static_path": &cfg.StaticPath} {
		if err := str(k, out); err != nil {
			return cfg, false, err
		}
	}
	port, ok, err := num("port")
	if err != nil {
		return cfg, false, err
	}
	if !ok || port <= 0 || port > 65535 {
		return cfg, false, fmt.Errorf("%s: rest_cherrypy: port: required, a TCP port (Salt's 8000 is usual)", at)
	}
	cfg.Port = int(port)
	if n, ok, err := num("max_request_body_size"); err != nil {
		return cfg, false, err
	} else if ok {
		cfg.MaxBody = n
	}
	if v, ok := sec["disable_ssl"].(bool); ok {
		cfg.DisableSSL = v
	}
	if v, ok := sec["webhook_disable_auth"].(bool); ok {
		cfg.WebhookNoAuth = v
	}
	if !cfg.DisableSSL && (cfg.SSLCrt == "" || cfg.SSLKey == "") {
		return cfg, false, fmt.Errorf("%s: rest_cherrypy: ssl_crt and ssl_key are required unless disable_ssl is True", at)
	}
	for _, p := range []*string{&cfg.AppPath, &cfg.StaticPath} {
		*p = "/" + strings.Trim(*p, "/")
	}

	var enabled []string
	if err := c.Decode("netapi_enable_clients", &enabled); err != nil {
		return cfg, false, err
	}
	for _, e := range enabled {
		if !slices.Contains(Clients, e) {
			return cfg, false, fmt.Errorf("%s: netapi_enable_clients: %q is not a client brine runs (%s)", c.Where("netapi_enable_clients"), e, strings.Join(Clients, ", "))
		}
	}
	cfg.Enabled = enabled
	var expire float64
	if c.Has("token_expire") {
		if err := c.Decode("token_expire", &expire); err != nil {
			return cfg, false, err
		}
		if expire <= 0 {
			return cfg, false, fmt.Errorf("%s: token_expire: want a positive number of seconds", c.Where("token_expire"))
		}
		cfg.TokenExpire = time.Duration(expire * float64(time.Second))
	}
	var ea map[string]any
	if err := c.Decode("external_auth", &ea); err != nil {
		return cfg, false, err
	}
	if len(ea) == 0 {
		return cfg, false, errors.New(at + ": rest_cherrypy: salt-api needs external_auth (the file eauth) to log anyone in")
	}
	if cfg.EAuth, err = ParseEAuth(ea, c.Where); err != nil {
		return cfg, false, err
	}
	return cfg, true, nil
}
