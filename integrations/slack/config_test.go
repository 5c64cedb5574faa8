package slack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/config"
)

func loadFrom(t *testing.T, yaml string) (*Config, bool, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "master"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := config.Load(dir)
	if err != nil {
		return nil, false, err
	}
	return LoadConfig(m)
}

func TestLoadConfig(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("xoxb-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, ok, err := loadFrom(t, `
slack:
  token_file: `+tokenFile+`
  channel: '#ops'
  rate: 2
  hold: 5s
  audit:
    - preset: jobs
      fun: cmd.run
      tgt_not: [saltmaster]
    - tag: myco/*
      text: hi {app}
`)
	if err != nil || !ok {
		t.Fatalf("ok %v err %v", ok, err)
	}
	if c.Token != "xoxb-from-file" || c.Rate != 2 || c.Burst != DefaultBurst || c.Hold != 5*time.Second ||
		len(c.Audit) != 2 || len(c.Audit[0].Fun) != 1 || c.Audit[0].TgtNot[0] != "saltmaster" {
		t.Errorf("config %+v", c)
	}
	c, ok, err = loadFrom(t, "slack:\n  webhook_url: https://hooks.slack.com/services/T/B/x\n")
	if err != nil || !ok || len(c.Audit) != 2 || c.Audit[0].Preset != PresetJobs || c.Audit[1].Preset != PresetCloud {
		t.Errorf("default presets: %+v %v %v", c, ok, err)
	}
	if _, ok, err := loadFrom(t, "id: m1\n"); ok || err != nil {
		t.Errorf("no slack section: ok %v err %v", ok, err)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"slack:\n  channel: '#x'\n", "needs token, token_file or webhook_url"},
		{"slack:\n  token: a\n  token_file: /nonexistent\n", "token and token_file are both set"},
		{"slack:\n  token_file: /nonexistent/token\n", "token_file"},
		{"slack:\n  webhook_url: 'hooks.slack.com/x'\n", "webhook_url is not an http(s) URL"},
		{"slack:\n  token: x\n  channel: c\n  rate: -1\n", "rate -1"},
		{"slack:\n  token: x\n  channel: c\n  burst: 0\n", "burst 0"},
		{"slack:\n  token: x\n  channel: c\n  redact: ['(']\n", "redact[0]"},
		{"slack:\n  token: x\n  audit: [{preset: jobs}]\n", "audit[0]: no channel"},
		{"slack:\n  token: x\n  channel: c\n  audit: [{preset: nope}]\n", `audit[0]: preset "nope"`},
		{"slack:\n  token: x\n  channel: c\n  audit: [{tag: 'a/*'}]\n", "audit[0]: a rule needs a preset, or a tag and a text"},
		{"slack:\n  token: x\n  channel: c\n  audit: [{preset: jobs, text: hi}]\n", "preset jobs takes no tag or text"},
		{"slack:\n  token: x\n  channel: c\n  audit: [{preset: jobs, color: pink}]\n", `color "pink"`},
		{"slack:\n  token: x\n  channel: c\n  audit: [{preset: jobs, fun: {a: b}}]\n", "master:4: slack.audit[0].fun: want a string or a list of strings"},
		{"slack:\n  token: x\n  channel: c\n  rate: fast\n", `master:4: slack.rate: want a number, got "fast"`},
		{"slack:\n  token: x\n  chanel: c\n", `master:3: unknown key slack: "chanel" (did you mean "channel"?)`},
		{"slack:\n  token: x\n  channel: c\n  audit:\n    - tag: 'a/*'\n      text: hi\n      chanel: '#b'\n", `master:7: unknown key slack.audit.*: "chanel" (did you mean "channel"?)`},
	}
	for _, tt := range tests {
		_, _, err := loadFrom(t, tt.yaml)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "master") {
			t.Errorf("%q: err %v, want one naming the file and %q", tt.yaml, err, tt.want)
		}
	}
}

func TestConsumerPattern(t *testing.T) {
	tests := []struct {
		rules []Rule
		want  string
	}{
		{[]Rule{{Preset: PresetJobs}, {Preset: PresetCloud}}, "salt/*"},
		{[]Rule{{Preset: PresetJobs}, {Tag: Strings{"salt/netapi/hook/*"}, Text: "x"}}, "salt/*"},
		{[]Rule{{Tag: Strings{"myco/deploy/*/done", "myco/deploy/x"}, Text: "x"}}, "myco/deploy/*"},
		{[]Rule{{Preset: PresetJobs}, {Tag: Strings{"myco/*"}, Text: "x"}}, ""},
		{[]Rule{{Tag: Strings{"*"}, Text: "x"}}, ""},
	}
	for _, tt := range tests {
		c := &Config{Token: "x", Channel: "#c", Burst: 1, Audit: tt.rules}
		if err := c.validate(); err != nil {
			t.Fatal(err)
		}
		if got := c.pattern(); got != tt.want {
			t.Errorf("rules %+v: pattern %q, want %q", tt.rules, got, tt.want)
		}
	}
}
