package cloud

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const providers = `my-vcenter:
  driver: vmware
  url: vcenter.example.com
  user: admin
  password: hunter2
old-style:
  provider: ec2
  id: AKID
  key: SECRET
`

func TestLoadConfig(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"cloud.providers": providers,
		"cloud.profiles.d/10-base.conf": `base:
  provider: my-vcenter
  clonefrom: centos-tmpl
  num_cpus: 2
  memory: 4GB
`,
		"cloud.profiles.d/20-web.conf": `web:
  extends: base
  num_cpus: 4
  grains: {role: web}
legacy:
  provider: old-style:ec2
  image: ami-1
`,
	})
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.ProviderNames(), ","); got != "my-vcenter,old-style" {
		t.Errorf("providers %s", got)
	}
	if cfg.Providers["old-style"].Driver != "ec2" {
		t.Errorf("old-style provider: key gives driver %q", cfg.Providers["old-style"].Driver)
	}
	if p := cfg.Profiles["legacy"]; p.Provider != "old-style" {
		t.Errorf("alias:driver profile provider %q", p.Provider)
	}
	vm, err := cfg.NewVM("web1", "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	var cpus int
	var clone, url string
	for key, out := range map[string]any{"num_cpus": &cpus, "clonefrom": &clone, "url": &url} {
		if err := vm.Settings.Decode(key, out); err != nil {
			t.Fatal(err)
		}
	}
	if cpus != 4 || clone != "centos-tmpl" || url != "vcenter.example.com" || vm.ProviderDriver() != "my-vcenter:vmware" {
		t.Errorf("merged settings: cpus %d clone %q url %q provider %s", cpus, clone, url, vm.ProviderDriver())
	}
	if vm.Settings.Has("extends") {
		t.Error("extends leaked into the VM's settings")
	}
	if w := vm.Settings["num_cpus"].Where(); !strings.HasSuffix(w, "20-web.conf:3") {
		t.Errorf("num_cpus comes from %s, want 20-web.conf:3", w)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string // file:line and key the message must contain
	}{
		{"yaml syntax", map[string]string{"cloud.providers": "a:\n  driver: vmware\n   url: x\n"}, "cloud.providers:2: mapping value is not allowed"},
		{"no driver", map[string]string{"cloud.providers": "a:\n  url: x\n"}, "cloud.providers:1: provider a: no driver"},
		{"provider not a mapping", map[string]string{"cloud.providers": "a: vmware\n"}, "cloud.providers:1: a: want a mapping"},
		{"unknown provider", map[string]string{"cloud.providers": providers, "cloud.profiles": "p:\n  provider: nope\n"},
			"cloud.profiles:2: provider: profile p: unknown provider \"nope\""},
		{"no provider key", map[string]string{"cloud.providers": providers, "cloud.profiles": "\np:\n  image: x\n"}, "cloud.profiles:2: profile p: no provider"},
		{"extends unknown", map[string]string{"cloud.providers": providers, "cloud.profiles": "p:\n  provider: my-vcenter\n  extends: ghost\n"},
			"cloud.profiles:3: extends: profile p extends unknown profile \"ghost\""},
		{"extends loop", map[string]string{"cloud.providers": providers, "cloud.profiles": "a:\n  extends: b\nb:\n  extends: a\n"}, "extends loop"},
		{"wrong type", map[string]string{"cloud.providers": "a:\n  driver: [vmware]\n"}, "cloud.providers:2: driver:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadConfig(writeFiles(t, tc.files))
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrConfig containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadConfigEmptyDir(t *testing.T) {
	cfg, err := LoadConfig(t.TempDir())
	if err != nil || len(cfg.Providers) != 0 || len(cfg.Profiles) != 0 {
		t.Fatalf("%v %+v", err, cfg)
	}
	if _, err := cfg.NewVM("x", "nope", nil); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown profile: %v", err)
	}
}

func TestLoadMap(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"good.map": `web:
  - web1
  - web2:
      num_cpus: 8
  - web3:
db:
  - db1
`,
		"dup.map":     "web:\n  - a\ndb:\n  - b\n  - a\n",
		"notlist.map": "web: a\n",
		"twokeys.map": "web:\n  - a: {}\n    b: {}\n",
	})
	m, err := LoadMap(filepath.Join(dir, "good.map"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range m.Entries {
		got = append(got, fmt.Sprintf("%s/%s@%d:%d", e.Profile, e.Name, e.Line, len(e.Overrides)))
	}
	if want := "web/web1@2:0 web/web2@3:1 web/web3@5:0 db/db1@7:0"; strings.Join(got, " ") != want {
		t.Errorf("entries %s, want %s", strings.Join(got, " "), want)
	}
	for file, want := range map[string]string{
		"dup.map":     "dup.map:5: VM a is already listed at line 2",
		"notlist.map": "notlist.map:1: profile web: want a list",
		"twokeys.map": "twokeys.map:2: profile web: want `- name`",
	} {
		if _, err := LoadMap(filepath.Join(dir, file)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
}

func TestSecrets(t *testing.T) {
	t.Setenv("BRINE_TEST_PW", "from-env")
	secretFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(secretFile, []byte("from-file\nignored\n"), 0o600)
	dir := writeFiles(t, map[string]string{"cloud.providers": fmt.Sprintf(`a:
  driver: vmware
  literal: hunter2
  sdb: sdb://osenv/BRINE_TEST_PW
  env: env://BRINE_TEST_PW
  file: file://%s
  unset: env://BRINE_TEST_UNSET
  missing: file:///nonexistent/pw
`, secretFile)})
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Providers["a"].Settings
	for key, want := range map[string]string{"literal": "hunter2", "sdb": "from-env", "env": "from-env", "file": "from-file"} {
		sec, err := s.Secret(key)
		if err != nil || sec.Reveal() != want {
			t.Errorf("%s: %q, %v; want %q", key, sec.Reveal(), err, want)
		}
	}
	for key, want := range map[string]string{"unset": "cloud.providers:7: unset: environment variable BRINE_TEST_UNSET is not set", "missing": "cloud.providers:8: missing:"} {
		if _, err := s.Secret(key); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", key, err, want)
		}
	}
	sec, _ := s.Secret("literal")
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "password", sec)
	b, _ := json.Marshal(map[string]any{"password": sec})
	for what, s := range map[string]string{"String": sec.String(), "%v": fmt.Sprintf("%v %+v %#v", sec, sec, sec), "json": string(b), "slog": logged.String()} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("%s shows the secret: %s", what, s)
		}
	}
}

func TestPlainLeavesOutSecrets(t *testing.T) {
	cfg, err := LoadConfig(writeFiles(t, map[string]string{"cloud.providers": providers}))
	if err != nil {
		t.Fatal(err)
	}
	for _, alias := range cfg.ProviderNames() {
		m, err := cfg.Providers[alias].Settings.Plain(IsSecretKey)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m)
		for _, secret := range []string{"hunter2", "SECRET", "AKID"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s: %s shows %s", alias, b, secret)
			}
		}
	}
}

func TestIsSecretKey(t *testing.T) {
	for key, want := range map[string]bool{
		"password": true, "sudo_password": true, "key": true, "id": true, "api_token": true, "client_secret": true,
		"keyname": false, "private_key": false, "keysize": false, "user": false, "url": false, "name": false,
	} {
		if got := IsSecretKey(key); got != want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestNodeSetIPs(t *testing.T) {
	n := &Node{}
	n.SetIPs([]string{"10.0.0.5", "203.0.113.7", "10.0.0.5", "fe80::1", "bogus", "0.0.0.0", "2001:db8::1"})
	if strings.Join(n.PrivateIPs, ",") != "10.0.0.5,fe80::1" || strings.Join(n.PublicIPs, ",") != "203.0.113.7,2001:db8::1" {
		t.Errorf("private %v public %v", n.PrivateIPs, n.PublicIPs)
	}
	if n.IP() != "203.0.113.7" {
		t.Errorf("IP %s, want the first public one", n.IP())
	}
}

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{
		"web1": true, "web-1.example.com": true, "DC0_H0_VM0": true,
		"": false, "a/b": false, "a b": false, "tab\there": false, strings.Repeat("x", 81): false,
	} {
		if err := ValidateName(name); (err == nil) != ok || (err != nil && !errors.Is(err, ErrName)) {
			t.Errorf("ValidateName(%q) = %v", name, err)
		}
	}
}
