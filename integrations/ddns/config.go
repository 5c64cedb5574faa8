package ddns

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/config"
)

// Defaults for settings nobody set.
const (
	DefaultPort    = 53
	DefaultTTL     = 300
	DefaultTimeout = 5 * time.Second
	DefaultRetries = 3
)

// ErrConfig: the `ddns:` section or a call's arguments are unusable.
var ErrConfig = errors.New("ddns: invalid setting")

// Settings say how to reach and sign for a zone. Each may be set at the top
// of the `ddns:` section, per zone under `zones:`, or per call (Salt's
// argument names); the most specific wins.
type Settings struct {
	Nameserver   string `yaml:"nameserver" json:"nameserver,omitempty"`
	Port         int    `yaml:"port" json:"port,omitempty"`
	Keyfile      string `yaml:"keyfile" json:"keyfile,omitempty"`
	Keyname      string `yaml:"keyname" json:"keyname,omitempty"`
	Keyalgorithm string `yaml:"keyalgorithm" json:"keyalgorithm,omitempty"`
	// Timeout is per exchange with the server, in seconds.
	Timeout float64 `yaml:"timeout" json:"timeout,omitempty"`
	TTL     int     `yaml:"ttl" json:"ttl,omitempty"`
}

// InlineKey is a TSIG key written in the configuration itself. Printed or
// marshalled, it shows the algorithm only: configurations end up in logs.
type InlineKey struct {
	Algorithm string `yaml:"algorithm"`
	Secret    string `yaml:"secret"`
}

// String hides the secret.
func (k InlineKey) String() string { return "{" + k.Algorithm + " secret:<redacted>}" }

// GoString hides the secret from %#v.
func (k InlineKey) GoString() string { return k.String() }

// MarshalJSON hides the secret.
func (k InlineKey) MarshalJSON() ([]byte, error) {
	return []byte(`{"algorithm":"` + k.Algorithm + `","secret":"<redacted>"}`), nil
}

// Config is the master configuration's `ddns:` section:
//
//	ddns:
//	  nameserver: 10.0.0.1        # Settings: defaults for every call
//	  keyfile: /etc/brine/ddns.key  # Salt JSON keyring or BIND key file
//	  keyname: ddns-key
//	  ttl: 300
//	  retries: 3                  # extra attempts on timeout or SERVFAIL
//	  ownership: true             # TXT heritage=brine,owner=<owner> beside managed names
//	  owner: master1              # default: the master id
//	  keys: {ddns-key: {algorithm: hmac-sha256, secret: "…"}}   # inline keys
//	  zones:
//	    example.com: {nameserver: 10.0.0.2}
//	    20.10.in-addr.arpa: {keyname: rev-key}
//	  sync: {zone: example.com, targets: '*'}   # built-in sync with the mine
type Config struct {
	// Settings are the defaults of every call.
	Settings `yaml:",inline"`
	// Retries is how many times an exchange is repeated after a timeout, a
	// network error or SERVFAIL (default DefaultRetries).
	Retries *int `yaml:"retries"`
	// Ownership keeps a TXT heritage=brine,owner=<Owner> beside each managed
	// name and refuses to change names without it.
	Ownership bool `yaml:"ownership"`
	// Owner identifies this brine in ownership records (default: master id).
	Owner string `yaml:"owner"`
	// Keys are TSIG keys by name, for configurations without a key file.
	Keys map[string]InlineKey `yaml:"keys"`
	// Zones override Settings per zone (forward and reverse); they are
	// also the zones `brine ddns check` checks.
	Zones map[string]Settings `yaml:"zones"`
	// Sync, when set, keeps a zone in line with the mine (see SyncConfig).
	Sync *SyncConfig `yaml:"sync"`
}

// LoadConfig reads the `ddns:` section. owner is the default owner id (the
// master id).
func LoadConfig(d config.Decoder, owner string) (Config, error) {
	// A misspelt key is an error naming its line, not a setting silently
	// left at its default.
	for _, check := range []struct {
		known []string
		path  []string
	}{
		{config.YAMLKeys(Config{}), []string{ConfigKey}},
		{config.YAMLKeys(Settings{}), []string{ConfigKey, "zones", "*"}},
		{config.YAMLKeys(InlineKey{}), []string{ConfigKey, "keys", "*"}},
		{config.YAMLKeys(SyncConfig{}), []string{ConfigKey, "sync"}},
	} {
		if err := d.CheckKeys(check.known, check.path...); err != nil {
			return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	var c Config
	if err := d.Decode(ConfigKey, &c); err != nil {
		return Config{}, err
	}
	if c.Owner == "" {
		c.Owner = owner
	}
	return c, c.Validate()
}

// Validate checks what can be checked without the network: ports, zone
// names, algorithms, inline secrets.
func (c *Config) Validate() error {
	check := func(where string, s Settings) error {
		if s.Port < 0 || s.Port > 65535 {
			return fmt.Errorf("%w: %sport %d is not a port", ErrConfig, where, s.Port)
		}
		if s.Timeout < 0 || s.TTL < 0 {
			return fmt.Errorf("%w: %stimeout and ttl must not be negative", ErrConfig, where)
		}
		if s.Keyalgorithm != "" {
			if _, err := Algorithm(s.Keyalgorithm); err != nil {
				return fmt.Errorf("%sddns: %w", where, err)
			}
		}
		return nil
	}
	if err := check("ddns: ", c.Settings); err != nil {
		return err
	}
	if c.Retries != nil && *c.Retries < 0 {
		return fmt.Errorf("%w: ddns: retries %d is negative", ErrConfig, *c.Retries)
	}
	for z, s := range c.Zones {
		if _, ok := dns.IsDomainName(z); !ok {
			return fmt.Errorf("%w: ddns: zones: %q is not a domain name", ErrConfig, z)
		}
		if err := check("ddns: zones: "+z+": ", s); err != nil {
			return err
		}
	}
	if c.Sync != nil {
		if _, ok := dns.IsDomainName(c.Sync.Zone); !ok || c.Sync.Zone == "" {
			return fmt.Errorf("%w: ddns: sync: zone %q is not a domain name", ErrConfig, c.Sync.Zone)
		}
		if _, err := c.Sync.selector(); err != nil {
			return err
		}
	}
	for name, k := range c.Keys {
		alg := k.Algorithm
		if alg == "" {
			alg = DefaultAlgorithm
		}
		if _, err := NewKey(name, alg, k.Secret); err != nil {
			return fmt.Errorf("ddns: keys: %w", err)
		}
	}
	return nil
}

// zoneSettings returns the configured settings of zone, if any.
func (c *Config) zoneSettings(zone string) Settings {
	zone = dns.CanonicalName(zone)
	for z, s := range c.Zones {
		if dns.CanonicalName(z) == zone {
			return s
		}
	}
	return Settings{}
}

// ZoneNames lists the configured zones as FQDNs, sorted.
func (c *Config) ZoneNames() []string {
	out := make([]string, 0, len(c.Zones))
	for z := range c.Zones {
		out = append(out, dns.CanonicalName(z))
	}
	sort.Strings(out)
	return out
}

// zoneFor returns the longest configured zone holding fqdn ("" if none).
func (c *Config) zoneFor(fqdn string) string {
	best := ""
	for _, z := range c.ZoneNames() {
		if dns.IsSubDomain(z, fqdn) && len(z) > len(best) {
			best = z
		}
	}
	return best
}

// merge returns s with its empty fields filled from d.
func (s Settings) merge(d Settings) Settings {
	if s.Nameserver == "" {
		s.Nameserver = d.Nameserver
	}
	if s.Port == 0 {
		s.Port = d.Port
	}
	if s.Keyfile == "" {
		s.Keyfile = d.Keyfile
	}
	if s.Keyname == "" {
		s.Keyname = d.Keyname
	}
	if s.Keyalgorithm == "" {
		s.Keyalgorithm = d.Keyalgorithm
	}
	if s.Timeout == 0 {
		s.Timeout = d.Timeout
	}
	if s.TTL == 0 {
		s.TTL = d.TTL
	}
	return s
}

// target is everything one exchange with one zone's server needs.
type target struct {
	zone    string // canonical FQDN
	server  string // host:port
	key     *Key   // nil: unsigned
	timeout time.Duration
	retries int
	ttl     uint32
}

// target resolves the settings for zone: call over zone over top level over
// defaults, then loads the key.
func (c *Config) target(zone string, call Settings) (target, error) {
	s := call.merge(c.zoneSettings(zone)).merge(c.Settings).merge(Settings{
		Nameserver: "127.0.0.1", Port: DefaultPort, Timeout: DefaultTimeout.Seconds(), TTL: DefaultTTL,
	})
	t := target{
		zone:    dns.CanonicalName(zone),
		server:  net.JoinHostPort(s.Nameserver, strconv.Itoa(s.Port)),
		timeout: time.Duration(s.Timeout * float64(time.Second)),
		retries: DefaultRetries,
		ttl:     uint32(s.TTL),
	}
	if c.Retries != nil {
		t.retries = *c.Retries
	}
	var err error
	switch {
	case s.Keyfile != "":
		t.key, err = LoadKeyFile(s.Keyfile, s.Keyname, s.Keyalgorithm)
	case s.Keyname != "":
		k, ok := c.inlineKey(s.Keyname)
		if !ok {
			return t, fmt.Errorf("%w: keyname %q: no keyfile set and no such key under ddns: keys", ErrKey, s.Keyname)
		}
		alg := s.Keyalgorithm
		if alg == "" {
			alg = k.Algorithm
		}
		if alg == "" {
			alg = DefaultAlgorithm
		}
		t.key, err = NewKey(s.Keyname, alg, k.Secret)
	}
	return t, err
}

func (c *Config) inlineKey(name string) (InlineKey, bool) {
	for n, k := range c.Keys {
		if dns.CanonicalName(n) == dns.CanonicalName(name) {
			return k, true
		}
	}
	return InlineKey{}, false
}
