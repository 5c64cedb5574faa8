package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadMergesMasterD(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "master"), "publish_port: 14505\nlog_level: debug\nbus:\n  max_age: 48h\nreactor:\n  - 'salt/cloud/*/created':\n    - /srv/reactor/a.sls\n")
	write(t, filepath.Join(dir, "master.d", "10-ports.conf"), "ret_port: 14506\npublish_port: 24505\n")
	write(t, filepath.Join(dir, "master.d", "ignored.txt"), "ret_port: 1\n")
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Settings
	if s.PublishPort != 24505 || s.RetPort != 14506 || s.LogLevel != "debug" || s.Bus.MaxAge != 48*time.Hour {
		t.Errorf("settings = %+v", s)
	}
	if s.Interface != "127.0.0.1" || s.MaxEventSize != 1<<20 {
		t.Errorf("defaults lost: %+v", s)
	}
	if len(m.Files) != 2 {
		t.Errorf("files = %v", m.Files)
	}
	var reactor []map[string][]string
	if err := m.Decode("reactor", &reactor); err != nil {
		t.Fatal(err)
	}
	if len(reactor) != 1 || reactor[0]["salt/cloud/*/created"][0] != "/srv/reactor/a.sls" {
		t.Errorf("reactor = %v", reactor)
	}
	if !m.Has("reactor") || m.Has("nope") || m.Source("ret_port") != filepath.Join(dir, "master.d", "10-ports.conf") {
		t.Error("Has/Source wrong")
	}
}

func TestLoadDefaults(t *testing.T) {
	t.Setenv("BRINE_DATA", "/var/lib/brine-test")
	m, err := load(filepath.Join(t.TempDir(), "absent"), false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Settings.DataDir != "/var/lib/brine-test" || m.Settings.KeyFile != "/var/lib/brine-test/master.key" {
		t.Errorf("settings = %+v", m.Settings)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, body, want string
	}{
		{"syntax", "publish_port: 1\nret_port: [1,\n", "master: line"},
		{"type", "publish_port: many\n", "master: line 1"},
		{"not a mapping", "- a\n- b\n", "master:1: the configuration must be a mapping"},
		{"bad level", "log_level: loud\n", `log_level "loud"`},
		{"bad port", "ret_port: 70000\n", "ret_port 70000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			write(t, filepath.Join(dir, "master"), tc.body)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing explicit config path was accepted")
	}
}

func TestDecodeNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "master"), "id: m1\nreactor:\n  - 'a/*': 5\n")
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var reactor []map[string][]string
	err = m.Decode("reactor", &reactor)
	if err == nil || !strings.Contains(err.Error(), "master: reactor: line 3") {
		t.Fatalf("err = %v", err)
	}
}
