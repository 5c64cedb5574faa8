package config

import (
	"os"
	"path/filepath"
	"slices"
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
		{"type", "publish_port: many\n", `master:1: publish_port: want a port number, got "many"`},
		{"not a mapping", "- a\n- b\n", "master:1: the configuration must be a mapping"},
		{"bad level", "id: m\nlog_level: loud\n", `master:2: log_level: "loud": want debug`},
		{"bad port", "ret_port: 70000\n", "master:1: ret_port: 70000 is not a port"},
		{"replicas", "bus:\n  replicas: 7\n", "master:1: bus: replicas 7"},
		{"loop interval", "id: m\nloop_interval: 0\n", "master:2: loop_interval: 0: want a number of seconds, at least 1"},
		{"auto_accept type", "auto_accept: [yes]\n", "master:1: auto_accept: want true or false, got a list"},
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
	if err == nil || !strings.HasSuffix(err.Error(), `master:3: reactor[0].a/*: want a list of strings, got "5"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestInterfaceAnywhere(t *testing.T) {
	dir := t.TempDir()
	for _, iface := range []string{"127.0.0.1", "::1", "127.0.0.5", "localhost", "ipc:///run/brine.sock"} {
		write(t, filepath.Join(dir, "master"), "interface: '"+iface+"'\n")
		if _, err := Load(dir); err != nil {
			t.Errorf("interface %s: %v", iface, err)
		}
	}
	// The gateway is encrypted: a master may listen for agents anywhere.
	write(t, filepath.Join(dir, "master"), "interface: 0.0.0.0\n")
	if _, err := Load(dir); err != nil {
		t.Errorf("0.0.0.0: %v", err)
	}
}

func TestUnknownKeysAreReportedWithLineAndSuggestion(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "master"), "id: m1\nret_prot: 4506\nreactr:\n  - 'a/*': [x.sls]\nworker_threads: 5\nzzz_totally_new: 1\n")
	write(t, filepath.Join(dir, "master.d", "dns.conf"), "dnsmasq:\n  hostsfile: /x\n  pidfle: /run/d.pid\nslack:\n  audit:\n    - tag: x/*\n      chanel: '#a'\n")
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	known := []string{"id", "ret_port", "publish_port", "reactor", "dnsmasq", "slack"}
	var got []string
	for _, p := range m.Unknown(known) {
		got = append(got, strings.TrimPrefix(p.String(), dir+"/"))
	}
	want := []string{
		`master:2: unknown key "ret_prot" (did you mean "ret_port"?)`,
		`master:3: unknown key "reactr" (did you mean "reactor"?)`,
		`master:5: "worker_threads" is a Salt option brine does not use (ignored)`,
		`master:6: unknown key "zzz_totally_new"`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("unknown keys:\n got %q\nwant %q", got, want)
	}
	err = m.CheckKeys([]string{"hostsfile", "pidfile"}, "dnsmasq")
	if err == nil || !strings.HasSuffix(err.Error(), `master.d/dns.conf:3: unknown key dnsmasq: "pidfle" (did you mean "pidfile"?)`) {
		t.Errorf("nested unknown key: %v", err)
	}
	err = m.CheckKeys([]string{"tag", "channel", "text"}, "slack", "audit", "*")
	if err == nil || !strings.HasSuffix(err.Error(), `dns.conf:7: unknown key slack.audit.*: "chanel" (did you mean "channel"?)`) {
		t.Errorf("unknown key in a list item: %v", err)
	}
	if err := m.CheckKeys([]string{"hostsfile", "pidfle"}, "dnsmasq"); err != nil {
		t.Errorf("known keys: %v", err)
	}
	if err := m.CheckKeys([]string{"x"}, "absent"); err != nil {
		t.Errorf("an absent section: %v", err)
	}
}

func TestClosest(t *testing.T) {
	known := []string{"publish_port", "ret_port", "reactor", "keyfile", "nameserver"}
	for in, want := range map[string]string{"ret_prot": "ret_port", "reactr": "reactor", "keyfle": "keyfile",
		"nameservre": "nameserver", "x": "", "completely_different": ""} {
		if got := Closest(in, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestKeySettings: Salt's key and presence options, with Salt's defaults.
func TestKeySettings(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "master"), "id: m\n")
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Settings
	if s.AutoAccept || !s.AuthEvents || s.PresenceEvents || s.LoopInterval != 60 || s.AutosignFile != "" {
		t.Errorf("defaults: %+v", s)
	}
	write(t, filepath.Join(dir, "master.d", "keys.conf"), "auto_accept: True\nautosign_file: autosign.conf\nautoreject_file: /etc/brine/reject\n"+
		"autosign_grains_dir: grains\nauth_events: False\npresence_events: True\nloop_interval: 5\n")
	if m, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	s = m.Settings
	if !s.AutoAccept || s.AutosignFile != "autosign.conf" || s.AutorejectFile != "/etc/brine/reject" || s.AutosignGrainsDir != "grains" ||
		s.AuthEvents || !s.PresenceEvents || s.LoopInterval != 5 {
		t.Errorf("settings: %+v", s)
	}
	if p := m.Unknown(CoreKeys()); len(p) != 0 {
		t.Errorf("key options reported: %v", p)
	}
}
