package sysctl

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
)

// TestDefaultConfig is Salt's default_config: 99-salt.conf under systemd.
func TestDefaultConfig(t *testing.T) {
	for booted, want := range map[bool]string{true: "/etc/sysctl.d/99-salt.conf", false: "/etc/sysctl.conf"} {
		k := &Kernel{Booted: func() bool { return booted }}
		if got := k.DefaultConfig(); got != want {
			t.Errorf("systemd booted %v: %s, want %s", booted, got, want)
		}
	}
	if _, err := os.Stat("/run/systemd/system"); err != nil && systemdBooted() {
		t.Error("systemdBooted is true without /run/systemd/system")
	}
}

// TestFunctions runs the functions on a /proc/sys of real files in a
// temporary directory (the kernel itself is set by sysctl.present's
// test, in a network namespace of its own), with the returns Salt 3006.6
// gave for the same calls (salt-call --local).
func TestFunctions(t *testing.T) {
	proc := t.TempDir()
	for p, v := range map[string]string{"net/ipv4/ip_forward": "0\n", "net/ipv4/tcp_rmem": "4096\t131072\t33554432\n"} {
		if err := os.MkdirAll(filepath.Join(proc, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, p), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	saved := Host
	Host = &Kernel{Proc: proc, Booted: func() bool { return false }}
	defer func() { Host = saved }()
	reg := function.New()
	if err := reg.RegisterAll(Module(nil)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "existing.conf")
	if err := os.WriteFile(conf, []byte("# mine\nnet.ipv4.ip_forward = 0\nvm.x=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	newConf := filepath.Join(dir, "sub", "p.conf")
	for _, c := range []struct {
		fun    string
		args   []any
		kwargs map[string]any
		want   any
		err    string
	}{
		{"sysctl.get", []any{"net.ipv4.ip_forward"}, nil, "0", ""},
		{"sysctl.get", []any{"net.ipv4.tcp_rmem"}, nil, "4096\t131072\t33554432", ""},
		{"sysctl.get", []any{"nope.x"}, nil, "sysctl: cannot stat " + filepath.Join(proc, "nope/x") + ": No such file or directory", ""},
		{"sysctl.show", nil, map[string]any{"config_file": conf}, map[string]any{"net.ipv4.ip_forward": "0", "vm.x": "1"}, ""},
		{"sysctl.show", nil, map[string]any{"config_file": filepath.Join(dir, "none.conf")}, []any{}, ""},
		{"sysctl.default_config", nil, nil, "/etc/sysctl.conf", ""},
		{"sysctl.assign", []any{"net.ipv4.ip_forward", int64(1)}, nil, map[string]any{"net.ipv4.ip_forward": "1"}, ""},
		{"sysctl.assign", []any{"net.ipv4.nope", int64(1)}, nil, nil, "sysctl net.ipv4.nope does not exist"},
		{"sysctl.persist", []any{"net.ipv4.ip_forward", int64(1)}, map[string]any{"config": newConf}, "Updated", ""},
		{"sysctl.persist", []any{"net.ipv4.ip_forward", int64(1)}, map[string]any{"config": newConf}, "Already set", ""},
		{"sysctl.persist", []any{"net.ipv4.tcp_rmem", "4096 87380   6291456"}, map[string]any{"config": conf}, "Updated", ""},
	} {
		got, err := reg.Call(context.Background(), c.fun, c.args, c.kwargs, nil)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s %v: got %v, %v; want error %q", c.fun, c.args, got, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %v: got %#v, %v; want %#v", c.fun, c.args, got, err, c.want)
		}
	}
	for p, want := range map[string]string{
		newConf:                                  "#\n# Kernel sysctl configuration\n#\nnet.ipv4.ip_forward = 1\n",
		conf:                                     "# mine\nnet.ipv4.ip_forward = 0\nvm.x=1\nnet.ipv4.tcp_rmem = 4096 87380   6291456\n",
		filepath.Join(proc, "net/ipv4/tcp_rmem"): "4096 87380   6291456\n",
		filepath.Join(proc, "net/ipv4/ip_forward"): "1\n",
	} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", p, b, err, want)
		}
	}
}
