package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/internal/syncbuf"
)

// stamp is the release the test binary is built with, as make build
// stamps git describe.
const stamp = "v9.8.7-6-gabcdef0"

// buildAgent builds brine-agent as make build does (static, stamped) into
// dir.
func buildAgent(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "brine-agent")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin,
		"-ldflags", "-X github.com/brinehq/brine/cli/agentcmd.version="+stamp+" -X github.com/brinehq/brine/cli/agentcmd.commit=abcdef0123", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The binary under its own name and under Salt's: salt-call is call,
// salt-minion the agent; the stamped release shows in --version and in the
// brineversion grain.
func TestAgentBinary(t *testing.T) {
	dir := t.TempDir()
	bin := buildAgent(t, dir)
	for _, name := range []string{"salt-call", "salt-minion"} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "conf")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	minion := "id: web01\nmaster: 127.0.0.1\nmaster_port: 1\nacceptance_wait_time: 1\npki_dir: " + filepath.Join(dir, "pki") +
		"\ncachedir: " + filepath.Join(dir, "cache") + "\n"
	if err := os.WriteFile(filepath.Join(conf, "minion"), []byte(minion), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(dir, name), args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return stdout.String(), stderr.String(), code
	}

	if out, _, code := run("brine-agent", "--version"); code != 0 || !strings.HasPrefix(out, "brine-agent version "+stamp+" (commit abcdef0123,") {
		t.Errorf("brine-agent --version: exit %d, %q", code, out)
	}
	if out, _, code := run("salt-minion", "version"); code != 0 || !strings.Contains(out, stamp) {
		t.Errorf("salt-minion version: exit %d, %q", code, out)
	}
	if _, errOut, code := run("salt-minion", "cal"); code != 2 || !strings.Contains(errOut, `unknown command "cal"`) {
		t.Errorf("salt-minion cal: exit %d, %q; want 2 and unknown command", code, errOut)
	}
	out, errOut, code := run("salt-call", "-c", conf, "--local", "--json", "grains.item", "brineversion", "saltversion")
	var got struct {
		Local map[string]any `json:"local"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Local["brineversion"] != stamp || got.Local["saltversion"] != "3006.6" {
		t.Errorf("salt-call --local grains.item brineversion saltversion: exit %d, %q %s", code, out, errOut)
	}
	if out, _, code := run("brine-agent", "call", "-c", conf, "--local", "--json", "test.version"); code != 0 || strings.TrimSpace(out) != `{"local":"`+stamp+`"}` {
		t.Errorf("brine-agent call --local test.version: exit %d, %q", code, out)
	}

	// With no subcommand it is the agent: it starts, tries its master and
	// stops cleanly on SIGTERM.
	agent := exec.Command(filepath.Join(dir, "salt-minion"), "-c", conf)
	var log syncbuf.Buffer
	agent.Stderr = &log
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), "agent starting") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	_ = agent.Process.Signal(os.Interrupt)
	err := agent.Wait()
	if s := log.String(); !strings.Contains(s, "agent starting") || !strings.Contains(s, "version="+stamp) || err != nil {
		t.Errorf("salt-minion -c conf: %v; log:\n%s", err, s)
	}
}
