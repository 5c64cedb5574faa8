package main

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/cloud/ec2"
	"github.com/brinehq/brine/cloud/vmware"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/integrations/ddns"
	"github.com/brinehq/brine/integrations/dnsmasq"
	"github.com/brinehq/brine/integrations/slack"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master"
	"github.com/brinehq/brine/reactor"
)

// examplesDir is the operator-facing example configuration at the root of
// the repository.
const examplesDir = "../../examples"

// copyExamples copies examples/ into a temporary directory with the
// absolute paths an installation would use (/etc/brine, /var/lib/brine)
// pointed into it, and creates the secret files they name, mode 0600.
func copyExamples(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "examples")
	rewrite := strings.NewReplacer("/etc/brine/", tmp+"/etc/", "/var/lib/brine/", tmp+"/var/")
	err := filepath.WalkDir(examplesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(examplesDir, p)
		out := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, []byte(rewrite.Replace(string(b))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"etc", "var/dnsmasq"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secrets := map[string]string{
		"etc/slack.token":        "xoxb-test-token-not-real",
		"etc/api.tokens":         "# one token a line\nexample-api-token-0123456789\n",
		"etc/deploy-hook.secret": "example-hook-secret-0123456789\n",
		"etc/ddns.keyring":       `{"ddns-key": "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}`,
	}
	for name, v := range secrets {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// rootsDecoder serves the master config with file_roots pointed at the
// examples, so salt://reactor/… resolves to examples/reactor/….
type rootsDecoder struct {
	*config.Master
	root string
}

func (d rootsDecoder) Decode(key string, out any) error {
	if key == "file_roots" {
		*(out.(*map[string][]string)) = map[string][]string{"base": {d.root}}
		return nil
	}
	return d.Master.Decode(key, out)
}

// TestExamplesLoad loads every file under examples/ through the loaders
// the master and `brine cloud` use, so the examples cannot rot.
func TestExamplesLoad(t *testing.T) {
	dir := copyExamples(t)
	cfg, err := config.Load(dir)
	if err != nil {
		t.Fatalf("config.Load(examples): %v", err)
	}
	if want := 6; len(cfg.Files) != want {
		t.Errorf("config.Load read %d files, want %d: %v", len(cfg.Files), want, cfg.Files)
	}
	if _, err := jobs.Keep(cfg); err != nil {
		t.Errorf("keep_jobs: %v", err)
	}
	for _, key := range []string{"reactor", "ddns", "dnsmasq", "slack", "api"} {
		if !cfg.Has(key) {
			t.Errorf("examples set no %s: key", key)
		}
	}

	if _, err := ddns.LoadConfig(cfg, cfg.Settings.ID); err != nil {
		t.Errorf("ddns.LoadConfig: %v", err)
	}
	if c, err := dnsmasq.LoadConfig(cfg); err != nil || c == nil {
		t.Errorf("dnsmasq.LoadConfig: %v, %v", c, err)
	}
	if _, ok, err := slack.LoadConfig(cfg); err != nil || !ok {
		t.Errorf("slack.LoadConfig: ok %v, %v", ok, err)
	}
	if _, on, err := api.LoadConfig(cfg); err != nil || !on {
		t.Errorf("api config: on %v, %v", on, err)
	}

	t.Run("reactions", func(t *testing.T) { testExampleReactions(t, cfg, dir) })
	t.Run("cloud", func(t *testing.T) { testExampleCloud(t, dir) })
}

func testExampleReactions(t *testing.T, cfg *config.Master, dir string) {
	rcfg, err := reactor.LoadConfig(rootsDecoder{cfg, dir})
	if err != nil {
		t.Fatalf("reactor.LoadConfig: %v", err)
	}
	rcfg.Retry = reactor.Retry{Attempts: 1}
	funcs, err := master.DryRunFunctions()
	if err != nil {
		t.Fatal(err)
	}
	r := reactor.New(rcfg, funcs, reactor.WithLogger(slog.New(slog.DiscardHandler)))
	cases := []struct {
		tag   string
		data  map[string]any
		calls []string
		want  string // a value the rendered calls must carry
	}{
		{"salt/cloud/web1/deploy_script", map[string]any{
			"event": "web1 has been deployed at 10.0.1.11", "name": "web1", "host": "10.0.1.11"},
			[]string{"runner.ddns.add_host"}, "10.0.1.11"},
		{"salt/cloud/web1/destroyed", map[string]any{
			"event": "destroyed instance", "name": "web1", "instance_id": "vm-42"},
			[]string{"runner.ddns.delete_host", "runner.slack.post"}, "web1"},
		{"salt/netapi/hook/deploy/shop", map[string]any{
			"post": map[string]any{"app": "shop", "version": "1.4.2", "user": "ci"}, "headers": map[string]any{}},
			[]string{"runner.event.send"}, "1.4.2"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		ev, err := bus.NewEvent(c.tag, c.data, bus.Origin{Source: "brine://examples-test"})
		if err != nil {
			t.Fatal(err)
		}
		data, err := ev.DataMap()
		if err != nil {
			t.Fatal(err)
		}
		plan := r.Plan(context.Background(), c.tag, data)
		for _, e := range plan.Errors {
			t.Errorf("%s: %v", c.tag, e)
		}
		var calls []string
		rendered := ""
		for _, rx := range plan.Reactions {
			calls = append(calls, strings.SplitN(rx.Call(), "(", 2)[0])
			rendered += formatCall(rx) + "\n"
		}
		if !strings.Contains(rendered, c.want) {
			t.Errorf("%s: rendered calls lack %q:\n%s", c.tag, c.want, rendered)
		}
		if strings.Join(calls, " ") != strings.Join(c.calls, " ") {
			t.Errorf("%s: calls %v, want %v", c.tag, calls, c.calls)
		}
		for _, f := range plan.Files {
			seen[filepath.Base(f.Path)] = true
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "reactor", "*.sls"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("examples/reactor/%s: no test event renders it", filepath.Base(f))
		}
	}
}

func testExampleCloud(t *testing.T, dir string) {
	c, err := cloud.LoadConfig(dir)
	if err != nil {
		t.Fatalf("cloud.LoadConfig: %v", err)
	}
	if len(c.Providers) != 2 || len(c.Profiles) != 3 {
		t.Errorf("providers %v, profiles %v", c.ProviderNames(), c.ProfileNames())
	}
	m, err := cloud.LoadMap(filepath.Join(dir, "cloud.map"))
	if err != nil {
		t.Fatalf("cloud.LoadMap: %v", err)
	}
	known := map[string][]string{vmware.Driver: vmware.KnownKeys(), ec2.Driver: ec2.KnownKeys()}
	for _, e := range m.Entries {
		vm, err := c.NewVM(e.Name, e.Profile, e.Overrides)
		if err != nil {
			t.Errorf("map entry %s: %v", e.Name, err)
			continue
		}
		k, ok := known[vm.Provider.Driver]
		if !ok {
			t.Errorf("%s: driver %q has no example test", e.Name, vm.Provider.Driver)
			continue
		}
		for _, w := range cloud.UnknownKeys(vm, vm.Provider.Driver, k) {
			t.Errorf("%s: %s", e.Name, w)
		}
	}
}
