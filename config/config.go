// Package config reads the master configuration: Salt's layout (a `master`
// file plus `master.d/*.conf`, YAML, later files overriding earlier ones key by
// key) with brine's settings beside Salt's. Every package decodes its own
// section through Decode, so an error names the file and line it came from.
package config

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// DefaultDir is where the master looks for its configuration, as Salt's
// /etc/salt.
const DefaultDir = "/etc/brine"

// Master is the merged configuration of one master: the files read (a
// Tree, which answers Has, Decode, Where… for every section) and the core
// settings decoded from them.
type Master struct {
	*Tree
	// Settings are the core settings every part of the master uses.
	Settings Settings
}

type source struct {
	file string
	key  ast.Node // the key, for its line
	node ast.Node // the value
}

// Settings holds the core keys. Key names follow Salt where Salt has the
// concept (interface, publish_port, ret_port, max_event_size).
type Settings struct {
	// ID names this master in event sources (brine://<id>/…); default the hostname.
	ID string `yaml:"id"`
	// DataDir holds the event store and keys; default $BRINE_DATA or ./brine-data.
	DataDir string `yaml:"data_dir"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
	// LogFormat is text or json.
	LogFormat string `yaml:"log_format"`
	// MaxEventSize bounds an encoded event, in bytes.
	MaxEventSize int `yaml:"max_event_size"`
	// Interface is the address the ZeroMQ gateway binds.
	Interface string `yaml:"interface"`
	// PublishPort streams events to watchers (Salt's 4505).
	PublishPort int `yaml:"publish_port"`
	// RetPort takes requests and events from clients (Salt's 4506).
	RetPort int `yaml:"ret_port"`
	// KeyFile holds the shared key clients authenticate with; created on
	// first start when missing. Default <data_dir>/master.key.
	KeyFile string `yaml:"key_file"`
	// Bus configures the event store.
	Bus BusSettings `yaml:"bus"`
	// Gateway bounds what connections to 4505/4506 may cost before they
	// authenticate (docs/security.md); zero values take the defaults.
	Gateway GatewaySettings `yaml:"gateway"`
	// Strict refuses to start with a configuration key brine does not know
	// (also --strict); by default such keys are warnings.
	Strict bool `yaml:"strict"`

	// AutoAccept accepts every new agent key without an operator (Salt's
	// auto_accept; for labs only).
	AutoAccept bool `yaml:"auto_accept"`
	// AutosignFile lists agent ids (ids, globs or regular expressions, one
	// a line, # comments) whose new keys are accepted; relative paths are
	// relative to the configuration directory.
	AutosignFile string `yaml:"autosign_file"`
	// AutorejectFile lists agent ids whose new keys are rejected, in the
	// same format; it wins over every way of accepting.
	AutorejectFile string `yaml:"autoreject_file"`
	// AutosignGrainsDir holds one file per grain name listing values that
	// accept an agent sending them in its autosign_grains.
	AutosignGrainsDir string `yaml:"autosign_grains_dir"`
	// AuthEvents fires salt/auth for every agent hello (default true).
	AuthEvents bool `yaml:"auth_events"`
	// MaxPendingKeys bounds the keys waiting in pending (default 1000;
	// 0 lifts the bound): a hello from a new id beyond it is turned away
	// and stores nothing, so a flood of made-up ids cannot grow the key
	// store without end. brine's; Salt has no bound.
	MaxPendingKeys int `yaml:"max_pending_keys"`
	// PresenceEvents fires salt/presence/present and salt/presence/change
	// every LoopInterval (Salt's presence_events).
	PresenceEvents bool `yaml:"presence_events"`
	// LoopInterval is the period of the master's maintenance loop in
	// seconds (Salt's loop_interval, default 60).
	LoopInterval int `yaml:"loop_interval"`
}

// GatewaySettings are the gateway's connection limits; a zero value
// takes the gateway's default.
type GatewaySettings struct {
	// HandshakeTimeout bounds a connection from accept to the end of its
	// CURVE handshake, and an agent's connection until its first request.
	HandshakeTimeout time.Duration `yaml:"handshake_timeout"`
	// BootstrapIdle and BootstrapLifetime bound an unencrypted connection
	// (which may only ask for the master's public key).
	BootstrapIdle     time.Duration `yaml:"bootstrap_idle"`
	BootstrapLifetime time.Duration `yaml:"bootstrap_lifetime"`
	// MaxUnauthenticated and MaxUnauthenticatedPerAddress cap connections
	// that have not completed their handshake, in all and per address.
	MaxUnauthenticated           int `yaml:"max_unauthenticated"`
	MaxUnauthenticatedPerAddress int `yaml:"max_unauthenticated_per_address"`
}

// BusSettings select the event store backend.
type BusSettings struct {
	// URL of an existing NATS server or cluster; empty embeds one.
	URL string `yaml:"url"`
	// Listen exposes the embedded NATS server on a loopback address.
	Listen string `yaml:"listen"`
	// MaxAge is how long events are kept (Go duration, e.g. 168h).
	MaxAge time.Duration `yaml:"max_age"`
	// Replicas of the event stream and every bucket on a cluster (default
	// 1, or 3 with cluster set); every master must say the same.
	Replicas int `yaml:"replicas"`
	// Credentials is a NATS credentials file (.creds) for url.
	Credentials string `yaml:"credentials"`
	// User and Password authenticate to url.
	User     string `yaml:"user"`
	Password string `yaml:"password"`
	// TLS secures the connection to url.
	TLS TLSFiles `yaml:"tls"`
	// Cluster joins this master's embedded NATS server to the other
	// masters' (nats-server's clustering): three masters, one JetStream
	// cluster.
	Cluster ClusterSettings `yaml:"cluster"`
}

// ClusterSettings are bus.cluster.
type ClusterSettings struct {
	// Name of the cluster, the same on every master.
	Name string `yaml:"name"`
	// Listen is host:port for the other masters' routes.
	Listen string `yaml:"listen"`
	// Advertise is the host:port the others reach this master at, when
	// not Listen.
	Advertise string `yaml:"advertise"`
	// Routes are every master's route address (this one's may be listed).
	Routes []string `yaml:"routes"`
	// User and Password are required of every route when set.
	User     string `yaml:"user"`
	Password string `yaml:"password"`
	// TLS secures the routes.
	TLS TLSFiles `yaml:"tls"`
}

// Enabled reports whether a cluster is configured.
func (c ClusterSettings) Enabled() bool { return c.Listen != "" || len(c.Routes) > 0 || c.Name != "" }

// TLSFiles name PEM files.
type TLSFiles struct {
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Set reports whether any file is named.
func (t TLSFiles) Set() bool { return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" }

// Defaults returns the settings used when a key is absent.
func Defaults() Settings {
	host, _ := os.Hostname()
	if host == "" {
		host = "master"
	}
	dataDir := os.Getenv("BRINE_DATA")
	if dataDir == "" {
		dataDir = "brine-data"
	}
	return Settings{
		ID:             host,
		DataDir:        dataDir,
		LogLevel:       "info",
		LogFormat:      "text",
		MaxEventSize:   1 << 20,
		Interface:      "127.0.0.1",
		PublishPort:    4505,
		RetPort:        4506,
		Bus:            BusSettings{MaxAge: 7 * 24 * time.Hour},
		AuthEvents:     true,
		MaxPendingKeys: 1000,
		LoopInterval:   60,
	}
}

// Load reads path: a directory holding `master` and `master.d/*.conf`, or a
// single file. A missing DefaultDir is not an error (brine runs with no
// configuration at all); any other missing path is.
func Load(path string) (*Master, error) {
	return load(path, path != DefaultDir)
}

func load(path string, mustExist bool) (*Master, error) {
	t, err := LoadTree(path, "master", mustExist)
	if err != nil {
		return nil, err
	}
	m := &Master{Tree: t, Settings: Defaults()}
	if err := t.DecodeAll(&m.Settings); err != nil {
		return nil, err
	}
	if m.Settings.KeyFile == "" {
		m.Settings.KeyFile = filepath.Join(m.Settings.DataDir, "master.key")
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Fingerprint describes the files Load(path) reads, with their sizes and
// modification times, so that a caller can tell when one changed, appeared
// or went away.
func Fingerprint(path string) []string {
	files, err := treeFiles(path, "master", path != DefaultDir)
	if err != nil {
		return []string{err.Error()}
	}
	fp := make([]string, 0, len(files))
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			fp = append(fp, f+" "+err.Error())
			continue
		}
		fp = append(fp, fmt.Sprintf("%s %d %d", f, fi.Size(), fi.ModTime().UnixNano()))
	}
	return fp
}

// Decoder reads one top-level key of a configuration, with errors naming
// the file and line it came from; *Master is one. Every part of brine that
// reads a section of the configuration takes a Decoder.
type Decoder interface {
	// Has reports whether the key is set.
	Has(key string) bool
	// Decode decodes the key's value into out; nothing when it is absent.
	Decode(key string, out any) error
	// Source names the file that set the key last ("" when none did).
	Source(key string) string
	// Where is "file:line" of the key, for messages about its value.
	Where(key string) string
	// CheckKeys reports the first key under path (a top-level key, then
	// nested keys, "*" for every child) that is not in known, with file,
	// line and a suggestion.
	CheckKeys(known []string, path ...string) error
}

// validate checks the core settings; errors name the file and line of the
// key at fault.
func (m *Master) validate() error {
	s := m.Settings
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%s: %s: %s", m.Where(key), key, fmt.Sprintf(format, args...))
	}
	switch s.LogLevel {
	case "debug", "info", "warn", "warning", "error":
	default:
		return bad("log_level", "%q: want debug, info, warn or error", s.LogLevel)
	}
	switch s.LogFormat {
	case "text", "json":
	default:
		return bad("log_format", "%q: want text or json", s.LogFormat)
	}
	for _, p := range []struct {
		key  string
		port int
	}{{"publish_port", s.PublishPort}, {"ret_port", s.RetPort}} {
		if p.port < 0 || p.port > 65535 {
			return bad(p.key, "%d is not a port (0 to 65535)", p.port)
		}
	}
	if s.MaxEventSize < 1024 {
		return bad("max_event_size", "%d is below 1024 bytes", s.MaxEventSize)
	}
	if err := m.validateBus(); err != nil {
		return err
	}
	if s.LoopInterval < 1 {
		return bad("loop_interval", "%d: want a number of seconds, at least 1", s.LoopInterval)
	}
	return nil
}

// validateBus checks the bus section: its keys, replicas, and a cluster
// that is complete and not combined with url.
func (m *Master) validateBus() error {
	b := m.Settings.Bus
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: bus: %s", m.Where("bus"), fmt.Sprintf(format, args...))
	}
	for _, path := range [][]string{{"bus"}, {"bus", "cluster"}} {
		var known []string
		if len(path) == 1 {
			known = YAMLKeys(BusSettings{})
		} else {
			known = YAMLKeys(ClusterSettings{})
		}
		if err := m.CheckKeys(known, path...); err != nil {
			return err
		}
	}
	for _, path := range [][]string{{"bus", "tls"}, {"bus", "cluster", "tls"}} {
		if err := m.CheckKeys(YAMLKeys(TLSFiles{}), path...); err != nil {
			return err
		}
	}
	if b.Replicas < 0 || b.Replicas > 5 {
		return bad("replicas %d: want 1 to 5 (JetStream's limit)", b.Replicas)
	}
	c := b.Cluster
	if !c.Enabled() {
		return nil
	}
	if b.URL != "" {
		return bad("cluster and url exclude each other: masters either cluster their embedded servers or share an external NATS cluster")
	}
	if c.Name == "" {
		return bad("cluster: name is required (the same on every master)")
	}
	if c.Listen == "" {
		return bad("cluster: listen is required (host:port for the other masters' routes)")
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return bad("cluster: listen %q: %v", c.Listen, err)
	}
	if len(c.Routes) == 0 {
		return bad("cluster: routes is required (every master's cluster address)")
	}
	if (c.User == "") != (c.Password == "") {
		return bad("cluster: user and password go together")
	}
	if c.TLS.Set() && (c.TLS.CertFile == "" || c.TLS.KeyFile == "") {
		return bad("cluster: tls needs cert_file and key_file (and ca_file to verify the other masters)")
	}
	return nil
}

// Loopback reports whether an interface address (an IP, a host name, or an
// ipc:// endpoint) stays on this machine.
func Loopback(addr string) bool {
	if strings.HasPrefix(addr, "ipc://") || addr == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(addr, "[]"))
	return err == nil && ip.IsLoopback()
}

// oneLine turns goccy's multi-line error (with a source excerpt) into the
// single line a CLI prints: "[5:7] message" becomes "line 5 column 7: message".
func oneLine(err error) string {
	msg := yaml.FormatError(err, false, false)
	msg = strings.TrimSpace(strings.SplitN(msg, "\n", 2)[0])
	var line, col int
	if n, _ := fmt.Sscanf(msg, "[%d:%d]", &line, &col); n == 2 {
		if i := strings.IndexByte(msg, ']'); i >= 0 {
			return fmt.Sprintf("line %d column %d:%s", line, col, msg[i+1:])
		}
	}
	return msg
}
