package reactor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/config"
)

// Defaults for Config.
const (
	DefaultWorkers     = 64
	DefaultMaxInFlight = 1024
	DefaultMaxDepth    = 8
	// DefaultConsumer is the durable consumer name; masters sharing a bus
	// share it, so each event is reacted to once cluster-wide.
	DefaultConsumer = "reactor"
)

// DefaultRetry makes 5 attempts over about a minute (waits of about 4, 8, 16
// and 32 s): long enough to ride out a DNS server restart, short enough that
// an operator sees the dead letter the same minute.
var DefaultRetry = Retry{Attempts: 5, Interval: 4 * time.Second, MaxInterval: 32 * time.Second}

// Config is the reactor's part of the master config. The keys are Salt's
// where Salt has them:
//
//	reactor:                    # list of {glob: [files]}, or a path to a YAML file holding it
//	  - 'salt/cloud/*/created':
//	    - /srv/reactor/add_dns.sls
//	    - salt://reactor/audit.sls
//	file_roots:                 # where salt:// paths are looked up
//	  base: [/srv/salt]
//	reactor_workers: 64         # reaction functions running at once (Salt's reactor_worker_threads is read if this is unset)
//	reactor_max_in_flight: 1024 # events in progress at once, then back-pressure
//	reactor_max_depth: 8        # longest causal chain reacted to
//	reactor_retry: {attempts: 5, interval: 4, max_interval: 32}   # seconds, or Go durations ("4s")
type Config struct {
	Mapping []MapEntry
	// MappingFile is set when `reactor:` named a file; it is re-read on reload.
	MappingFile string
	FileRoots   map[string][]string
	// Workers bounds the reaction functions running at once (the pool
	// Salt's reactor_worker_threads sizes).
	Workers int
	// MaxInFlight bounds the events in progress at once (rendering, running,
	// waiting for their job events to be durable; default 1024). Beyond it
	// the consumer stops pulling and the bus holds the rest: back-pressure,
	// never a drop. It is larger than Workers because most of an event's
	// time is spent waiting for the disk, not in a function.
	MaxInFlight int
	MaxDepth    int
	Retry       Retry
	// Consumer is the durable consumer name (DefaultConsumer).
	Consumer string
	// CallerID is the agent caller.* reactions run on (reactor_caller_id;
	// default the master's id: the agent installed beside the master).
	CallerID string
	// AckWait bounds how long an event may be worked on without a sign of
	// life before the bus redelivers it (default 30 s; workers signal
	// progress while they wait between retries).
	AckWait time.Duration
}

// MapEntry is one `- 'glob': [files]` item of the mapping.
type MapEntry struct {
	Glob  string
	Files []string
}

// Retry is a retry policy: Attempts runs in all, waiting Interval, doubled
// after each failure up to MaxInterval, with ±20 % jitter.
type Retry struct {
	Attempts    int
	Interval    time.Duration
	MaxInterval time.Duration
}

// ConfigKeys are the master configuration keys LoadConfig reads.
var ConfigKeys = []string{"reactor", "file_roots", "reactor_workers", "reactor_worker_threads",
	"reactor_max_in_flight", "reactor_max_depth", "reactor_retry", "reactor_caller_id"}

// LoadConfig reads the reactor keys from the master config.
func LoadConfig(d config.Decoder) (Config, error) {
	c := Config{FileRoots: map[string][]string{"base": {"/srv/salt"}}}
	var raw any
	if err := d.Decode("reactor", &raw); err != nil {
		return c, err
	}
	var err error
	if c.Mapping, c.MappingFile, err = parseMappingValue(raw); err != nil {
		return c, fmt.Errorf("%s: %w", d.Where("reactor"), err)
	}
	var roots map[string][]string
	if err := d.Decode("file_roots", &roots); err != nil {
		return c, err
	}
	if roots != nil {
		c.FileRoots = roots
	}
	if err := d.Decode("reactor_caller_id", &c.CallerID); err != nil {
		return c, err
	}
	var threads int
	// Counts that are set must make sense: a negative or zero value is an
	// error naming its line, not a default in disguise.
	for _, n := range []struct {
		key string
		dst *int
	}{{"reactor_worker_threads", &threads}, {"reactor_workers", &c.Workers},
		{"reactor_max_in_flight", &c.MaxInFlight}, {"reactor_max_depth", &c.MaxDepth}} {
		if err := d.Decode(n.key, n.dst); err != nil {
			return c, err
		}
		if d.Has(n.key) && *n.dst < 1 {
			return c, fmt.Errorf("%s: %s: %d: want at least 1", d.Where(n.key), n.key, *n.dst)
		}
	}
	if c.Workers == 0 {
		c.Workers = threads
	}
	var retry any
	if err := d.Decode("reactor_retry", &retry); err != nil {
		return c, err
	}
	if retry != nil {
		r, err := parseRetry(retry, DefaultRetry)
		if err != nil {
			return c, fmt.Errorf("%s: reactor_retry: %w", d.Where("reactor_retry"), err)
		}
		c.Retry = r.override(nil)
	}
	return c, nil
}

func (c *Config) setDefaults() {
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.Retry.Attempts <= 0 {
		c.Retry = DefaultRetry
	}
	if c.Consumer == "" {
		c.Consumer = DefaultConsumer
	}
	if c.AckWait <= 0 {
		c.AckWait = 30 * time.Second
	}
	if c.FileRoots == nil {
		c.FileRoots = map[string][]string{"base": {"/srv/salt"}}
	}
}

// parseMappingValue interprets the `reactor:` value: a list, a path to a
// YAML file holding the list, or nothing.
func parseMappingValue(v any) ([]MapEntry, string, error) {
	switch t := v.(type) {
	case nil:
		return nil, "", nil
	case string:
		m, err := readMappingFile(t)
		return m, t, err
	case []any:
		m, err := parseMapping(t)
		if err != nil {
			return nil, "", fmt.Errorf("reactor: %w", err)
		}
		return m, "", nil
	}
	if _, ok := v.(map[string]any); ok {
		return nil, "", errors.New("reactor: written as a mapping; write it as a list, one `- 'tag glob': [files]` item per entry, or give the path of a file holding that list")
	}
	return nil, "", fmt.Errorf("reactor: want a list of `- 'tag glob': [files]` items or a file path, got %s", typeName(v))
}

func readMappingFile(path string) ([]MapEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reactor: %w", err)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("reactor: %s: %s", path, strings.TrimSpace(yaml.FormatError(err, false, false)))
	}
	// Salt accepts the bare list or a file with a `reactor:` key.
	if m, ok := v.(map[string]any); ok {
		v = m["reactor"]
	}
	list, ok := v.([]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("reactor: %s: want a list of {glob: [files]}", path)
	}
	m, err := parseMapping(list)
	if err != nil {
		return nil, fmt.Errorf("reactor: %s: %w", path, err)
	}
	for i := range m {
		for j, f := range m[i].Files {
			if !filepath.IsAbs(f) && !strings.HasPrefix(f, "salt://") {
				m[i].Files[j] = filepath.Join(filepath.Dir(path), f)
			}
		}
	}
	return m, nil
}

// parseMapping reads Salt's list of single-key maps. Salt skips malformed
// entries silently; brine rejects them, naming the entry.
func parseMapping(list []any) ([]MapEntry, error) {
	out := make([]MapEntry, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, fmt.Errorf("entry %d: want a single 'glob': [files] mapping", i+1)
		}
		for glob, files := range m {
			e := MapEntry{Glob: glob}
			switch f := files.(type) {
			case string:
				e.Files = []string{f}
			case []any:
				for _, x := range f {
					s, ok := x.(string)
					if !ok || s == "" {
						return nil, fmt.Errorf("entry %d (%s): file list holds %v, want paths", i+1, glob, x)
					}
					e.Files = append(e.Files, s)
				}
			default:
				return nil, fmt.Errorf("entry %d (%s): want a file or a list of files", i+1, glob)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// parseRetry reads `retry: {attempts, interval, max_interval}` over def.
// Intervals are seconds (Salt's unit) or Go durations.
func parseRetry(v any, def Retry) (Retry, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return def, fmt.Errorf("want a mapping {attempts, interval, max_interval}, got %T", v)
	}
	r := def
	for k, x := range m {
		switch k {
		case "attempts":
			n, ok := toInt(x)
			if !ok || n < 1 {
				return def, fmt.Errorf("attempts: want a positive integer, got %v", x)
			}
			r.Attempts = n
		case "interval", "max_interval":
			d, err := toDuration(x)
			if err != nil {
				return def, fmt.Errorf("%s: %w", k, err)
			}
			if k == "interval" {
				r.Interval = d
			} else {
				r.MaxInterval = d
			}
		default:
			return def, fmt.Errorf("unknown key %q (want attempts, interval, max_interval)", k)
		}
	}
	return r, nil
}

// override returns p with the fields o sets; MaxInterval is at least
// Interval.
func (p Retry) override(o *Retry) Retry {
	if o != nil {
		if o.Attempts > 0 {
			p.Attempts = o.Attempts
		}
		if o.Interval > 0 {
			p.Interval = o.Interval
		}
		if o.MaxInterval > 0 {
			p.MaxInterval = o.MaxInterval
		}
	}
	p.MaxInterval = max(p.MaxInterval, p.Interval)
	return p
}

func toInt(v any) (int, bool) {
	switch t := v.(type) {
	case int:
		return t, true
	case int64:
		return int(t), true
	case uint64:
		return int(t), true
	case float64:
		return int(t), t == float64(int(t))
	}
	return 0, false
}

func toDuration(v any) (time.Duration, error) {
	if s, ok := v.(string); ok {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("want seconds or a duration like 5s, got %q", s)
		}
		return d, nil
	}
	switch t := v.(type) {
	case float64:
		if t >= 0 {
			return time.Duration(t * float64(time.Second)), nil
		}
	default:
		if n, ok := toInt(v); ok && n >= 0 {
			return time.Duration(n) * time.Second, nil
		}
	}
	return 0, fmt.Errorf("want seconds or a duration like 5s, got %v", v)
}
