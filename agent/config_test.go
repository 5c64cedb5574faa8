package agent

import (
	"github.com/brinehq/brine/jobs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadConfigDefaultsAndMerge(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "minion"), "master: [m1, m2]\nid: web01\nmine_interval: 5\n")
	writeFile(t, filepath.Join(dir, "minion.d", "10-grains.conf"), "grains:\n  roles: [web]\nmine_interval: 7\n")
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual([]string(cfg.Master), []string{"m1", "m2"}) || cfg.ID != "web01" || cfg.MineInterval != 7 {
		t.Fatalf("merged config = %+v", cfg.Config)
	}
	if cfg.MasterPort != 4506 || cfg.AcceptanceWaitTime != 10 || cfg.AcceptanceWaitTimeMax != 300 || cfg.RandomReauthDelay != 10 {
		t.Fatalf("defaults = %+v", cfg.Config)
	}
	if cfg.PKIDir != filepath.Join(dir, "pki", "minion") {
		t.Fatalf("pki_dir = %s", cfg.PKIDir)
	}
	if _, ok := cfg.MineFunctions["network.ip_addrs"]; !ok {
		t.Fatalf("default mine functions = %v", cfg.MineFunctions)
	}
	if got := cfg.Addrs(); !reflect.DeepEqual(got, []string{"tcp://m1:4506", "tcp://m2:4506"}) {
		t.Fatalf("addrs = %v", got)
	}
	// A single host is a list of one.
	writeFile(t, filepath.Join(dir, "minion"), "master: salt.example.com\n")
	if cfg, err = LoadConfig(dir); err != nil || !reflect.DeepEqual([]string(cfg.Master), []string{"salt.example.com"}) {
		t.Fatalf("master string: %v %v", cfg, err)
	}
}

func TestLoadConfigErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"type", "id: web01\nmaster_port: many\n", `minion:2: master_port: want a port number, got "many"`},
		{"bool", "master_failback: often\n", `minion:1: master_failback: want true or false, got "often"`},
		{"number", "retry_dns: soon\n", `minion:1: retry_dns: want a number, got "soon"`},
		{"list", "autosign_grains: {a: b}\n", `minion:1: autosign_grains: want a list of strings, got a mapping`},
		{"grains", "grains: [a]\n", `minion:1: grains: want a mapping, got a list`},
		{"port", "master_port: 70000\n", "minion:1: master_port: 70000 is not a port"},
		{"id", "\nid: 'bad id!'\n", "minion:2: id:"},
		{"finger", "master_finger: abc\n", `minion:1: master_finger: "abc": not a SHA-256 fingerprint`},
		{"wait", "acceptance_wait_time: 20\nacceptance_wait_time_max: 5\n", "minion:2: acceptance_wait_time_max: 5 is below acceptance_wait_time (20)"},
		{"mine", "mine_functions:\n  alias: {mine_function: 42}\n", "minion:1: mine_functions: alias: mine_function must name a function"},
		{"level", "log_level: loud\n", `minion:1: log_level: "loud"`},
		{"master list", "master: {a: b}\n", "minion:1: master: want a host name or a list of host names"},
		{"not a mapping", "- a\n", "minion:1: the configuration must be a mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "minion"), tc.body)
			_, err := LoadConfig(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			for _, w := range []string{"Go struct", "unmarshal", "int64", "map[string]", "interface {}"} {
				if strings.Contains(err.Error(), w) {
					t.Errorf("err = %v shows %q", err, w)
				}
			}
		})
	}
}

func TestUnknownKeysReportedWithFileAndLine(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "minion"), "id: web01\nmaster_prot: 4506\ntcp_keepalive: True\n")
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range cfg.Warnings {
		got = append(got, p.String())
	}
	want := []string{
		filepath.Join(dir, "minion") + `:2: unknown key "master_prot" (did you mean "master_port"?)`,
		filepath.Join(dir, "minion") + `:3: "tcp_keepalive" is a Salt option brine does not use (ignored)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMineSpec(t *testing.T) {
	cases := []struct {
		name string
		spec any
		fun  string
		args []any
		err  string
	}{
		{"network.ip_addrs", []any{"eth0"}, "network.ip_addrs", []any{"eth0"}, ""},
		{"network.ip_addrs", nil, "network.ip_addrs", nil, ""},
		{"internal", map[string]any{"mine_function": "network.ip_addrs", "cidr": "10.0.0.0/8"}, "network.ip_addrs",
			[]any{map[string]any{"__kwarg__": true, "cidr": "10.0.0.0/8"}}, ""},
		{"listform", []any{map[string]any{"mine_function": "grains.get"}, "os"}, "grains.get", []any{"os"}, ""},
		{"nodot", nil, "", nil, "not a module.function name"},
		{"bad", 42, "", nil, "want a list of arguments or a mapping"},
	}
	for _, tc := range cases {
		fun, args, err := MineSpec(tc.name, tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || fun != tc.fun || !reflect.DeepEqual(args, tc.args) {
			t.Errorf("%s: %q %v %v, want %q %v", tc.name, fun, args, err, tc.fun, tc.args)
		}
	}
	pos, kw := jobs.SplitArgs([]any{"eth0", map[string]any{"__kwarg__": true, "cidr": "10.0.0.0/8"}, map[string]any{"plain": 1}})
	if !reflect.DeepEqual(pos, []any{"eth0", map[string]any{"plain": 1}}) || !reflect.DeepEqual(kw, map[string]any{"cidr": "10.0.0.0/8"}) {
		t.Fatalf("SplitKwargs = %v %v", pos, kw)
	}
}

func TestResolveIDRemembersTheFirstChoice(t *testing.T) {
	dir := t.TempDir()
	if id, err := ResolveID("given", dir); err != nil || id != "given" {
		t.Fatalf("configured id: %q %v", id, err)
	}
	id, err := ResolveID("", dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "minion_id"))
	if err != nil || strings.TrimSpace(string(b)) != id {
		t.Fatalf("minion_id cache = %q %v, want %q", b, err, id)
	}
	writeFile(t, filepath.Join(dir, "minion_id"), "kept.example.com\n")
	if id, err := ResolveID("", dir); err != nil || id != "kept.example.com" {
		t.Fatalf("cached id: %q %v", id, err)
	}
}

// TestMasterless: --local sets file_client local; a root given replaces the
// base environment with its absolute path; a missing one is refused.
func TestMasterless(t *testing.T) {
	dir := t.TempDir()
	c := Defaults(dir)
	c.FileRoots = map[string][]string{"base": {"/srv/salt"}, "dev": {"/srv/dev"}}
	if err := c.Masterless(true, dir, ""); err != nil {
		t.Fatal(err)
	}
	if !c.Local() || len(c.FileRoots) != 1 || c.FileRoots["base"][0] != dir || c.PillarRoots != nil {
		t.Errorf("after --local --file-root: client %q file_roots %v pillar_roots %v", c.FileClient, c.FileRoots, c.PillarRoots)
	}
	c = Defaults(dir)
	if err := c.Masterless(false, "", dir+"/nope"); err == nil || !strings.Contains(err.Error(), "--pillar-root") {
		t.Errorf("a missing --pillar-root: %v", err)
	}
	if c.Local() {
		t.Error("without --local the file client stays remote")
	}
}
