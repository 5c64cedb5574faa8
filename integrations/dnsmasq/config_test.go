package dnsmasq

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/config"
)

func loadFrom(t *testing.T, yaml string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "master")
	yaml = strings.ReplaceAll(yaml, "DIR", dir)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(m)
	if err != nil && !strings.Contains(err.Error(), file) {
		t.Errorf("error %q does not name the file %s", err, file)
	}
	return c, err
}

func TestLoadConfig(t *testing.T) {
	c, err := loadFrom(t, `id: m1
dnsmasq:
  hostsfile: DIR/dhcp-hosts
  addn_hosts: DIR/addn-hosts
  domain: cloud.test.
  reload_command: systemctl reload dnsmasq
  targets: [web*, db*]
  range: 10.20.0.0/16, fd00::/64
  lease_time: 12h
  debounce: 50ms
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16"), netip.MustParsePrefix("fd00::/64")}
	if c.Domain != "cloud.test" || !reflect.DeepEqual(c.Ranges, want) || c.LeaseTime != "12h" || c.Debounce != 50*time.Millisecond ||
		!reflect.DeepEqual(c.Targets, []string{"web*", "db*"}) ||
		!reflect.DeepEqual(c.ReloadCommand, []string{"/bin/sh", "-c", "systemctl reload dnsmasq"}) {
		t.Fatalf("config %+v", c)
	}
	if !c.includes("web1") || c.includes("app1") {
		t.Error("targets do not select by glob")
	}

	c, err = loadFrom(t, "dnsmasq:\n  addn_hosts: DIR/h\n  pidfile: /run/dnsmasq.pid\n  lease_time: 3600\n")
	if err != nil || c.Debounce != DefaultDebounce || c.LeaseTime != "3600" {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	if c, err := loadFrom(t, "id: m1\n"); c != nil || err != nil {
		t.Fatalf("no dnsmasq block: %+v, %v; want off", c, err)
	}

	for _, tc := range []struct{ yaml, want string }{
		{"dnsmasq:\n  hostfile: DIR/x\n", `master:2: unknown key dnsmasq: "hostfile" (did you mean "hostsfile"?)`},
		{"dnsmasq:\n  hostsfile: DIR/x\n  pidfle: /run/d.pid\n", `master:3: unknown key dnsmasq: "pidfle" (did you mean "pidfile"?)`},
		{"dnsmasq:\n  domain: x\n", "hostsfile or addn_hosts is required"},
		{"dnsmasq:\n  hostsfile: relative\n", `hostsfile: "relative" is not an absolute path`},
		{"dnsmasq:\n  hostsfile: /nonexistent/dir/x\n", "directory /nonexistent/dir does not exist"},
		{"dnsmasq:\n  hostsfile: DIR/dnsmasq.conf\n", "looks like dnsmasq configuration"},
		{"dnsmasq:\n  hostsfile: DIR/x\n  range: 10.0.0.0/33\n", `range: "10.0.0.0/33" is not a CIDR`},
		{"dnsmasq:\n  hostsfile: DIR/x\n  lease_time: forever\n", `lease_time: "forever"`},
		{"dnsmasq:\n  hostsfile: DIR/x\n  debounce: soon\n", `debounce: "soon"`},
		{"dnsmasq:\n  hostsfile: DIR/x\n  pidfile: /p\n  reload_command: [x]\n", "give one way to reload"},
		{"dnsmasq:\n  hostsfile: DIR/x\n  domain: bad_domain\n", "domain:"},
		{"dnsmasq:\n  hostsfile: DIR/x\n  targets: {a: b}\n", "targets:"},
		{"dnsmasq:\n  hostsfile: [DIR/x]\n", "master:2: dnsmasq.hostsfile: want a string, got a list"},
	} {
		_, err := loadFrom(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.yaml, err, tc.want)
		}
		if err != nil && !strings.Contains(tc.want, ": want ") && !errors.Is(err, ErrConfig) { // a type error is the config package's
			t.Errorf("%q: error %v is not ErrConfig", tc.yaml, err)
		}
	}
}
