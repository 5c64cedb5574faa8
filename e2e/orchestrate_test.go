package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

// seed001Deploy is seed 001's rolling deploy: take web01 out of the load
// balancer, deploy, smoke-test, and put it back only if the test passed.
const seed001Deploy = `disable_in_lb:
  salt.function:
    - name: cmd.run
    - tgt: 'role:loadbalancer'
    - tgt_type: grain
    - arg:
      - haproxy-disable web01

deploy_app:
  salt.state:
    - tgt: web01
    - sls:
      - app
    - require:
      - salt: disable_in_lb

smoke_test:
  salt.function:
    - name: cmd.run
    - tgt: web01
    - arg:
      - smoke-test
    - require:
      - salt: deploy_app

add_to_lb:
  salt.function:
    - name: cmd.run
    - tgt: 'role:loadbalancer'
    - tgt_type: grain
    - arg:
      - haproxy-enable web01
    - require:
      - salt: smoke_test
`

// TestOrchestrate runs seed 001's orchestration against real agents: the
// load balancer's commands and the smoke test are scripts on their PATH
// that log what they did.
func TestOrchestrate(t *testing.T) {
	bin := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "actions.log")
	failFlag := filepath.Join(t.TempDir(), "smoke-fails")
	script := func(name, body string) {
		writeFile(t, filepath.Join(bin, name), "#!/bin/sh\n"+body)
		if err := os.Chmod(filepath.Join(bin, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script("haproxy-disable", fmt.Sprintf("echo \"disable $1\" >> %s\n", logFile))
	script("haproxy-enable", fmt.Sprintf("echo \"enable $1\" >> %s\n", logFile))
	script("smoke-test", fmt.Sprintf("echo smoke >> %s\n[ -f %s ] && { echo 'smoke test failed' >&2; exit 1; }\necho passed\n", logFile, failFlag))
	readLog := func() string { b, _ := os.ReadFile(logFile); return strings.TrimSpace(string(b)) }

	m := newTestMaster(t)
	srv := t.TempDir()
	app := filepath.Join(t.TempDir(), "app-version")
	writeFile(t, filepath.Join(srv, "orch", "deploy.sls"), seed001Deploy)
	writeFile(t, filepath.Join(srv, "app.sls"), fmt.Sprintf(`%s:
  file.managed:
    - contents: "{{ pillar.get('version', 'v1') }}"
  cmd.run:
    - name: echo "deployed $(cat %s)" >> %s
    - onchanges:
      - file: %s
`, app, app, logFile, app))
	writeFile(t, filepath.Join(srv, "orch", "parallel.sls"), `a:
  salt.function:
    - name: test.sleep
    - tgt: web01
    - arg: [1]
    - parallel: True
b:
  salt.function:
    - name: test.sleep
    - tgt: lb01
    - arg: [1]
    - parallel: True
c:
  salt.runner:
    - name: test.arg
    - kwarg: {after: both}
    - require:
      - salt: a
      - salt: b
d:
  event.send:
    - name: myco/orch/done
    - data: {branches: 2}
    - require:
      - salt: c
`)
	writeFile(t, filepath.Join(srv, "orch", "nobody.sls"), `ping:
  salt.function:
    - name: test.ping
    - tgt: 'nomatch*'
`)
	writeFile(t, filepath.Join(srv, "orch", "from_event.sls"), `record:
  salt.function:
    - name: cmd.run
    - tgt: web01
    - arg:
      - echo "event {{ pillar['event_tag'] }} version {{ pillar['event_data']['version'] }}" >> `+logFile+`
`)
	writeFile(t, filepath.Join(srv, "orch", "resume.sls"), `one:
  salt.function:
    - name: cmd.run
    - tgt: web01
    - arg: ["echo one >> `+logFile+`"]
wait:
  salt.runner:
    - name: test.sleep
    - s_time: 3
    - require:
      - salt: one
two:
  salt.function:
    - name: cmd.run
    - tgt: web01
    - arg: ["echo two >> `+logFile+`"]
    - require:
      - salt: wait
three:
  salt.function:
    - name: cmd.run
    - tgt: web01
    - arg: ["echo three >> `+logFile+`"]
    - require:
      - salt: two
`)
	writeFile(t, filepath.Join(srv, "reactor", "orch.sls"), `orchestrate_deploy:
  runner.state.orchestrate:
    - args:
      - mods: orch.from_event
      - pillar:
          event_tag: {{ tag }}
          event_data: {{ data|json }}
`)
	writeFile(t, filepath.Join(m.confDir, "master.d", "orch.conf"), fmt.Sprintf(`auto_accept: true
file_roots:
  base: [%s]
reactor:
  - 'myco/release':
    - salt://reactor/orch.sls
`, srv))
	t0 := time.Now().Add(-time.Second)
	m.start()
	evs := watchEvents(t, m, t0)
	path := "PATH=" + bin + ":" + os.Getenv("PATH")
	web01 := newTestAgent(t, m, "web01", "127.0.0.1", "grains:\n  role: web\n")
	web01.env = []string{path}
	web01.start()
	lb01 := newTestAgent(t, m, "lb01", "127.0.0.1", "grains:\n  role: loadbalancer\n")
	lb01.env = []string{path}
	lb01.start()
	web01.waitLog(logAccepted, 1)
	lb01.waitLog(logAccepted, 1)
	deadline := time.Now().Add(20 * time.Second)
	for {
		rets, _, _ := execJSON(t, m, "-G", "role:loadbalancer", "test.ping")
		if keysOf(rets) == "[lb01]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the load balancer's grain never matched: %v", rets)
		}
		time.Sleep(200 * time.Millisecond)
	}
	master := "test_master"
	orch := func(t *testing.T, args ...string) (string, string, int) {
		t.Helper()
		return m.run(nil, append([]string{"run", "state.orchestrate"}, args...)...)
	}

	t.Run("test mode runs nothing", func(t *testing.T) {
		out, errs, code := orch(t, "orch.deploy", "test=True")
		if code != 0 || !strings.Contains(out, "Function cmd.run would be executed on target role:loadbalancer") {
			t.Errorf("exit %d\n%s%s", code, out, errs)
		}
		if readLog() != "" {
			t.Errorf("test mode ran: %s", readLog())
		}
	})

	t.Run("seed 001 succeeds in order", func(t *testing.T) {
		out, errs, code := orch(t, "orch.deploy")
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		if got := readLog(); got != "disable web01\ndeployed v1\nsmoke\nenable web01" {
			t.Errorf("actions:\n%s", got)
		}
		for _, want := range []string{"Summary for " + master, "ID: disable_in_lb", "Function: salt.function",
			"Function ran successfully. Function cmd.run ran on lb01.", "States ran successfully. Updating web01.",
			"Succeeded: 4 (changed=4)", "Failed:    0"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in the output:\n%s", want, out)
			}
		}
		// The return, as salt-run --out json gives it.
		outJSON, _, _ := m.run(nil, "run", "state.orchestrate", "orch.deploy", "--json")
		if !strings.Contains(outJSON, `"salt_|-deploy_app_|-deploy_app_|-state"`) || !strings.Contains(outJSON, `"outputter":"highstate"`) {
			t.Errorf("json: %s", outJSON)
		}
	})

	t.Run("a failing smoke test stops before re-adding", func(t *testing.T) {
		os.Remove(logFile)
		writeFile(t, failFlag, "")
		defer os.Remove(failFlag)
		out, errs, code := orch(t, "orch.deploy")
		if code == 0 {
			t.Errorf("exit 0 though the smoke test failed\n%s", out)
		}
		// The app is deployed already (its state changes nothing).
		if got := readLog(); got != "disable web01\nsmoke" {
			t.Errorf("actions:\n%s", got)
		}
		for _, want := range []string{"Running function cmd.run failed on minions: web01", "One or more requisite failed: orch.deploy.smoke_test",
			"Failed:    2"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in the output:\n%s%s", want, out, errs)
			}
		}
		// The job failed, as Salt's runner client says of it.
		evs.wait(t, "the failed orchestration's ret", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret") && d["fun"] == "runner.state.orchestrate" && d["success"] == false
		})
	})

	t.Run("parallel steps overlap", func(t *testing.T) {
		start := time.Now()
		out, errs, code := orch(t, "orch.parallel")
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		if d := time.Since(start); d > 1900*time.Millisecond {
			t.Errorf("two parallel 1 s steps took %s", d)
		}
		if !strings.Contains(out, "Runner function 'test.arg' executed.") {
			t.Errorf("output:\n%s", out)
		}
		evs.wait(t, "the event.send step's event", tagIs("myco/orch/done", map[string]any{"branches": int64(2)}))
	})

	t.Run("progress events and the reactor", func(t *testing.T) {
		evs.wait(t, "a step's start event", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasPrefix(ev.Tag, "salt/run/") && strings.Contains(ev.Tag, "/step/") && d["tag"] == "salt_|-smoke_test_|-cmd.run_|-function" && d["phase"] == "start"
		})
		evs.wait(t, "a step's progress event", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasPrefix(ev.Tag, "salt/run/") && strings.Contains(ev.Tag, "/prog/") && d["tag"] == "salt_|-smoke_test_|-cmd.run_|-function"
		})
		os.Remove(logFile)
		c := m.client()
		defer c.Close()
		if _, err := c.Publish(t.Context(), "myco/release", map[string]any{"version": "v9"}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for readLog() != "event myco/release version v9" {
			if time.Now().After(deadline) {
				t.Fatalf("the reaction's orchestration did not run: %q\n%s", readLog(), evs.tags())
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("a master killed between steps resumes", func(t *testing.T) {
		os.Remove(logFile)
		// The client loses its master (and gives up); the job goes on.
		client := tied(exec.Command(brineBin, "-c", m.confDir, "run", "state.orchestrate", "orch.resume", "--timeout", "2s"))
		if err := client.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = client.Process.Kill(); _ = client.Wait() }()
		ev, _ := evs.wait(t, "step one's progress", func(ev *bus.Event, d map[string]any) bool {
			return strings.Contains(ev.Tag, "/prog/") && d["tag"] == "salt_|-one_|-cmd.run_|-function"
		})
		jid := strings.Split(ev.Tag, "/")[2]
		evs.stop()
		m.stop(syscall.SIGKILL) // during the wait step, before step two
		m.start()
		evs2 := watchEvents(t, m, t0)
		_, ret := evs2.wait(t, "the resumed orchestration's end", tagIs("salt/run/"+jid+"/ret", nil))
		if ret["success"] != true {
			t.Errorf("ret: %v", ret)
		}
		if got := readLog(); got != "one\ntwo\nthree" {
			t.Errorf("actions after the restart:\n%s", got)
		}
		out, _, code := m.run(nil, "jobs", "show", jid, "--json")
		for _, step := range []string{"salt_|-one_|-cmd.run_|-function", "salt_|-two_|-cmd.run_|-function", "salt_|-three_|-cmd.run_|-function"} {
			if code != 0 || !strings.Contains(out, step) {
				t.Errorf("brine jobs show %s: no step %s (exit %d)\n%s", jid, step, code, out)
			}
		}
		out, _, _ = m.run(nil, "jobs", "show", jid)
		for _, want := range []string{"steps:", "ID: one", "ID: wait", "ID: two", "ID: three", "Function cmd.run ran on web01."} {
			if !strings.Contains(out, want) {
				t.Errorf("brine jobs show %s: no %q\n%s", jid, want, out)
			}
		}
		evs = evs2
	})

	t.Run("orchestrate_high and a target selecting nobody", func(t *testing.T) {
		out, errs, code := m.run(nil, "run", "state.orchestrate_high", `data={hi: {test.succeed_without_changes: []}}`)
		if code != 0 || !strings.Contains(out, "ID: hi") {
			t.Errorf("orchestrate_high: exit %d\n%s%s", code, out, errs)
		}
		out, _, code = orch(t, "orch.nobody")
		if code == 0 || !strings.Contains(out, "No minions matched the target.") {
			t.Errorf("a step targeting nobody: exit %d\n%s", code, out)
		}
	})

	t.Run("errors", func(t *testing.T) {
		out, errs, code := orch(t, "orch.nosuch")
		if code == 0 || !strings.Contains(out+errs, "No matching sls found for 'orch.nosuch' in env 'base'") {
			t.Errorf("a missing SLS: exit %d\n%s%s", code, out, errs)
		}
	})
}
