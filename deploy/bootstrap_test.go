package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"golang.org/x/sys/unix"

	"github.com/brinehq/brine/deploy"
	"github.com/brinehq/brine/deploy/sshdtest"
	"github.com/brinehq/brine/internal/syncbuf"
)

// agentName is the name the master's own platform's agent binary has in
// an agent directory.
var agentName = "brine-agent-" + runtime.GOOS + "-" + runtime.GOARCH

// buildAgent builds testdata/fakeagent (which takes -c DIR, as
// brine-agent does) into a new directory as name, and returns the
// directory.
func buildAgent(t *testing.T, name string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the bootstrap's tests build testdata/fakeagent with the go command, which is not in PATH: %v", err)
	}
	dir := t.TempDir()
	cmd := exec.Command(gobin, "build", "-o", filepath.Join(dir, name), "./testdata/fakeagent")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building testdata/fakeagent: %v\n%s", err, out)
	}
	return dir
}

// newBootstrapHarness is a harness whose Deployer looks for agent binaries
// only where a VM's agent_binaries says.
func newBootstrapHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{dataDir: t.TempDir(), log: &syncbuf.Buffer{}, out: &syncbuf.Buffer{}}
	var err error
	h.d, err = deploy.New(deploy.Config{DataDir: h.dataDir, ScriptDirs: []string{scripts}, AgentDirs: []string{},
		Log: slog.New(slog.NewJSONHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug})), Output: h.out})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// agentPids are the guest's processes running path (its agent).
func agentPids(t *testing.T, srv *sshdtest.Server, path string) []int {
	t.Helper()
	var out []int
	for _, pid := range srv.GuestPids(t) {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.HasPrefix(string(cmdline), path+"\x00-c\x00/etc/brine\x00") {
			out = append(out, pid)
		}
	}
	return out
}

// waitFile waits for path to hold want.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q (%v), want it to contain %q", path, b, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestBootstrapInstallsAndStartsTheAgent(t *testing.T) {
	srv := sshdtest.StartGuest(t, sshdtest.Guest{})
	h := newBootstrapHarness(t)
	bins := buildAgent(t, agentName)
	// No script: the built-in bootstrap, as salt-cloud's default is
	// bootstrap-salt.
	vm := newVM(t, "web1", "vmware", fmt.Sprintf(`  agent_binaries: %s
  ssh_username: root
  ssh_port: %d
  private_key: %s
  ssh_connect_timeout: 60
  minion: {master: 10.0.0.5, master_port: 4510}
  grains: {role: web}
  script_args: -P stable 3006
`, bins, srv.Port, srv.KeyFile))
	var f fired
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	if err := h.d.Deploy(ctx, vm, localNode("web1"), f.fire); err != nil {
		t.Fatalf("deploy: %v\nlog: %s\nsshd: %s", err, h.log, srv.Log)
	}
	t.Logf("bootstrap (login, uname, upload %s, install, start): %s", agentName, time.Since(start))
	// The events and payloads of a script deploy.
	if got := strings.Join(f.tasks, " "); got != "deploying deploy_script" {
		t.Errorf("events %q, want deploying deploy_script", got)
	}
	if ds := f.events["deploy_script"]; ds["host"] != "127.0.0.1" || ds["name"] != "web1" || ds["event"] != "web1 has been deployed at 127.0.0.1" {
		t.Errorf("deploy_script payload %v", ds)
	}
	dep := f.events["deploying"]
	kw, _ := dep["kwargs"].(map[string]any)
	if dep["event"] != "executing deploy script" || kw["script"] != deploy.BuiltinScript || kw["host"] != "127.0.0.1" {
		t.Errorf("deploying payload %v", dep)
	}
	// The binary, checked and installed.
	want, err := os.ReadFile(filepath.Join(bins, agentName))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(srv.Path("/usr/bin/brine-agent"))
	if err != nil || string(got) != string(want) {
		t.Fatalf("/usr/bin/brine-agent in the guest: %d bytes (%v), want the %d of %s", len(got), err, len(want), agentName)
	}
	if st, _ := os.Stat(srv.Path("/usr/bin/brine-agent")); st == nil || st.Mode().Perm() != 0o755 {
		t.Errorf("/usr/bin/brine-agent mode %v, want 0755", st)
	}
	log := h.log.String()
	for _, want := range []string{"uploading " + agentName + " (", "sha256 ", " verified", `"platform":"` + runtime.GOOS + "/" + runtime.GOARCH + `"`,
		"installed /usr/bin/brine-agent", "no systemd on this machine", "brine-agent started (pid ",
		"script_args is ignored: the built-in bootstrap (bootstrap-brine) takes none"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(h.out.String(), "web1: uploading "+agentName) {
		t.Errorf("terminal output lacks the upload's progress: %q", h.out)
	}
	// The minion file salt-cloud would write, private.
	var minion map[string]any
	b, err := os.ReadFile(srv.Path("/etc/brine/minion"))
	if err != nil || yaml.Unmarshal(b, &minion) != nil {
		t.Fatalf("/etc/brine/minion: %q, %v", b, err)
	}
	if got, want := fmt.Sprint(minion), "map[grains:map[role:web] id:web1 master:10.0.0.5 master_port:4510]"; got != want {
		t.Errorf("/etc/brine/minion %s, want %s", got, want)
	}
	if st, _ := os.Stat(srv.Path("/etc/brine/minion")); st == nil || st.Mode().Perm() != 0o600 {
		t.Errorf("/etc/brine/minion mode %v, want 0600", st)
	}
	// A real agent process, detached, reading that file.
	pids := agentPids(t, srv, "/usr/bin/brine-agent")
	if len(pids) != 1 {
		t.Fatalf("agent processes in the guest: %v, want one", pids)
	}
	if sid, _ := unix.Getsid(pids[0]); sid != pids[0] {
		t.Errorf("the agent (pid %d) is in session %d, not one of its own: it would go with the SSH session", pids[0], sid)
	}
	waitFile(t, srv.Path("/var/log/brine-agent.log"), "fakeagent: started as web1 for master 10.0.0.5")
	if pidfile, _ := os.ReadFile(srv.Path("/run/brine-agent.pid")); strings.TrimSpace(string(pidfile)) != fmt.Sprint(pids[0]) {
		t.Errorf("/run/brine-agent.pid %q, want %d", pidfile, pids[0])
	}
	// The private temporary directory, with its copy of the binary, is gone.
	dir := regexp.MustCompile(`/tmp/\.brine-deploy-[0-9a-f]+`).FindString(log)
	if _, err := os.Stat(srv.Path(dir)); dir == "" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("deploy directory %q left behind (%v)", dir, err)
	}
	// Nothing reached the host (which may have an agent of its own).
	if b, err := os.ReadFile("/etc/brine/minion"); err == nil && strings.Contains(string(b), "master: 10.0.0.5") {
		t.Error("the host's /etc/brine/minion is the guest's: the guest's overlay leaked")
	}

	// Deployed again (script: bootstrap-brine spelled out), the agent is
	// replaced, not doubled.
	vm2 := newVM(t, "web1", "vmware", fmt.Sprintf("  script: bootstrap-brine\n  agent_binaries: [%s]\n  ssh_port: %d\n  private_key: %s\n  minion: {master: 10.0.0.6}\n", bins, srv.Port, srv.KeyFile))
	var f2 fired
	if err := h.d.Deploy(ctx, vm2, localNode("web1"), f2.fire); err != nil {
		t.Fatalf("second deploy: %v\nlog: %s", err, h.log)
	}
	if _, ok := f2.events["deploy_script"]; !ok {
		t.Error("no deploy_script on the second deploy")
	}
	if !strings.Contains(h.log.String(), fmt.Sprintf("stopped the agent started by an earlier deploy (pid %d)", pids[0])) {
		t.Errorf("the second deploy did not stop the first agent:\n%s", h.log)
	}
	waitFile(t, srv.Path("/var/log/brine-agent.log"), "fakeagent: started as web1 for master 10.0.0.6")
	deadline := time.Now().Add(5 * time.Second)
	for {
		now := agentPids(t, srv, "/usr/bin/brine-agent")
		if len(now) == 1 && now[0] != pids[0] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent processes after the second deploy: %v (the first was %d)", now, pids[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestBootstrapReadOnlyUsrAndKeepTmp(t *testing.T) {
	srv := sshdtest.StartGuest(t, sshdtest.Guest{ReadOnlyUsr: true})
	h := newBootstrapHarness(t)
	// The plain name serves the master's own platform.
	bins := buildAgent(t, "brine-agent")
	vm := newVM(t, "ro1", "vmware", fmt.Sprintf("  agent_binaries: %s\n  ssh_port: %d\n  private_key: %s\n  keep_tmp: True\n  tmp_dir: /var/tmp/bootstrap-kept\n", bins, srv.Port, srv.KeyFile))
	if err := h.d.Deploy(context.Background(), vm, localNode("ro1"), (&fired{}).fire); err != nil {
		t.Fatalf("deploy: %v\nlog: %s\nsshd: %s", err, h.log, srv.Log)
	}
	if _, err := os.Stat(srv.Path("/usr/local/bin/brine-agent")); err != nil {
		t.Errorf("with /usr read-only, the agent should be in /usr/local/bin: %v\n%s", err, h.log)
	}
	if pids := agentPids(t, srv, "/usr/local/bin/brine-agent"); len(pids) != 1 {
		t.Errorf("agent processes %v, want one running /usr/local/bin/brine-agent", pids)
	}
	for _, f := range []string{"deploy.sh", "minion", "brine-agent", "brine-agent.service"} {
		if _, err := os.Stat(srv.Path("/var/tmp/bootstrap-kept/" + f)); err != nil {
			t.Errorf("keep_tmp: %v", err)
		}
	}
}

func TestBootstrapSystemd(t *testing.T) {
	srv := sshdtest.StartGuest(t, sshdtest.Guest{Systemd: true})
	h := newBootstrapHarness(t)
	bins := buildAgent(t, agentName)
	// A systemctl that records what it is asked.
	fake := "#!/bin/sh\necho \"$*\" >> /var/log/systemctl.calls\n[ \"$1\" != is-active ] || echo active\n"
	if err := os.WriteFile(srv.Path("/usr/bin/systemctl"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	vm := newVM(t, "sd1", "vmware", fmt.Sprintf("  agent_binaries: %s\n  ssh_port: %d\n  private_key: %s\n", bins, srv.Port, srv.KeyFile))
	if err := h.d.Deploy(context.Background(), vm, localNode("sd1"), (&fired{}).fire); err != nil {
		t.Fatalf("deploy: %v\nlog: %s", err, h.log)
	}
	calls, err := os.ReadFile(srv.Path("/var/log/systemctl.calls"))
	if want := "daemon-reload\nenable brine-agent\nrestart brine-agent\nis-active brine-agent\n"; err != nil || string(calls) != want {
		t.Errorf("systemctl calls %q (%v), want %q", calls, err, want)
	}
	unit, err := os.ReadFile(srv.Path("/etc/systemd/system/brine-agent.service"))
	if err != nil || !strings.Contains(string(unit), "\nExecStart=/usr/bin/brine-agent -c /etc/brine\n") || !strings.Contains(string(unit), "WantedBy=multi-user.target") {
		t.Errorf("the unit installed: %q, %v", unit, err)
	}
	if pids := agentPids(t, srv, "/usr/bin/brine-agent"); len(pids) != 0 {
		t.Errorf("with systemd, the agent is the service's to start, not the bootstrap's: %v", pids)
	}
}

func TestBootstrapErrors(t *testing.T) {
	bins := buildAgent(t, agentName)
	empty := t.TempDir()
	pw := sshdtest.PasswordUser(t, "brinetest")
	for _, tc := range []struct {
		name string
		// uname and sha256sum, when set, replace the guest's.
		uname, sha256sum string
		keys             func(srv *sshdtest.Server) string
		is               error
		want             []string
	}{
		{
			name:  "unsupported architecture",
			uname: "#!/bin/sh\necho Linux riscv64\n",
			keys:  func(srv *sshdtest.Server) string { return "  agent_binaries: " + bins + "\n" },
			is:    deploy.ErrNoAgentBinary,
			want:  []string{"v: uname -sm said \"Linux riscv64\": brine builds no agent for the machine riscv64"},
		},
		{
			name:  "no binary for the platform",
			uname: "#!/bin/sh\necho Linux aarch64\n",
			keys:  func(srv *sshdtest.Server) string { return "  agent_binaries: " + bins + "\n" },
			is:    deploy.ErrNoAgentBinary,
			want:  []string{`v: uname -sm said "Linux aarch64" (linux/arm64), and there is no brine-agent-linux-arm64 in ` + bins},
		},
		{
			name: "no binary where it looks",
			keys: func(srv *sshdtest.Server) string { return "  agent_binaries: " + empty + "\n" },
			is:   deploy.ErrNoAgentBinary,
			want: []string{"v: uname -sm said \"Linux x86_64\"", "no " + agentName, "in " + empty, "set agent_binaries"},
		},
		{
			name:  "windows",
			uname: "#!/bin/sh\necho \"'uname' is not recognized as an internal or external command\" >&2\nexit 1\n",
			keys:  func(srv *sshdtest.Server) string { return "  agent_binaries: " + bins + "\n" },
			is:    deploy.ErrNoAgentBinary,
			want:  []string{"uname -sm failed on 127.0.0.1 (exit status 1", "Windows VMs are not supported"},
		},
		{
			name:      "corrupted upload",
			sha256sum: "#!/bin/sh\necho \"0000000000000000000000000000000000000000000000000000000000000000  $1\"\n",
			keys:      func(srv *sshdtest.Server) string { return "  agent_binaries: " + bins + "\n" },
			is:        deploy.ErrChecksum,
			want:      []string{"has sha256 0000000000000000000000000000000000000000000000000000000000000000, " + filepath.Join(bins, agentName) + " has "},
		},
		{
			name: "not root, sudo off",
			keys: func(srv *sshdtest.Server) string {
				return fmt.Sprintf("  agent_binaries: %s\n  ssh_username: brinetest\n  password: %s\n  sudo: False\n", bins, pw)
			},
			is:   deploy.ErrNeedRoot,
			want: []string{"v: logged in to 127.0.0.1 as brinetest, with sudo: False", "set sudo: True"},
		},
		{
			name: "agent exits at once",
			keys: func(srv *sshdtest.Server) string {
				return fmt.Sprintf("  agent_binaries: %s\n  minion: {fail: true}\n", bins)
			},
			is:   deploy.ErrScriptFailed,
			want: []string{"bootstrap-brine exited with status 1", "fakeagent: fail: true in the minion file"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := sshdtest.StartGuest(t, sshdtest.Guest{})
			for path, text := range map[string]string{"/usr/bin/uname": tc.uname, "/usr/bin/sha256sum": tc.sha256sum} {
				if text == "" {
					continue
				}
				if err := os.Remove(srv.Path(path)); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
				if err := os.WriteFile(srv.Path(path), []byte(text), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			h := newBootstrapHarness(t)
			keys := tc.keys(srv)
			if !strings.Contains(keys, "password:") {
				keys += "  private_key: " + srv.KeyFile + "\n"
			}
			vm := newVM(t, "v", "vmware", keys+fmt.Sprintf("  ssh_port: %d\n", srv.Port))
			var f fired
			err := h.d.Deploy(context.Background(), vm, localNode("v"), f.fire)
			if !errors.Is(err, tc.is) {
				t.Fatalf("got %v, want %v\nlog: %s", err, tc.is, h.log)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if _, ok := f.events["deploy_script"]; ok {
				t.Error("deploy_script fired for a failed bootstrap")
			}
			if _, ok := f.events["deploying"]; !ok {
				t.Error("no deploying event")
			}
		})
	}
}
