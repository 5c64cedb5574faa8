package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/deploy"
	"github.com/brinehq/brine/deploy/sshdtest"
	"github.com/brinehq/brine/internal/syncbuf"
)

// scripts is testdata/deploy, searched as cloud.deploy.d is.
var scripts, _ = filepath.Abs("../testdata/deploy")

// newVM describes VM name made from a profile with the given keys (YAML
// lines, indented by two) on a provider of driver.
func newVM(t *testing.T, name, driver, keys string) *cloud.VM {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cloud.providers"), fmt.Appendf(nil, "prov:\n  driver: %s\n", driver), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cloud.profiles"), []byte("prof:\n  provider: prov\n"+keys), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := cloud.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := cfg.NewVM(name, "prof", nil)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

func localNode(name string) *cloud.Node {
	n := &cloud.Node{Name: name, ID: "vm-1"}
	n.SetIPs([]string{"127.0.0.1"})
	return n
}

// fired records the events a deploy fires, as the lifecycle would.
type fired struct {
	mu     sync.Mutex
	tasks  []string
	events map[string]map[string]any
}

func (f *fired) fire(_ context.Context, task string, data map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.events == nil {
		f.events = map[string]map[string]any{}
	}
	f.tasks = append(f.tasks, task)
	f.events[task] = data
	return nil
}

func (f *fired) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := json.Marshal(f.events)
	return string(b)
}

// harness is a Deployer whose JSON log and terminal output are kept.
type harness struct {
	d       *deploy.Deployer
	dataDir string
	log     *syncbuf.Buffer
	out     *syncbuf.Buffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{dataDir: t.TempDir(), log: &syncbuf.Buffer{}, out: &syncbuf.Buffer{}}
	var err error
	h.d, err = deploy.New(deploy.Config{DataDir: h.dataDir, ScriptDirs: []string{scripts},
		Log: slog.New(slog.NewJSONHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug})), Output: h.out})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// noSecrets fails if any secret appears in any of texts.
func noSecrets(t *testing.T, texts map[string]string, secrets ...string) {
	t.Helper()
	for where, text := range texts {
		for _, s := range secrets {
			if s != "" && strings.Contains(text, strings.TrimSpace(s)) {
				t.Errorf("a secret appears in the %s", where)
			}
		}
	}
}

func TestDeployKeyAuthRunsScript(t *testing.T) {
	srv := sshdtest.Start(t)
	h := newHarness(t)
	marker := filepath.Join(t.TempDir(), "marker")
	vm := newVM(t, "web1", "vmware", fmt.Sprintf(`  script: hello
  script_args: --role web "two words"
  script_env: {ROLE: webserver, MARKER: %s, API_TOKEN: tok-very-secret}
  ssh_username: [nosuchuser, root]
  ssh_port: %d
  private_key: %s
  ssh_connect_timeout: 60
  minion: {master: 10.0.0.5, master_port: 4510, grains: {dc: ams}}
  grains: {role: web}
`, marker, srv.Port, srv.KeyFile))
	var f fired
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := h.d.Deploy(ctx, vm, localNode("web1"), f.fire); err != nil {
		t.Fatalf("deploy: %v\nlog: %s\nsshd: %s", err, h.log, srv.Log)
	}
	if got := strings.Join(f.tasks, " "); got != "deploying deploy_script" {
		t.Errorf("events %q, want deploying deploy_script", got)
	}
	ds := f.events["deploy_script"]
	if ds["host"] != "127.0.0.1" || ds["name"] != "web1" || ds["event"] != "web1 has been deployed at 127.0.0.1" {
		t.Errorf("deploy_script payload %v", ds)
	}
	dep := f.events["deploying"]
	kw, _ := dep["kwargs"].(map[string]any)
	if dep["event"] != "executing deploy script" || kw["host"] != "127.0.0.1" || kw["script"] != "hello" || kw["username"] != "nosuchuser" {
		t.Errorf("deploying payload %v", dep)
	}
	if env, _ := kw["script_env"].(map[string]any); env["ROLE"] != "webserver" || env["API_TOKEN"] != "[redacted]" {
		t.Errorf("deploying script_env %v", kw["script_env"])
	}
	got, err := os.ReadFile(marker)
	if err != nil || string(got) != "webserver --role web two words\n" {
		t.Errorf("marker %q, %v: the script did not run with script_args and script_env", got, err)
	}
	// The minion configuration was beside the script, as salt-cloud
	// leaves it: the VM's name as id, the profile's minion settings, its
	// grains merged into the minion's; and the deploying event shows it.
	var minion map[string]any
	if b, err := os.ReadFile(marker + ".minion"); err != nil || yaml.Unmarshal(b, &minion) != nil {
		t.Errorf("minion configuration %q, %v", b, err)
	}
	wantMinion := "map[grains:map[dc:ams role:web] id:web1 master:10.0.0.5 master_port:4510]"
	if got := fmt.Sprint(minion); got != wantMinion {
		t.Errorf("minion configuration %s, want %s", got, wantMinion)
	}
	if got := fmt.Sprint(kw["minion_conf"]); got != wantMinion {
		t.Errorf("deploying minion_conf %s, want %s", got, wantMinion)
	}
	log := h.log.String()
	for _, want := range []string{"hello from root in /tmp/.brine-deploy-", "a line on stderr", `"user":"root"`, "trusting the host key seen first"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(h.out.String(), "web1: args: --role web two words") {
		t.Errorf("terminal output %q", h.out)
	}
	// The private temporary directory is gone.
	dir := regexp.MustCompile(`/tmp/\.brine-deploy-[0-9a-f]+`).FindString(log)
	if _, err := os.Stat(dir); dir == "" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("deploy directory %q left behind (%v)", dir, err)
	}
	// The host key was recorded, in known_hosts format.
	kh, err := os.ReadFile(filepath.Join(h.dataDir, deploy.KnownHostsFile))
	want := knownhosts.Line([]string{knownhosts.Normalize(fmt.Sprintf("127.0.0.1:%d", srv.Port))}, srv.HostKey)
	if err != nil || strings.TrimSpace(string(kh)) != want {
		t.Errorf("known_hosts %q, want %q", kh, want)
	}
	noSecrets(t, map[string]string{"log": log, "events": f.String(), "output": h.out.String()}, srv.KeyPEM, "tok-very-secret")

	// A second deploy to the same host trusts the recorded key.
	var f2 fired
	start := time.Now()
	if err := h.d.Deploy(ctx, vm, localNode("web1"), f2.fire); err != nil {
		t.Fatalf("second deploy: %v", err)
	}
	t.Logf("deploy to a known host (login, upload, run, clean up): %s", time.Since(start))
	if kh2, _ := os.ReadFile(filepath.Join(h.dataDir, deploy.KnownHostsFile)); string(kh2) != string(kh) {
		t.Errorf("known_hosts changed on the second deploy: %q", kh2)
	}
}

func TestDeployPasswordAuth(t *testing.T) {
	srv := sshdtest.Start(t)
	pw := sshdtest.PasswordUser(t, "brinetest")
	h := newHarness(t)
	vm := newVM(t, "db1", "vmware", fmt.Sprintf(`  script: %s/hello.sh
  ssh_username: brinetest
  password: %s
  sudo: False
  ssh_port: %d
  ssh_connect_timeout: 60
`, scripts, pw, srv.Port))
	var f fired
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := h.d.Deploy(ctx, vm, localNode("db1"), f.fire); err != nil {
		t.Fatalf("deploy: %v\nlog: %s\nsshd: %s", err, h.log, srv.Log)
	}
	if !strings.Contains(h.log.String(), "hello from brinetest") {
		t.Errorf("log lacks the script's output:\n%s", h.log)
	}
	if f.events["deploy_script"]["host"] != "127.0.0.1" {
		t.Errorf("deploy_script %v", f.events["deploy_script"])
	}
	noSecrets(t, map[string]string{"log": h.log.String(), "events": f.String(), "output": h.out.String()}, pw)

	// A wrong password is refused, named without being shown, after
	// wait_for_passwd_maxtries attempts (long before the timeout).
	bad := newVM(t, "db1", "vmware", fmt.Sprintf("  script: hello\n  ssh_username: brinetest\n  password: wrong-%s\n  ssh_port: %d\n  wait_for_passwd_maxtries: 2\n", pw, srv.Port))
	var f2 fired
	err := newHarness(t).d.Deploy(ctx, bad, localNode("db1"), f2.fire)
	if !errors.Is(err, deploy.ErrAuth) || !strings.Contains(err.Error(), "brinetest with password (wait_for_passwd_maxtries 2)") || strings.Contains(err.Error(), pw) {
		t.Errorf("wrong password: %v", err)
	}
}

func TestDeployRefusesChangedHostKey(t *testing.T) {
	srv := sshdtest.Start(t)
	h := newHarness(t)
	// known_hosts trusts another key for this address.
	other, err := ssh.NewSignerFromKey(sshdtest.NewKey(t))
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", srv.Port)
	line := knownhosts.Line([]string{knownhosts.Normalize(addr)}, other.PublicKey()) + "\n"
	if err := os.WriteFile(filepath.Join(h.dataDir, deploy.KnownHostsFile), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	vm := newVM(t, "web2", "vmware", fmt.Sprintf("  script: hello\n  ssh_username: root\n  private_key: %s\n  ssh_port: %d\n  ssh_connect_timeout: 60\n", srv.KeyFile, srv.Port))
	var f fired
	start := time.Now()
	err = h.d.Deploy(context.Background(), vm, localNode("web2"), f.fire)
	if !errors.Is(err, deploy.ErrHostKeyChanged) {
		t.Fatalf("got %v, want ErrHostKeyChanged", err)
	}
	if !strings.Contains(err.Error(), deploy.KnownHostsFile+":1") || !strings.Contains(err.Error(), ssh.FingerprintSHA256(srv.HostKey)) {
		t.Errorf("the error should name the file:line and the key seen: %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("a changed key was retried until the timeout (%s)", time.Since(start))
	}
	if _, ok := f.events["deploy_script"]; ok {
		t.Error("deploy_script fired for a refused host")
	}

	// ssh_host_key_check: False opts out explicitly.
	vm = newVM(t, "web2", "vmware", fmt.Sprintf("  script: hello\n  ssh_username: root\n  private_key: %s\n  ssh_port: %d\n  ssh_host_key_check: False\n", srv.KeyFile, srv.Port))
	if err := h.d.Deploy(context.Background(), vm, localNode("web2"), f.fire); err != nil {
		t.Fatalf("with ssh_host_key_check False: %v", err)
	}
	if !strings.Contains(h.log.String(), "host key not checked") {
		t.Errorf("the opt-out is not logged:\n%s", h.log)
	}
}

func TestDeployScriptFailure(t *testing.T) {
	srv := sshdtest.Start(t)
	h := newHarness(t)
	keys := fmt.Sprintf("  script: fail\n  ssh_username: root\n  private_key: %s\n  ssh_port: %d\n  script_env: {API_TOKEN: tok-in-output}\n", srv.KeyFile, srv.Port)
	var f fired
	err := h.d.Deploy(context.Background(), newVM(t, "bad1", "vmware", keys), localNode("bad1"), f.fire)
	if !errors.Is(err, deploy.ErrScriptFailed) || !strings.Contains(err.Error(), "status 3") {
		t.Fatalf("got %v, want ErrScriptFailed with status 3", err)
	}
	// The error quotes the script's last lines, credentials redacted.
	for _, want := range []string{`"installing the agent with token [redacted]"`, `"E: package brine-agent has no installation candidate"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s: %v", want, err)
		}
	}
	noSecrets(t, map[string]string{"error": err.Error(), "log": h.log.String(), "output": h.out.String()}, "tok-in-output")
	if _, ok := f.events["deploy_script"]; ok {
		t.Error("deploy_script fired for a failed script")
	}
	if !strings.Contains(h.log.String(), "no installation candidate") {
		t.Errorf("the script's output is not in the log:\n%s", h.log)
	}

	var f2 fired
	if err := h.d.Deploy(context.Background(), newVM(t, "bad1", "vmware", keys+"  deploy_fail: ignore\n"), localNode("bad1"), f2.fire); err != nil {
		t.Fatalf("deploy_fail ignore: %v", err)
	}
	if _, ok := f2.events["deploy_script"]; !ok {
		t.Error("deploy_fail: ignore should go on to deploy_script")
	}
}

func TestDeployUnreachable(t *testing.T) {
	sshdtest.NeedRoot(t)
	h := newHarness(t)
	key := filepath.Join(t.TempDir(), "id")
	sshdtest.WritePrivateKey(t, key, sshdtest.NewKey(t))
	vm := newVM(t, "gone", "vmware", fmt.Sprintf("  script: hello\n  private_key: %s\n  ssh_port: %d\n  ssh_connect_timeout: 1.5\n", key, sshdtest.FreePort(t)))
	start := time.Now()
	err := h.d.Deploy(context.Background(), vm, localNode("gone"), (&fired{}).fire)
	if !errors.Is(err, deploy.ErrUnreachable) || !strings.Contains(err.Error(), "ssh_connect_timeout 1.5s") {
		t.Errorf("got %v", err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("took %s for a 1.5 s timeout", el)
	}
}

func TestDeploySettingsErrors(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose")
	sshdtest.WritePrivateKey(t, loose, sshdtest.NewKey(t))
	if err := os.Chmod(loose, 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, keys, want string
	}{
		{"bad agent_binaries", "  password: x\n  agent_binaries: {a: b}\n", "cloud.profiles:4: agent_binaries: want a directory or a list of directories"},
		{"no script, no credential", "  ssh_username: root\n", "deploy skipped: no script, and no private_key or password (in the profile) for the built-in bootstrap (bootstrap-brine) to log in with"},
		{"bootstrap-brine, no credential", "  script: bootstrap-brine\n", "needs private_key or password"},
		{"unknown script", "  script: nosuch\n  password: x\n", `cloud.profiles:3: script: no deploy script "nosuch"`},
		{"no credential", "  script: hello\n", "needs private_key or password"},
		{"key readable by others", fmt.Sprintf("  script: hello\n  private_key: %s\n", loose), "cloud.profiles:4: private_key: " + loose + " is readable by others (mode 0644)"},
		{"not a key", fmt.Sprintf("  script: hello\n  private_key: %s\n", garbage), "not a private key"},
		{"bad interface", "  script: hello\n  password: x\n  ssh_interface: eth0\n", `cloud.profiles:5: ssh_interface: "eth0": want public_ips or private_ips`},
		{"no public ip", "  script: hello\n  password: x\n  ssh_interface: public_ips\n", "node v has no public_ips"},
		{"bad port", "  script: hello\n  password: x\n  ssh_port: 70000\n", "cloud.profiles:5: ssh_port: 70000 is not a port"},
		{"bad user list", "  script: hello\n  password: x\n  ssh_username: [root, 3]\n", "cloud.profiles:5: ssh_username: want a user name"},
		{"bad env name", "  script: hello\n  password: x\n  script_env: {'A-B': 1}\n", `script_env: "A-B" is not an environment variable name`},
		{"bad deploy_fail", "  script: hello\n  password: x\n  deploy_fail: maybe\n", `deploy_fail: "maybe": want fail or ignore`},
		{"bad timeout", "  script: hello\n  password: x\n  ssh_connect_timeout: 0\n", "ssh_connect_timeout: must be a positive"},
		{"minion not a mapping", "  script: hello\n  password: x\n  minion: salt.example.com\n", "cloud.profiles:5: minion: a mapping of agent settings"},
		{"minion grains not a mapping", "  script: hello\n  password: x\n  minion: {grains: [a]}\n  grains: {role: web}\n", "cloud.profiles:5: minion: grains: a mapping"},
		{"empty minion id", "  script: hello\n  password: x\n  minion: {id: ''}\n", "cloud.profiles:5: minion: id: a non-empty string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f fired
			err := h.d.Deploy(context.Background(), newVM(t, "v", "vmware", tc.keys), localNode("v"), f.fire)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if skipped := strings.HasPrefix(tc.name, "no script"); errors.Is(err, cloud.ErrDeploySkipped) != skipped {
				t.Errorf("skipped = %v, want %v: %v", !skipped, skipped, err)
			}
			if len(f.tasks) != 0 {
				t.Errorf("events fired for bad settings: %v", f.tasks)
			}
		})
	}
}

// TestBuiltinBootstrapIgnoresTheProvidersPassword: a provider's password
// is the cloud account's; only the profile's (or the map's) logs in to a
// VM for the built-in bootstrap.
func TestBuiltinBootstrapIgnoresTheProvidersPassword(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cloud.providers"), []byte("prov:\n  driver: vmware\n  password: vcenter-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cloud.profiles"), []byte("clone:\n  provider: prov\nlogin:\n  provider: prov\n  password: root-pw\n  ssh_port: 70000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := cloud.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	for profile, want := range map[string]string{
		"clone": "deploy skipped: no script, and no private_key or password (in the profile)",
		// Its own password: the bootstrap would log in (it stops at the
		// bad port, before connecting).
		"login": "ssh_port: 70000 is not a port",
	} {
		vm, err := cfg.NewVM("v", profile, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = h.d.Deploy(context.Background(), vm, localNode("v"), (&fired{}).fire)
		if err == nil || !strings.Contains(err.Error(), want) || errors.Is(err, cloud.ErrDeploySkipped) != (profile == "clone") {
			t.Errorf("%s: %v, want %q", profile, err, want)
		}
	}
}

func TestForgetDropsOnlyTheNodesAddresses(t *testing.T) {
	h := newHarness(t)
	key, err := ssh.NewSignerFromKey(sshdtest.NewKey(t))
	if err != nil {
		t.Fatal(err)
	}
	line := func(hosts ...string) string { return knownhosts.Line(hosts, key.PublicKey()) + "\n" }
	file := filepath.Join(h.dataDir, deploy.KnownHostsFile)
	before := "# kept\n" + line("[127.0.0.1]:2222") + line("10.0.0.5") + line("10.0.0.6", "[10.0.0.5]:2200") + line("[2001:db8::5]:22")
	if err := os.WriteFile(file, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	node := &cloud.Node{Name: "gone"}
	node.SetIPs([]string{"10.0.0.5", "2001:db8::5"})
	if err := h.d.Forget(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	want := "# kept\n" + line("[127.0.0.1]:2222") + line("10.0.0.6")
	if err != nil || string(got) != want {
		t.Errorf("known_hosts after Forget:\n%s\nwant:\n%s", got, want)
	}
}

func TestParallelDeploysShareTheTrustStore(t *testing.T) {
	srv := sshdtest.Start(t)
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		name := fmt.Sprintf("p%d", i)
		vm := newVM(t, name, "vmware", fmt.Sprintf("  script: hello\n  ssh_username: root\n  private_key: %s\n  ssh_port: %d\n  ssh_connect_timeout: 60\n", srv.KeyFile, srv.Port))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.d.Deploy(ctx, vm, localNode(name), (&fired{}).fire)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("p%d: %v", i, err)
		}
	}
	kh, err := os.ReadFile(filepath.Join(h.dataDir, deploy.KnownHostsFile))
	if n := strings.Count(string(kh), "\n"); err != nil || n != 1 {
		t.Errorf("known_hosts has %d lines after parallel deploys to one host, want 1: %q", n, kh)
	}
}
