// Package dnsmasq keeps dnsmasq's DHCP reservations and host records in
// sync with the mine: it renders a dhcp-hostsfile (`mac,ip,name[,lease]`)
// and an addn-hosts file (`ip fqdn name`) from the host records, writes them
// atomically only when their content changes, and makes dnsmasq re-read them
// with SIGHUP, which it does without a restart and without losing leases.
//
// It replaces Salt's usual arrangement (a reaction running a script that
// reads the mine, rewrites dnsmasq's configuration and restarts it): bursts
// of changes coalesce into one write and one signal, addresses two hosts
// claim are reported instead of written, and dnsmasq's own configuration is
// never touched.
package dnsmasq

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/mine"
)

// ConfigKey is the master configuration key of this integration.
const ConfigKey = "dnsmasq"

// DefaultDebounce is how long the mine must be quiet before the files are
// regenerated: long enough to coalesce a map of VMs created together, short
// enough that a new host resolves well within a second.
const DefaultDebounce = 200 * time.Millisecond

// Config is the `dnsmasq:` block of the master configuration:
//
//	dnsmasq:
//	  hostsfile: /var/lib/brine/dnsmasq/dhcp-hosts # dnsmasq's dhcp-hostsfile=
//	  addn_hosts: /var/lib/brine/dnsmasq/hosts     # dnsmasq's addn-hosts=
//	  domain: cloud.example.com                    # appended to ids without a dot
//	  pidfile: /run/dnsmasq/dnsmasq.pid            # SIGHUP this pid after a write…
//	  reload_command: systemctl reload dnsmasq     # …or run this (a string for sh -c, or a list)
//	  targets: ['web*', 'db*']                     # mine ids to include (default all)
//	  range: 10.20.0.0/16                          # only addresses in these CIDRs
//	  lease_time: infinite                         # appended to DHCP reservations
//	  debounce: 200ms                              # quiet time before a write
type Config struct {
	HostsFile     string
	AddnHosts     string
	Domain        string
	PidFile       string
	ReloadCommand []string
	Targets       []string
	Ranges        []netip.Prefix
	LeaseTime     string
	Debounce      time.Duration

	targets []*fnmatch.Glob // Targets compiled by Validate
}

type rawConfig struct {
	HostsFile     string `yaml:"hostsfile"`
	AddnHosts     string `yaml:"addn_hosts"`
	Domain        string `yaml:"domain"`
	PidFile       string `yaml:"pidfile"`
	ReloadCommand any    `yaml:"reload_command"`
	Targets       any    `yaml:"targets"`
	Range         any    `yaml:"range"`
	LeaseTime     any    `yaml:"lease_time"`
	Debounce      any    `yaml:"debounce"`
}

var knownKeys = []string{"hostsfile", "addn_hosts", "domain", "pidfile", "reload_command", "targets", "range", "lease_time", "debounce"}

// ErrConfig reports a `dnsmasq:` block that cannot be used.
var ErrConfig = errors.New("bad dnsmasq configuration")

// LoadConfig reads the `dnsmasq:` block. It returns nil when the block is
// absent (the integration is off).
func LoadConfig(d config.Decoder) (*Config, error) {
	if !d.Has(ConfigKey) {
		return nil, nil
	}
	var keys map[string]any
	if err := d.Decode(ConfigKey, &keys); err != nil {
		return nil, err
	}
	if keys == nil {
		return nil, nil
	}
	if err := d.CheckKeys(knownKeys, ConfigKey); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	where := d.Source(ConfigKey) + ": " + ConfigKey
	var raw rawConfig
	if err := d.Decode(ConfigKey, &raw); err != nil {
		return nil, err
	}
	c, err := raw.parse()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, where, err)
	}
	return c, nil
}

func (raw *rawConfig) parse() (*Config, error) {
	c := &Config{HostsFile: raw.HostsFile, AddnHosts: raw.AddnHosts, Domain: strings.Trim(raw.Domain, "."), PidFile: raw.PidFile}
	var err error
	if c.ReloadCommand, err = commandValue(raw.ReloadCommand); err != nil {
		return nil, fmt.Errorf("reload_command: %w", err)
	}
	if c.Targets, err = listValue(raw.Targets); err != nil {
		return nil, fmt.Errorf("targets: %w", err)
	}
	ranges, err := listValue(raw.Range)
	if err != nil {
		return nil, fmt.Errorf("range: %w", err)
	}
	for _, r := range ranges {
		p, err := netip.ParsePrefix(r)
		if err != nil {
			return nil, fmt.Errorf("range: %q is not a CIDR (e.g. 10.20.0.0/16)", r)
		}
		c.Ranges = append(c.Ranges, p.Masked())
	}
	if c.LeaseTime, err = leaseValue(raw.LeaseTime); err != nil {
		return nil, fmt.Errorf("lease_time: %w", err)
	}
	if c.Debounce, err = durationValue(raw.Debounce); err != nil {
		return nil, fmt.Errorf("debounce: %w", err)
	}
	return c, c.Validate()
}

// Validate checks a Config built in code (LoadConfig calls it too) and fills
// in the default debounce.
func (c *Config) Validate() error {
	if c.HostsFile == "" && c.AddnHosts == "" {
		return errors.New("hostsfile or addn_hosts is required: the files brine writes for dnsmasq")
	}
	for name, p := range map[string]string{"hostsfile": c.HostsFile, "addn_hosts": c.AddnHosts} {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%s: %q is not an absolute path", name, p)
		}
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			return fmt.Errorf("%s: directory %s does not exist", name, filepath.Dir(p))
		}
		// dnsmasq's own configuration (dnsmasq.conf, conf-dir's *.conf) is
		// never brine's to write: changes there need a restart.
		if strings.HasSuffix(p, ".conf") || strings.Contains(filepath.ToSlash(p), "/dnsmasq.d/") {
			return fmt.Errorf("%s: %s looks like dnsmasq configuration (a .conf file or in conf-dir /etc/dnsmasq.d); "+
				"brine writes only files dnsmasq re-reads on SIGHUP: point dhcp-hostsfile= and addn-hosts= at files elsewhere", name, p)
		}
	}
	if c.HostsFile != "" && c.HostsFile == c.AddnHosts {
		return errors.New("hostsfile and addn_hosts are the same file")
	}
	if c.PidFile != "" && len(c.ReloadCommand) > 0 {
		return errors.New("pidfile and reload_command: give one way to reload dnsmasq")
	}
	if c.Domain != "" {
		if err := validName(c.Domain); err != nil {
			return fmt.Errorf("domain: %w", err)
		}
	}
	if c.Debounce < 0 {
		return fmt.Errorf("debounce: %s is negative", c.Debounce)
	}
	if c.Debounce == 0 {
		c.Debounce = DefaultDebounce
	}
	c.targets = c.targets[:0]
	for _, t := range c.Targets {
		c.targets = append(c.targets, fnmatch.Compile(t))
	}
	return nil
}

// includes reports whether the config selects mine id.
func (c *Config) includes(id string) bool {
	if len(c.targets) == 0 {
		return true
	}
	for _, g := range c.targets {
		if g.Match(id) {
			return true
		}
	}
	return false
}

// listValue reads a string, a comma-separated string or a list of strings.
func listValue(v any) ([]string, error) {
	if _, isMap := v.(map[string]any); isMap {
		return nil, fmt.Errorf("want a string or a list of strings, got a mapping")
	}
	return mine.Strings(v)
}

func commandValue(v any) ([]string, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		if strings.TrimSpace(t) == "" {
			return nil, errors.New("empty command")
		}
		return []string{"/bin/sh", "-c", t}, nil
	case []any:
		l, err := listValue(t)
		if err == nil && len(l) == 0 {
			err = errors.New("empty command")
		}
		return l, err
	}
	return nil, fmt.Errorf("want a command string or a list of arguments, got %v", v)
}

// leaseValue accepts dnsmasq's lease times: infinite, or a number of
// seconds with an optional s, m, h, d or w suffix (a bare YAML number is
// seconds).
func leaseValue(v any) (string, error) {
	var s string
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		s = strings.TrimSpace(t)
	case uint64:
		s = strconv.FormatUint(t, 10)
	case int64:
		s = strconv.FormatInt(t, 10)
	case int:
		s = strconv.Itoa(t)
	default:
		return "", fmt.Errorf("want infinite or a time like 12h, got %v", v)
	}
	if s == "infinite" {
		return s, nil
	}
	num := strings.TrimRight(s, "smhdw")
	if len(s)-len(num) > 1 {
		return "", fmt.Errorf("%q: want infinite or a time like 3600, 45m, 12h, 2d, 1w", s)
	}
	if _, err := strconv.ParseUint(num, 10, 32); err != nil {
		return "", fmt.Errorf("%q: want infinite or a time like 3600, 45m, 12h, 2d, 1w", s)
	}
	return s, nil
}

// durationValue reads a Go duration ("200ms") or a number of seconds.
func durationValue(v any) (time.Duration, error) {
	switch t := v.(type) {
	case nil:
		return 0, nil
	case string:
		d, err := time.ParseDuration(strings.TrimSpace(t))
		if err != nil {
			return 0, fmt.Errorf("%q: want a duration like 200ms or a number of seconds", t)
		}
		return d, nil
	case uint64:
		return time.Duration(t) * time.Second, nil
	case int64:
		return time.Duration(t) * time.Second, nil
	case float64:
		return time.Duration(t * float64(time.Second)), nil
	}
	return 0, fmt.Errorf("want a duration like 200ms or a number of seconds, got %v", v)
}

// KnownKeys lists the keys of the `dnsmasq:` block (the configuration
// reference is checked against it).
func KnownKeys() []string { return slices.Clone(knownKeys) }
