package agent

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/agent/grains"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/mine"
)

// Config is an agent's configuration: Salt's minion keys, with brine's
// defaults where Salt's are poor (each says so).
type Config struct {
	// Master is the master's host, default "salt" as Salt's, or a list of
	// them (see MasterType). An entry may carry its port, as Salt's
	// master:port syntax: host:4506, [2001:db8::1]:4506.
	Master Masters `yaml:"master"`
	// MasterPort is the master's request port (Salt's ret_port), 4506.
	MasterPort int `yaml:"master_port"`
	// MasterType is what a list of masters means, Salt's: str (the
	// default) connects to all of them at once (hot multi-master),
	// failover to one at a time, in order, moving on when it is lost.
	MasterType string `yaml:"master_type"`
	// MasterAliveInterval is seconds between checks that the connected
	// master still answers; one that does not within as long (at least 2
	// s, at most 10) is left. Salt's default is 0 (no check); brine's is
	// 3 with master_type failover, so that a master that hangs without
	// closing its connections (a SIGSTOP, a wedged host) is left within
	// 10 s, and 0 otherwise, as Salt.
	MasterAliveInterval int `yaml:"master_alive_interval"`
	// MasterFailback makes a failover agent connected to another master
	// than the first of its list check, every MasterFailbackInterval
	// seconds (0: every MasterAliveInterval, as Salt), whether the first
	// answers again, and return to it.
	MasterFailback         bool `yaml:"master_failback"`
	MasterFailbackInterval int  `yaml:"master_failback_interval"`
	// RandomMaster shuffles the list of masters once at start (all but the
	// first with master_failback, which must know where to return);
	// MasterShuffle is its deprecated Salt name.
	RandomMaster  bool `yaml:"random_master"`
	MasterShuffle bool `yaml:"master_shuffle"`
	// RetryDNS is seconds between attempts to resolve a master's name that
	// does not resolve (Salt's, default 30; 0: stop at once), at most
	// RetryDNSCount times (unset: forever). A failover agent moves on to
	// the next master of its list instead, as Salt's.
	RetryDNS      float64 `yaml:"retry_dns"`
	RetryDNSCount *int    `yaml:"retry_dns_count"`
	// PublishPort is the master's publish port, 4505. brine's agents take
	// jobs over their one request connection, so it is only checked.
	PublishPort int `yaml:"publish_port"`
	// ID is the agent's id; default the machine's fully qualified name,
	// as Salt, remembered in <config dir>/minion_id once chosen.
	ID string `yaml:"id"`
	// Grains are static grains, overriding gathered ones.
	Grains map[string]any `yaml:"grains"`
	// MineFunctions are the functions whose results the agent writes to
	// the mine: {name: [args]} or {alias: {mine_function: fun, …kwargs}}.
	// Default: network.ip_addrs and network.ip_addrs6; the master also
	// takes the fqdn and MAC addresses from the grains the agent sends,
	// which is all dnsmasq reservations and ddns.sync need.
	MineFunctions map[string]any `yaml:"mine_functions"`
	// MineInterval is minutes between mine updates (default 60, as Salt;
	// the functions also run at start and after every reconnect).
	MineInterval int `yaml:"mine_interval"`
	// AcceptanceWaitTime is seconds between authentication attempts while
	// the key is pending (default 10, as Salt). brine's master also tells
	// a connected pending agent the moment its key is accepted.
	AcceptanceWaitTime int `yaml:"acceptance_wait_time"`
	// AcceptanceWaitTimeMax caps the wait as it grows (default 300; Salt's
	// 0 keeps 1,000 pending agents knocking every 10 s forever).
	AcceptanceWaitTimeMax int `yaml:"acceptance_wait_time_max"`
	// RandomReauthDelay is the most seconds a reconnect is delayed by at
	// random (default 10, as Salt), so that agents do not all return at
	// the same moment after a master restart.
	RandomReauthDelay int `yaml:"random_reauth_delay"`
	// MasterFinger pins the master's public key (its fingerprint, as
	// `brine key -F master` shows). Unset, the first key seen is recorded
	// in pki_dir and required afterwards (trust on first use).
	MasterFinger string `yaml:"master_finger"`
	// AutosignGrains are grains sent with the key for the master's
	// autosign_grains_dir.
	AutosignGrains []string `yaml:"autosign_grains"`
	// StartEventGrains are grains included in the start event.
	StartEventGrains []string `yaml:"start_event_grains"`
	// LogLevel is debug, info, warning or error (default info; Salt's
	// warning hides the connection story an operator needs).
	LogLevel string `yaml:"log_level"`
	// LogFormat is text or json (brine's).
	LogFormat string `yaml:"log_format"`
	// PKIDir holds the agent's key pair and the master's key (default
	// <config dir>/pki/minion, as Salt's /etc/salt/pki/minion).
	PKIDir string `yaml:"pki_dir"`
	// CacheDir holds the queue of events waiting for the master (default
	// DefaultCacheDir: /var/cache/brine/minion, as Salt's; on Windows
	// C:\ProgramData\brine\var\cache\minion).
	CacheDir string `yaml:"cachedir"`
	// QueueMax bounds the events kept while the master is away (brine's;
	// default 100,000). Salt drops every event sent while it is away.
	QueueMax int `yaml:"event_queue_max"`
	// MaxReturnSize bounds a job's return, in bytes of JSON (brine's;
	// default 900,000, under the master's default max_event_size of 1 MiB):
	// a larger return is cut, with a note saying how much was kept, rather
	// than refused by the master and lost.
	MaxReturnSize int `yaml:"max_return_size"`
	// FileClient is Salt's file_client: "remote" (the default) fetches
	// salt:// files and the pillar from the master; "local" reads
	// FileRoots and compiles the pillar from PillarRoots here, as a
	// masterless salt-minion does (Packer images, Vagrant, CI).
	FileClient string `yaml:"file_client"`
	// FileRoots and PillarRoots are Salt's, used with file_client: local
	// (default: base /srv/salt and base /srv/pillar, as Salt's).
	FileRoots   map[string][]string `yaml:"file_roots"`
	PillarRoots map[string][]string `yaml:"pillar_roots"`
}

// File clients (file_client).
const (
	FileClientRemote = "remote"
	FileClientLocal  = "local"
)

// Local says whether salt:// files and the pillar come from this
// machine's file_roots and pillar_roots rather than the master.
func (c *Config) Local() bool { return c.FileClient == FileClientLocal }

// Masterless applies salt-call's --local, --file-root and --pillar-root:
// --local is file_client local, and a root given becomes the base
// environment's only directory (absolute, as Salt makes it), replacing
// what the configuration set.
func (c *Config) Masterless(local bool, fileRoot, pillarRoot string) error {
	if local {
		c.FileClient = FileClientLocal
	}
	for _, r := range []struct {
		flag, dir string
		dst       *map[string][]string
	}{{"--file-root", fileRoot, &c.FileRoots}, {"--pillar-root", pillarRoot, &c.PillarRoots}} {
		if r.dir == "" {
			continue
		}
		abs, err := filepath.Abs(r.dir)
		if err != nil {
			return fmt.Errorf("%s %s: %w", r.flag, r.dir, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fmt.Errorf("%s %s: not a directory", r.flag, r.dir)
		}
		*r.dst = map[string][]string{"base": {abs}}
	}
	return nil
}

// LocalRoots are the file_roots and pillar_roots a local file client
// reads, Salt's defaults where the configuration sets none.
func (c *Config) LocalRoots() (files, pillar map[string][]string) {
	files, pillar = c.FileRoots, c.PillarRoots
	if len(files) == 0 {
		files = map[string][]string{"base": {"/srv/salt"}}
	}
	if len(pillar) == 0 {
		pillar = map[string][]string{"base": {"/srv/pillar"}}
	}
	return files, pillar
}

// Masters is one master host or a list of them.
type Masters []string

// UnmarshalYAML accepts a string or a list of strings.
func (m *Masters) UnmarshalYAML(unmarshal func(any) error) error {
	var one string
	if err := unmarshal(&one); err == nil {
		*m = Masters{one}
		return nil
	}
	var list []string
	if err := unmarshal(&list); err != nil {
		return errors.New("want a host name or a list of host names")
	}
	*m = list
	return nil
}

// Defaults returns the configuration of an agent with no configuration
// file, for config directory dir.
func Defaults(dir string) Config {
	return Config{
		Master:                Masters{"salt"},
		MasterPort:            4506,
		MasterType:            MasterTypeStr,
		RetryDNS:              30,
		PublishPort:           4505,
		MineInterval:          60,
		AcceptanceWaitTime:    10,
		AcceptanceWaitTimeMax: 300,
		RandomReauthDelay:     10,
		LogLevel:              "info",
		LogFormat:             "text",
		PKIDir:                filepath.Join(dir, "pki", "minion"),
		CacheDir:              DefaultCacheDir,
		QueueMax:              100_000,
		MaxReturnSize:         900_000,
		FileClient:            FileClientRemote,
	}
}

// DefaultMineFunctions are the mine functions of an agent that sets none.
func DefaultMineFunctions() map[string]any {
	return map[string]any{
		"network.ip_addrs":  []any{},
		"network.ip_addrs6": []any{},
	}
}

// Loaded is a configuration with where it came from.
type Loaded struct {
	Config
	// Dir is the configuration directory (or file) it was read from.
	Dir string
	// Tree is the raw configuration, for messages naming file and line.
	Tree *config.Tree
	// Warnings are keys brine does not know or does not use, with file
	// and line; the agent logs them (strict mode refuses them).
	Warnings []config.Problem
	// Notes are settings that have no effect as written (Salt warns of
	// the same); the agent logs them.
	Notes []string
}

// LoadConfig reads dir/minion and dir/minion.d/*.conf (or dir as one
// file). A missing DefaultConfigDir is no error: an agent runs with
// defaults (and the master "salt").
func LoadConfig(dir string) (*Loaded, error) {
	tree, err := config.LoadTree(dir, "minion", dir != DefaultConfigDir)
	if err != nil {
		return nil, err
	}
	base := dir
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		base = filepath.Dir(dir)
	}
	l := &Loaded{Config: Defaults(base), Dir: base, Tree: tree}
	if err := tree.DecodeAll(&l.Config); err != nil {
		return nil, err
	}
	l.Warnings = tree.Unknown(append(config.YAMLKeys(Config{}), ModuleOptions...), saltMinionKeys)
	if err := l.validate(); err != nil {
		return nil, err
	}
	if l.MineFunctions == nil {
		l.MineFunctions = DefaultMineFunctions()
	}
	return l, nil
}

// validate checks every value, naming the file and line of the key at fault.
func (l *Loaded) validate() error {
	c := &l.Config
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%s: %s: %s", l.Tree.Where(key), key, fmt.Sprintf(format, args...))
	}
	if len(c.Master) == 0 {
		return bad("master", "no master given")
	}
	for _, h := range c.Master {
		if h == "" || strings.ContainsAny(h, " /") {
			return bad("master", "%q is not a host name or address", h)
		}
		if _, _, err := splitMaster(h, c.MasterPort); err != nil {
			return bad("master", "%v", err)
		}
	}
	if err := l.validateMasters(bad); err != nil {
		return err
	}
	for _, p := range []struct {
		key  string
		port int
	}{{"master_port", c.MasterPort}, {"publish_port", c.PublishPort}} {
		if p.port < 1 || p.port > 65535 {
			return bad(p.key, "%d is not a port (1 to 65535)", p.port)
		}
	}
	if c.ID != "" {
		if err := mine.ValidateID(c.ID); err != nil {
			return bad("id", "%v", err)
		}
	}
	for _, n := range []struct {
		key string
		v   int
		min int
	}{
		{"mine_interval", c.MineInterval, 0}, {"acceptance_wait_time", c.AcceptanceWaitTime, 1},
		{"acceptance_wait_time_max", c.AcceptanceWaitTimeMax, 0}, {"random_reauth_delay", c.RandomReauthDelay, 0},
		{"event_queue_max", c.QueueMax, 1}, {"max_return_size", c.MaxReturnSize, 1024},
		{"master_alive_interval", c.MasterAliveInterval, 0}, {"master_failback_interval", c.MasterFailbackInterval, 0},
	} {
		if n.v < n.min {
			return bad(n.key, "%d is below %d", n.v, n.min)
		}
	}
	if c.AcceptanceWaitTimeMax != 0 && c.AcceptanceWaitTimeMax < c.AcceptanceWaitTime {
		return bad("acceptance_wait_time_max", "%d is below acceptance_wait_time (%d)", c.AcceptanceWaitTimeMax, c.AcceptanceWaitTime)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "warning", "error", "critical", "quiet", "garbage", "trace", "all", "profile":
	default:
		return bad("log_level", "%q: want debug, info, warning or error", c.LogLevel)
	}
	switch c.FileClient {
	case FileClientRemote, FileClientLocal:
	default:
		return bad("file_client", "%q: want remote (files and pillar from the master) or local (file_roots and pillar_roots here)", c.FileClient)
	}
	for key, roots := range map[string]map[string][]string{"file_roots": c.FileRoots, "pillar_roots": c.PillarRoots} {
		for env, dirs := range roots {
			if env == "" || len(dirs) == 0 {
				return bad(key, "environment %q: want a name and a list of directories", env)
			}
		}
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return bad("log_format", "%q: want text or json", c.LogFormat)
	}
	if c.MasterFinger != "" {
		f, err := curve.ParseFingerprint(c.MasterFinger)
		if err != nil {
			return bad("master_finger", "%v", err)
		}
		c.MasterFinger = f // compared as curve.Fingerprint prints it
	}
	for name, spec := range c.MineFunctions {
		if _, _, err := MineSpec(name, spec); err != nil {
			return bad("mine_functions", "%v", err)
		}
	}
	for _, d := range []*string{&c.PKIDir, &c.CacheDir} {
		if !filepath.IsAbs(*d) {
			*d = filepath.Join(l.Dir, *d)
		}
	}
	return nil
}

// MineSpec reads one mine_functions entry: the function to run and its
// arguments. `name: [args]` runs name; `alias: {mine_function: fun, k: v}`
// (or a list of one-key mappings, Salt's other spelling) runs fun with the
// keywords.
func MineSpec(name string, spec any) (fun string, args []any, err error) {
	kwargs := map[string]any{}
	switch t := spec.(type) {
	case nil:
	case []any:
		for _, item := range t {
			if m, ok := item.(map[string]any); ok {
				for k, v := range m {
					kwargs[k] = v
				}
				continue
			}
			args = append(args, item)
		}
	case map[string]any:
		kwargs = t
	default:
		return "", nil, fmt.Errorf("%s: want a list of arguments or a mapping, got %T", name, spec)
	}
	fun = name
	if f, ok := kwargs["mine_function"]; ok {
		s, ok := f.(string)
		if !ok || s == "" {
			return "", nil, fmt.Errorf("%s: mine_function must name a function", name)
		}
		fun = s
		delete(kwargs, "mine_function")
	}
	if !strings.Contains(fun, ".") {
		return "", nil, fmt.Errorf("%s: %q is not a module.function name", name, fun)
	}
	if len(kwargs) > 0 {
		args = jobs.PackArgs(args, kwargs)
	}
	return fun, args, nil
}

// ResolveID returns the agent's id: id from the configuration; else the
// one remembered in dir/minion_id; else the machine's fully qualified name,
// remembered there when dir is writable (Salt's minion_id_caching), so that
// a later change of host name does not make the agent a stranger.
func ResolveID(id, dir string) (string, error) {
	if id != "" {
		return id, nil
	}
	cache := filepath.Join(dir, "minion_id")
	if b, err := os.ReadFile(cache); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			if err := mine.ValidateID(s); err != nil {
				return "", fmt.Errorf("%s: %w", cache, err)
			}
			return s, nil
		}
	}
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("agent id: no id configured and no host name: %w", err)
	}
	fqdn := grains.FQDN(h)
	if err := mine.ValidateID(fqdn); err != nil {
		return "", fmt.Errorf("agent id: the host name %q is not a valid id (set id: in the minion config): %w", fqdn, err)
	}
	_ = os.WriteFile(cache, []byte(fqdn+"\n"), 0o644)
	return fqdn, nil
}

// Addrs returns the masters' endpoints, in the order configured.
func (c *Config) Addrs() []string {
	out := make([]string, len(c.Master))
	for i, h := range c.Master {
		host, port, err := splitMaster(h, c.MasterPort)
		if err != nil { // refused by validate; kept whole for the error it makes
			host, port = h, c.MasterPort
		}
		out[i] = "tcp://" + net.JoinHostPort(host, strconv.Itoa(port))
	}
	return out
}

// splitMaster reads one master entry, Salt's prep_ip_port: host, host:port,
// [v6]:port, [v6], or a bare IPv6 address; port is master_port unless
// the entry gives one.
func splitMaster(s string, port int) (string, int, error) {
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return "", 0, fmt.Errorf("%q: no closing ] after the IPv6 address", s)
		}
		host, rest := s[1:end], s[end+1:]
		if net.ParseIP(host) == nil {
			return "", 0, fmt.Errorf("%q: %q is not an IPv6 address", s, host)
		}
		if rest == "" {
			return host, port, nil
		}
		p, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return "", 0, fmt.Errorf("%q: want [address]:port", s)
		}
		n, err := parsePort(s, p)
		return host, n, err
	case strings.Count(s, ":") == 1:
		host, p, _ := strings.Cut(s, ":")
		if host == "" {
			return "", 0, fmt.Errorf("%q: no host before the port", s)
		}
		n, err := parsePort(s, p)
		return host, n, err
	case strings.Contains(s, ":"):
		if net.ParseIP(s) == nil {
			return "", 0, fmt.Errorf("%q is not a host name, host:port or IPv6 address (write [address]:port)", s)
		}
	}
	return s, port, nil
}

func parsePort(entry, p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("%q: %q is not a port (1 to 65535)", entry, p)
	}
	return n, nil
}

// Durations the configuration's counts stand for.
func (c *Config) mineEvery() time.Duration { return time.Duration(c.MineInterval) * time.Minute }

func (c *Config) acceptWait() (first, max time.Duration) {
	first = time.Duration(c.AcceptanceWaitTime) * time.Second
	max = time.Duration(c.AcceptanceWaitTimeMax) * time.Second
	if max == 0 {
		max = first
	}
	return first, max
}

// saltMinionKeys are options of Salt's minion brine does not use; setting
// one is reported as such rather than as a typo.
var saltMinionKeys = []string{
	"user", "sudo_user", "ipv6", "master_tries", "auth_tries", "auth_timeout",
	"auth_safemode", "ping_interval", "sock_dir", "backup_mode", "extension_modules", "module_dirs",
	"hash_type", "use_master_when_local", "fileserver_backend",
	"top_file", "environment", "renderer",
	"multiprocessing", "process_count_max", "log_file", "log_level_logfile", "log_fmt_console", "log_fmt_logfile",
	"transport", "ipc_mode", "tcp_pub_port", "tcp_pull_port", "recon_default", "recon_max", "recon_randomize",
	"return_retry_timer", "return_retry_timer_max", "loop_interval", "grains_refresh_every", "grains_cache",
	"minion_id_caching", "append_domain", "minion_id_lowercase", "verify_env", "open_mode", "keysize",
	"permissive_pki_access", "cache_jobs", "minion_pillar_cache", "schedule", "mine_enabled",
	"mine_return_job", "pub_ret", "return", "returner_dirs", "disable_modules", "whitelist_modules",
	"providers", "enable_legacy_startup_events", "zmq_filtering", "tcp_keepalive",
	"tcp_keepalive_idle", "tcp_keepalive_cnt", "tcp_keepalive_intvl", "minion_sign_messages", "verify_master_pubkey_sign",
	"master_sign_key_name", "always_verify_signature", "autoload_dynamic_modules", "clean_dynamic_modules",
	"pillar_cache", "pidfile", "conf_file", "root_dir",
}
