// Package slack is brine's Slack audit trail and its slack.* runner
// functions. Every job (brine run, reactions, cloud runs, salt/job events
// from elsewhere) gets a message when it starts with the command line an
// operator would have typed, and its result threaded under it; every VM
// lifecycle gets one parent message with its steps threaded and its final
// state edited in. Posts go through a durable consumer of the bus, in order,
// rate limited per channel, retried through 429s, outages and restarts, with
// secrets redacted — so the trail is complete, and it never feeds itself.
package slack

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/fnmatch"
)

// ConfigKey is the master configuration key of the integration.
const ConfigKey = "slack"

// Presets are the built-in audit rules.
const (
	PresetJobs  = "jobs"
	PresetCloud = "cloud"
)

// Defaults of Config.
const (
	DefaultRate     = 1.0
	DefaultBurst    = 3
	DefaultExcerpt  = 600
	DefaultHold     = 30 * time.Second
	DefaultConsumer = "slack"
)

// Config is the `slack:` section of the master config:
//
//	slack:
//	  token: xoxb-…            # bot token (threads, chat.update); or token_file
//	  webhook_url: https://hooks.slack.com/services/…   # without a token: webhook-only, no threads
//	  channel: '#ops'          # default channel of every rule
//	  rate: 1                  # messages per second per channel (0: unlimited)
//	  burst: 3                 # messages a quiet channel may take at once
//	  redact: ['hunter\d+']    # extra regular expressions of secret values
//	  redact_keys: ['^pin$']   # extra regular expressions of secret argument names
//	  audit:                   # default: [{preset: jobs}, {preset: cloud}]
//	    - preset: jobs
//	      fun: ['state.*', 'cmd.run']
//	      tgt_not: saltmaster
//	    - preset: cloud
//	      channel: '#provisioning'
//	    - tag: 'myco/deploy/*/done'
//	      text: 'deployed {app} {version} by {user}'
//	      color: good
type Config struct {
	Token      string  `yaml:"token" json:"-"`
	TokenFile  string  `yaml:"token_file" json:"token_file,omitempty"`
	WebhookURL string  `yaml:"webhook_url" json:"-"`
	Channel    string  `yaml:"channel" json:"channel"`
	Rate       float64 `yaml:"rate" json:"rate"`
	Burst      int     `yaml:"burst" json:"burst"`
	// APIURL is the Web API base URL (default Slack's); tests point it at
	// slacktest.
	APIURL     string   `yaml:"api_url" json:"api_url,omitempty"`
	Redact     []string `yaml:"redact" json:"redact,omitempty"`
	RedactKeys []string `yaml:"redact_keys" json:"redact_keys,omitempty"`
	// Excerpt bounds the characters of a return shown under a job.
	Excerpt int `yaml:"excerpt" json:"excerpt"`
	// Hold is how long to wait before retrying after a permanent error
	// (invalid_auth, channel_not_found): the message is kept, not dropped.
	Hold  time.Duration `yaml:"hold" json:"hold"`
	Audit []Rule        `yaml:"audit" json:"audit"`
	// Consumer names the durable consumer (DefaultConsumer).
	Consumer string `yaml:"consumer" json:"consumer"`

	source string // the file the section came from, for messages
}

// Rule selects events to post and says how.
type Rule struct {
	// Preset is "jobs" or "cloud"; empty for a rule of its own.
	Preset string `yaml:"preset" json:"preset,omitempty"`
	// Tag is a glob, or list of globs, on the event tag (rules of their own).
	Tag Strings `yaml:"tag" json:"tag,omitempty"`
	// Field conditions: globs on the job's (or event data's) fun, tgt and
	// user; a _not list excludes.
	Fun     Strings `yaml:"fun" json:"fun,omitempty"`
	FunNot  Strings `yaml:"fun_not" json:"fun_not,omitempty"`
	Tgt     Strings `yaml:"tgt" json:"tgt,omitempty"`
	TgtNot  Strings `yaml:"tgt_not" json:"tgt_not,omitempty"`
	User    Strings `yaml:"user" json:"user,omitempty"`
	UserNot Strings `yaml:"user_not" json:"user_not,omitempty"`
	// Channel overrides the default channel.
	Channel string `yaml:"channel" json:"channel,omitempty"`
	// Text is the message of a rule of its own: {key} is a data key,
	// {tag} the tag, {data[a][b]} a nested key.
	Text  string `yaml:"text" json:"text,omitempty"`
	Color string `yaml:"color" json:"color,omitempty"`

	tags, fun, funNot, tgt, tgtNot, user, userNot []*fnmatch.Glob
}

// Strings is a YAML string or list of strings.
type Strings []string

// UnmarshalYAML accepts a scalar as a one-element list.
func (s *Strings) UnmarshalYAML(n ast.Node) error {
	if _, isSeq := n.(*ast.SequenceNode); !isSeq {
		var one string
		if err := yaml.NodeToValue(n, &one); err == nil {
			*s = Strings{one}
			return nil
		}
	}
	var many []string
	if err := yaml.NodeToValue(n, &many); err != nil {
		pos := n.GetToken().Position
		return fmt.Errorf("line %d column %d: want a string or a list of strings", pos.Line, pos.Column)
	}
	*s = many
	return nil
}

// LoadConfig reads the slack section; ok is false when there is none.
func LoadConfig(d config.Decoder) (c *Config, ok bool, err error) {
	if !d.Has(ConfigKey) {
		return nil, false, nil
	}
	// `chanel:` is a typo to report at its line, not a rule without a channel.
	if err := d.CheckKeys(config.YAMLKeys(Config{}), ConfigKey); err != nil {
		return nil, true, err
	}
	if err := d.CheckKeys(config.YAMLKeys(Rule{}), ConfigKey, "audit", "*"); err != nil {
		return nil, true, err
	}
	c = &Config{Rate: DefaultRate, Burst: DefaultBurst, Excerpt: DefaultExcerpt, Hold: DefaultHold, Consumer: DefaultConsumer}
	if err := d.Decode(ConfigKey, c); err != nil {
		return nil, true, err
	}
	c.source = d.Source(ConfigKey)
	if err := c.validate(); err != nil {
		return nil, true, err
	}
	return c, true, nil
}

func (c *Config) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: slack: "+format, append([]any{c.source}, args...)...)
}

func (c *Config) validate() error {
	if c.TokenFile != "" {
		if c.Token != "" {
			return c.errorf("token and token_file are both set; keep one")
		}
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return c.errorf("token_file: %w", err)
		}
		c.Token = strings.TrimSpace(string(b))
	}
	if c.Token == "" && c.WebhookURL == "" {
		return c.errorf("needs token, token_file or webhook_url")
	}
	if c.WebhookURL != "" {
		if u, err := url.Parse(c.WebhookURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return c.errorf("webhook_url is not an http(s) URL")
		}
	}
	if c.Rate < 0 {
		return c.errorf("rate %g: want messages per second, 0 for no limit", c.Rate)
	}
	if c.Burst < 1 {
		return c.errorf("burst %d: want at least 1", c.Burst)
	}
	if c.Excerpt < 0 {
		return c.errorf("excerpt %d: want a number of characters", c.Excerpt)
	}
	if c.Hold <= 0 {
		c.Hold = DefaultHold
	}
	if c.Consumer == "" {
		c.Consumer = DefaultConsumer
	}
	for i, p := range c.Redact {
		if _, err := regexp.Compile(p); err != nil {
			return c.errorf("redact[%d]: %w", i, err)
		}
	}
	for i, p := range c.RedactKeys {
		if _, err := regexp.Compile(p); err != nil {
			return c.errorf("redact_keys[%d]: %w", i, err)
		}
	}
	if c.Audit == nil {
		c.Audit = []Rule{{Preset: PresetJobs}, {Preset: PresetCloud}}
	}
	for i := range c.Audit {
		if err := c.Audit[i].compile(); err != nil {
			return c.errorf("audit[%d]: %w", i, err)
		}
		if c.Audit[i].Channel == "" && c.Channel == "" && c.Token != "" {
			return c.errorf("audit[%d]: no channel, and no default channel", i)
		}
	}
	return nil
}

func (r *Rule) compile() error {
	switch r.Preset {
	case PresetJobs, PresetCloud:
		if len(r.Tag) > 0 || r.Text != "" {
			return fmt.Errorf("preset %s takes no tag or text", r.Preset)
		}
	case "":
		if len(r.Tag) == 0 || r.Text == "" {
			return errors.New("a rule needs a preset, or a tag and a text")
		}
		for _, t := range r.Tag {
			if err := bus.ValidateTag(t); err != nil {
				return fmt.Errorf("tag: %w", err)
			}
		}
	default:
		return fmt.Errorf("preset %q: want %s or %s", r.Preset, PresetJobs, PresetCloud)
	}
	switch r.Color {
	case "", "good", "warning", "danger":
	default:
		if !regexp.MustCompile(`^#[0-9a-fA-F]{6}$`).MatchString(r.Color) {
			return fmt.Errorf("color %q: want good, warning, danger or #rrggbb", r.Color)
		}
	}
	globs := func(s Strings) []*fnmatch.Glob {
		out := make([]*fnmatch.Glob, len(s))
		for i, p := range s {
			out[i] = fnmatch.Compile(p)
		}
		return out
	}
	r.tags, r.fun, r.funNot, r.tgt, r.tgtNot, r.user, r.userNot =
		globs(r.Tag), globs(r.Fun), globs(r.FunNot), globs(r.Tgt), globs(r.TgtNot), globs(r.User), globs(r.UserNot)
	return nil
}

// pattern is the narrowest tag glob that covers every rule (presets read
// salt/job, salt/run and salt/cloud events), so that the bus filters the
// audit's consumer server-side instead of handing it every event.
func (c *Config) pattern() string {
	prefix, first := "", true
	add := func(p string) {
		if first {
			prefix, first = p, false
			return
		}
		for !strings.HasPrefix(p, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for _, r := range c.Audit {
		if r.Preset != "" {
			add("salt/")
			continue
		}
		for _, g := range r.tags {
			add(g.Prefix())
		}
	}
	if prefix == "" {
		return ""
	}
	return prefix + "*"
}
