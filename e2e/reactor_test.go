package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func fixturePath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "reactor", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReactorTestCommand(t *testing.T) {
	m := newTestMaster(t) // only its config: reactor test needs no master
	conf := fmt.Sprintf(`reactor:
  - 'salt/cloud/*/created':
    - %s
    - %s
  - 'myco/*':
    - %s
`, fixturePath(t, "arg_kwarg.sls"), fixturePath(t, "broken_yaml.sls"), fixturePath(t, "unified_args.sls"))
	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "reactor.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := m.run(nil, "reactor", "test", "salt/cloud/web1/created", "id=web1", "act=pend", `data={"n": 3}`)
	if code != 1 {
		t.Fatalf("exit %d with a broken file, want 1; stderr %s", code, errOut)
	}
	for _, want := range []string{
		"    4        - web1",
		`echo_args: runner.test.arg "web1" 42 act="pend" nested={"n":3}`,
		fixturePath(t, "arg_kwarg.sls") + ":2",
		fixturePath(t, "broken_yaml.sls") + ":4: yaml:",
	} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("output lacks %q:\n%s%s", want, out, errOut)
		}
	}

	out, errOut, code = m.run(nil, "reactor", "test", "myco/x", `{"id": "a1", "data": {"k": 1}}`, "--execute", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Calls   []struct{ ID, Fun string }
		Results []struct{ ID, Status string }
		Events  []struct {
			Tag   string
			Cause string
			Depth int
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(rep.Calls) != 1 || rep.Calls[0].Fun != "event.send" || len(rep.Results) != 1 || rep.Results[0].Status != "succeeded" {
		t.Fatalf("report %+v", rep)
	}
	var fired bool
	for _, ev := range rep.Events {
		fired = fired || ev.Tag == "myco/forwarded/a1" && ev.Depth == 1 && ev.Cause != ""
	}
	if !fired {
		t.Errorf("event.send's event missing from %+v", rep.Events)
	}

	// The integrations' functions are checked by signature without a master.
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "reactor.conf"),
		[]byte(fmt.Sprintf("reactor:\n  - 'salt/cloud/*/created':\n    - %s\n", fixturePath(t, "legacy_kwargs.sls"))), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = m.run(nil, "reactor", "test", "salt/cloud/web1/created", "name=web1", `public_ips=["192.0.2.10"]`)
	if code != 0 || !strings.Contains(out, `add_dns: runner.ddns.add_host ip="192.0.2.10" name="web1" ttl=300 zone="example.com"`) {
		t.Errorf("ddns reaction: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = m.run(nil, "reactor", "test", "salt/cloud/web1/created", "name=web1", `public_ips=["192.0.2.10"]`, "--execute")
	if code != 1 || !strings.Contains(out, "runs only on the master") {
		t.Errorf("ddns reaction executed without a master: exit %d\n%s", code, out)
	}

	// A local reaction is checked without agents; executed, it needs the
	// master, and says so.
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "reactor.conf"),
		[]byte(fmt.Sprintf("reactor:\n  - 'salt/minion/*/start':\n    - %s\n", fixturePath(t, "cmd_alias.sls"))), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := m.run(nil, "reactor", "test", "salt/minion/web1/start", "id=web1")
	if code != 0 {
		t.Errorf("local reaction checked: exit %d\n%s%s", code, out, errs)
	}
	out, _, code = m.run(nil, "reactor", "test", "salt/minion/web1/start", "id=web1", "--execute")
	if code != 1 || !strings.Contains(out, "agent connection") {
		t.Errorf("local reaction executed without a master: exit %d, want 1 with the reason\n%s", code, out)
	}

	if _, _, code := m.run(nil, "reactor", "test"); code != 2 {
		t.Errorf("no TAG: exit %d, want 2", code)
	}
}

func TestReactorOnMasterDeadLetters(t *testing.T) {
	m := newTestMaster(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "fail.sls")
	if err := os.WriteFile(file, []byte("always_fails:\n  runner.test.exception:\n    - message: zone refused\n    - retry: {attempts: 2, interval: 0.01}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(m.confDir, "master"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "reactor:\n  - 'myco/fail':\n    - %s\n", file)
	f.Close()
	m.start()

	if out, errOut, code := m.run(nil, "event", "send", "myco/fail", "n=1"); code != 0 {
		t.Fatalf("send: %d %s %s", code, out, errOut)
	}
	var out, errOut string
	var code int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, errOut, code = m.run(nil, "reactor", "dlq")
		if code == 0 && strings.Contains(out, "always_fails") || time.Now().After(deadline) {
			break
		}
	}
	if code != 0 || !strings.Contains(out, "runner.test.exception") || !strings.Contains(out, "zone refused") {
		t.Fatalf("dlq: exit %d\n%s%s", code, out, errOut)
	}
	id := strings.Fields(strings.Split(out, "\n")[1])[0]

	out, errOut, code = m.run(nil, "reactor", "redrive", id)
	if code != 1 || !strings.Contains(out, "zone refused") {
		t.Errorf("redrive of a still-failing reaction: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := m.run(nil, "reactor", "redrive"); code != 2 {
		t.Errorf("redrive without ID: exit %d, want 2", code)
	}

	out, errOut, code = m.run(nil, "reactor", "list")
	if code != 0 || !strings.Contains(out, "myco/fail") || !strings.Contains(out, file) || !strings.Contains(out, "dead_lettered=1") {
		t.Errorf("list: exit %d\n%s%s", code, out, errOut)
	}
}

func TestReactorMappingReloadsOnSIGHUP(t *testing.T) {
	m := newTestMaster(t)
	conf := filepath.Join(m.confDir, "master.d", "reactor.conf")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(glob string) {
		text := fmt.Sprintf("reactor:\n  - '%s':\n    - %s\n", glob, fixturePath(t, "arg_kwarg.sls"))
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("before/*")
	m.start()
	if out, errOut, code := m.run(nil, "reactor", "list"); code != 0 || !strings.Contains(out, "before/*") {
		t.Fatalf("list: %d\n%s%s", code, out, errOut)
	}
	write("after/*")
	_ = m.cmd.Process.Signal(syscall.SIGHUP)
	var out string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out, _, _ = m.run(nil, "reactor", "list")
		if strings.Contains(out, "after/*") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(out, "after/*") || strings.Contains(out, "before/*") {
		t.Fatalf("after SIGHUP the mapping is\n%s", out)
	}
}
