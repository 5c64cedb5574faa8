package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

// Reactions of the seeds, run against real agents: a new agent is told to
// apply its highstate (there is no top file here, which its return says);
// an audit
// event runs a command on one agent; the audit of every job's start runs a
// script on one agent without reacting to its own job.
const (
	highstateOnStart = `highstate_run:
  local.state.highstate:
    - tgt: {{ data['id'] }}
`
	auditCmd = `audit:
  local.cmd.run:
    - tgt: web01
    - arg:
      - echo audited {{ data['n'] }}
    - timeout: 20
`
	auditEveryJob = `{% if data['fun'] != 'cmd.script' %}
audit_job:
  local.cmd.script:
    - tgt: '*web01*'
    - arg:
      - salt://lab/audit.sh
      - {{ data['jid'] }}
{% endif %}
`
)

// execMaster starts a master with auto_accept, nodegroups, file_roots
// holding lab/audit.sh, and the seed reactions.
func execMaster(t *testing.T, slackURL string) (*testMaster, string) {
	t.Helper()
	m := newTestMaster(t)
	roots := filepath.Join(t.TempDir(), "srv")
	for name, body := range map[string]string{
		"lab/audit.sh":          "#!/bin/sh\necho \"audit of job $1 on $(hostname)\"\n",
		"lab/fail.sh":           "#!/bin/sh\necho failing >&2\nexit 4\n",
		"reactor/start.sls":     highstateOnStart,
		"reactor/audit.sls":     auditCmd,
		"reactor/every_job.sls": auditEveryJob,
		"reactor/caller.sls":    "on_master:\n  caller.cmd.run:\n    - args:\n      - cmd: echo from the agent beside the master\n",
	} {
		p := filepath.Join(roots, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A secret next to file_roots: a traversal must not reach it.
	if err := os.WriteFile(filepath.Join(filepath.Dir(roots), "secret.txt"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`auto_accept: true
reactor_caller_id: db01
file_roots:
  base: [%s]
nodegroups:
  webs: 'L@web01,web02'
  dbs: [db01]
slack:
  token: xoxb-test-token
  api_url: %s
  channel: '#audit'
  rate: 0
reactor:
  - 'salt/minion/*/start':
    - salt://reactor/start.sls
  - 'myco/audit':
    - salt://reactor/audit.sls
  - 'myco/caller':
    - salt://reactor/caller.sls
  - 'salt/job/*/new':
    - salt://reactor/every_job.sls
`, roots, slackURL)
	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "exec.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return m, roots
}

// execJSON runs `brine exec ARGS… --json` and decodes its returns.
func execJSON(t *testing.T, m *testMaster, args ...string) (map[string]any, string, int) {
	t.Helper()
	out, errs, code := m.run(nil, append(append([]string{"exec"}, args...), "--json")...)
	var rets map[string]any
	if out != "" {
		if err := json.Unmarshal([]byte(out), &rets); err != nil {
			t.Fatalf("brine exec %v --json: %v\n%s%s", args, err, out, errs)
		}
	}
	return rets, errs, code
}

func keysOf(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return fmt.Sprint(sortedStrings(ks))
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestRemoteExecution(t *testing.T) {
	rec, apiURL := newSlackRecorder(t)
	m, _ := execMaster(t, apiURL)
	t0 := time.Now().Add(-time.Second)
	m.start()
	evs := watchEvents(t, m, t0)
	web01 := newTestAgent(t, m, "web01", "127.0.0.1", "grains:\n  roles: [nginx]\n").start()
	web02 := newTestAgent(t, m, "web02", "127.0.0.1", "grains:\n  roles: [nginx, postgresql]\n")
	web02.env = []string{"BRINE_TEST_DELAY=2"}
	web02.start()
	db01 := newTestAgent(t, m, "db01", "127.0.0.1", "grains:\n  roles: [postgresql]\n").start()
	ghost := newTestAgent(t, m, "ghost01", "127.0.0.1", "").start()
	for _, a := range []*testAgent{web01, web02, db01, ghost} {
		a.waitLog(logAccepted, 1)
	}
	// ghost01 has an accepted key but is not connected.
	ghost.stop()
	deadline := time.Now().Add(20 * time.Second)
	for slicesContains(manageUp(t, m), "ghost01") || len(manageUp(t, m)) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("manage.up = %v", manageUp(t, m))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Grains reach the mine with the first hello; wait for the roles.
	deadline = time.Now().Add(20 * time.Second)
	for {
		rets, _, _ := execJSON(t, m, "-G", "roles:postgresql", "test.ping")
		if keysOf(rets) == "[db01 web02]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grain target never matched db01 and web02: %v", rets)
		}
		time.Sleep(200 * time.Millisecond)
	}

	t.Run("targeting", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"web*", "test.ping"}, "[web01 web02]"},
			{[]string{"-L", "web01,db01", "test.ping"}, "[db01 web01]"},
			{[]string{"-E", "web0[2-9]", "test.ping"}, "[web02]"},
			{[]string{"-G", "roles:nginx", "test.ping"}, "[web01 web02]"},
			{[]string{"-P", "roles:^post.*", "test.ping"}, "[db01 web02]"},
			{[]string{"-C", "G@roles:nginx and not web02", "test.ping"}, "[web01]"},
			{[]string{"-C", "( E@db.* or L@web02 ) and G@roles:postgresql", "test.ping"}, "[db01 web02]"},
			{[]string{"-N", "webs", "test.ping"}, "[web01 web02]"},
			{[]string{"-N", "dbs", "test.ping"}, "[db01]"},
			{[]string{"-C", "S@127.0.0.0/8 and not ghost01", "test.ping"}, "[db01 web01 web02]"},
		} {
			rets, errs, code := execJSON(t, m, tc.args...)
			if code != 0 || keysOf(rets) != tc.want {
				t.Errorf("brine exec %v: exit %d, returns from %s, want %s\n%s", tc.args, code, keysOf(rets), tc.want, errs)
			}
			for id, v := range rets {
				if v != true {
					t.Errorf("brine exec %v: %s returned %v", tc.args, id, v)
				}
			}
		}
		_, errs, code := m.run(nil, "exec", "nomatch*", "test.ping")
		if code != 2 || !strings.Contains(errs, "No minions matched the target.") {
			t.Errorf("a target matching nothing: exit %d, %s", code, errs)
		}
		_, errs, code = m.run(nil, "exec", "-C", "G@os:Debian and or web*", "test.ping")
		if code == 0 || !strings.Contains(errs, "position") {
			t.Errorf("a compound that does not parse: exit %d, %s", code, errs)
		}
		// No pillar_roots here: a pillar target selects nobody (TestStates
		// has agents with pillar).
		_, errs, code = m.run(nil, "exec", "-I", "role:web", "test.ping")
		if code != 2 || !strings.Contains(errs, "No minions matched the target.") {
			t.Errorf("a pillar target: exit %d, %s", code, errs)
		}
	})

	t.Run("returns stream as they arrive; absent agents at once", func(t *testing.T) {
		start := time.Now()
		out, errs, code := m.run(nil, "exec", "-L", "web01,web02,db01,ghost01", "test.sleep", "length=0", "-t", "10")
		if time.Since(start) > 8*time.Second {
			t.Errorf("brine exec waited %s though every connected agent answered at once", time.Since(start))
		}
		if code != 1 || !strings.Contains(out, "ghost01:\n    Minion did not return. [Not connected]") ||
			strings.Index(out, "ghost01:") > strings.Index(out, "web01:") {
			t.Errorf("an absent agent is reported first, at once, and the exit status is 1: exit %d\n%s%s", code, out, errs)
		}
		// The job is over once the connected agents returned.
		_, nev := evs.wait(t, "the job that missed ghost01", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/new") && d["fun"] == "test.sleep" && fmt.Sprint(d["not_connected"]) == "[ghost01]"
		})
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			out, _, _ := m.run(nil, "jobs", "show", fmt.Sprint(nev["jid"]))
			if strings.Contains(out, "not sent: ghost01 (not connected)") && !strings.Contains(out, "missing:") &&
				!strings.Contains(out, "running") {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("brine jobs show of a job with an absent agent:\n%s", out)
				break
			}
		}
		// web02 sleeps BRINE_TEST_DELAY seconds: web01's return is
		// printed while web02 still runs.
		cmd := tied(exec.Command(brineBin, "-c", m.confDir, "exec", "-L", "web01,web02", "cmd.run", "sleep ${BRINE_TEST_DELAY:-0}; echo done", "-t", "10"))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var seen strings.Builder
		buf := make([]byte, 256)
		first := time.Duration(0)
		for {
			n, err := stdout.Read(buf)
			seen.Write(buf[:n])
			if first == 0 && strings.Contains(seen.String(), "web01:\n    done\n") {
				first = time.Since(start)
			}
			if err != nil {
				break
			}
		}
		if err := cmd.Wait(); err != nil || seen.String() != "web01:\n    done\nweb02:\n    done\n" {
			t.Errorf("streamed returns: %v\n%s", err, seen.String())
		}
		if first == 0 || first > 1500*time.Millisecond || time.Since(start) < 2*time.Second {
			t.Errorf("web01's return printed after %s, the command ended after %s: want web01 first, before web02's 2 s", first, time.Since(start))
		}
		out, _, code = m.run(nil, "exec", "-L", "web01,db01", "test.arg", "1", "two", "k=3", "--out", "json")
		if code != 0 || strings.Count(out, "\"__pub_jid\"") != 2 {
			t.Errorf("--out json prints each return as it arrives: exit %d\n%s", code, out)
		}
	})

	t.Run("batches", func(t *testing.T) {
		// Two at a time out of three: web02's 2 s sleep holds its slot,
		// the third starts when web01 or db01 returns.
		cmd := tied(exec.Command(brineBin, "-c", m.confDir, "exec", "-L", "web01,web02,db01", "cmd.run", "sleep ${BRINE_TEST_DELAY:-0}; echo ok", "-b", "2", "--json"))
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		var rets map[string]any
		if err != nil || json.Unmarshal([]byte(stdout.String()), &rets) != nil || keysOf(rets) != "[db01 web01 web02]" {
			t.Fatalf("--batch-size 2: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		if runs := strings.Count(stderr.String(), "Executing run on "); runs != 2 || time.Since(start) > 8*time.Second {
			t.Errorf("--batch-size 2 of 3: %d runs started in %s, want 2 (two, then one)\n%s", runs, time.Since(start), stderr.String())
		}
		if _, errs, code := m.run(nil, "exec", "*", "test.ping", "-b", "0"); code != 2 || !strings.Contains(errs, "--batch-size") {
			t.Errorf("-b 0: exit %d %s", code, errs)
		}
	})

	t.Run("a slow agent is waited for past --timeout while it runs the job", func(t *testing.T) {
		start := time.Now()
		rets, errs, code := execJSON(t, m, "db01", "test.sleep", "4", "-t", "1")
		if code != 0 || rets["db01"] != true || time.Since(start) < 4*time.Second {
			t.Errorf("test.sleep 4 with -t 1: exit %d after %s: %v\n%s", code, time.Since(start), rets, errs)
		}
	})

	t.Run("a function that hangs is stopped and reported", func(t *testing.T) {
		start := time.Now()
		rets, errs, code := execJSON(t, m, "db01", "cmd.run", "sleep 30", "--kill-after", "1")
		if code != 1 || !strings.Contains(fmt.Sprint(rets["db01"]), "timeout of 1s") || time.Since(start) > 10*time.Second {
			t.Errorf("--kill-after 1 of sleep 30: exit %d after %s: %v\n%s", code, time.Since(start), rets, errs)
		}
	})

	t.Run("Salt's return shapes and failures", func(t *testing.T) {
		rets, _, code := execJSON(t, m, "web01", "foo.bar")
		if code != 1 || rets["web01"] != "'foo.bar' is not available." {
			t.Errorf("unknown function: exit %d, %v", code, rets)
		}
		rets, errs, code := execJSON(t, m, "web01", "cmd.run", "echo out; exit 3", "--retcode-passthrough")
		if code != 3 || rets["web01"] != "out" {
			t.Errorf("cmd.run exit 3 with --retcode-passthrough: exit %d, %v\n%s", code, rets, errs)
		}
		_, ret := evs.wait(t, "the return of cmd.run exit 3", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret/web01") && d["fun"] == "cmd.run" && d["retcode"] == int64(3)
		})
		for _, k := range []string{"cmd", "fun", "fun_args", "id", "jid", "retcode", "return", "success"} {
			if _, ok := ret[k]; !ok {
				t.Errorf("the return event has no %q: %v", k, ret)
			}
		}
		if ret["cmd"] != "_return" || ret["success"] != false {
			t.Errorf("return event: %v", ret)
		}
		_, nev := evs.wait(t, "the new event of cmd.run exit 3", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasPrefix(ev.Tag, "salt/job/") && strings.HasSuffix(ev.Tag, "/new") && d["fun"] == "cmd.run" &&
				fmt.Sprint(d["arg"]) == "[echo out; exit 3]"
		})
		if !reflect.DeepEqual(nev["minions"], []any{"web01"}) || nev["tgt"] != "web01" || nev["tgt_type"] != "glob" ||
			nev["missing"] == nil || nev["user"] == "" {
			t.Errorf("new event: %v", nev)
		}
		out, _, code := m.run(nil, "exec", "web01", "test.arg", "1", "x=y")
		if code != 0 || !strings.HasPrefix(out, "web01:\n    ----------\n    args:\n        - 1\n    kwargs:\n        ----------\n") {
			t.Errorf("nested output:\n%s", out)
		}
	})

	t.Run("the Slack audit threads a remote job with each agent's result", func(t *testing.T) {
		out, errs, code := m.run(nil, "exec", "-G", "roles:nginx", "cmd.run", "echo nginx restart; exit $((${BRINE_TEST_DELAY:-0} > 0))")
		if code != 1 {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		var parent map[string]string
		var replies []map[string]string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			rec.mu.Lock()
			msgs := append([]map[string]string(nil), rec.msgs...)
			rec.mu.Unlock()
			parent, replies = nil, nil
			for _, msg := range msgs {
				if msg["method"] == "chat.postMessage" && strings.Contains(msg["text"], "salt -G roles:nginx cmd.run 'echo nginx restart;") {
					parent = msg
				}
			}
			for _, msg := range msgs {
				if parent != nil && msg["thread_ts"] == parent["ts"] {
					replies = append(replies, msg)
				}
			}
			if len(replies) == 3 {
				break
			}
		}
		if parent == nil || len(replies) != 3 {
			t.Fatalf("Slack: parent %v, replies %v", parent, replies)
		}
		all := replies[0]["text"] + "\n" + replies[1]["text"]
		if !strings.Contains(all, ":white_check_mark: *web01* succeeded") || !strings.Contains(all, ":x: *web02* failed") ||
			replies[2]["text"] != ":checkered_flag: all 2 agents returned, 1 failed: web02" {
			t.Errorf("thread replies: %s\nsummary: %s", all, replies[2]["text"])
		}
	})

	t.Run("cmd.script from salt:// and a traversal refused", func(t *testing.T) {
		rets, errs, code := execJSON(t, m, "web02", "cmd.script", "salt://lab/audit.sh", "J1")
		r, _ := rets["web02"].(map[string]any)
		if code != 0 || !strings.HasPrefix(fmt.Sprint(r["stdout"]), "audit of job J1 on ") || r["retcode"] != float64(0) {
			t.Errorf("cmd.script: exit %d, %v\n%s", code, rets, errs)
		}
		rets, _, code = execJSON(t, m, "web02", "cmd.script", "salt://../secret.txt")
		if code != 1 || strings.Contains(fmt.Sprint(rets), "s3cret") || !strings.Contains(fmt.Sprint(rets), "outside") {
			t.Errorf("a salt:// path out of file_roots: exit %d, %v", code, rets)
		}
		rets, _, code = execJSON(t, m, "web02", "cmd.script", "salt://lab/nothere.sh")
		if code != 1 || !strings.Contains(fmt.Sprint(rets), "nothere.sh") {
			t.Errorf("a salt:// path that does not exist: exit %d, %v", code, rets)
		}
		rets, _, code = execJSON(t, m, "web02", "cp.list_master", "prefix=lab/")
		if code != 0 || fmt.Sprint(rets["web02"]) != "[lab/audit.sh lab/fail.sh]" {
			t.Errorf("cp.list_master: exit %d, %v", code, rets)
		}
	})

	t.Run("seed reactions act on real agents", func(t *testing.T) {
		// local.state.highstate on every start: file_roots has no top
		// file, so each agent's return says so (Salt's words) and the
		// reaction fails with an error event naming it.
		evs.wait(t, "the highstate reaction's failure", func(ev *bus.Event, d map[string]any) bool {
			return ev.Tag == "brine/reactor/error" && strings.Contains(fmt.Sprint(d["error"]), "state.highstate") &&
				strings.Contains(fmt.Sprint(d["error"]), "No Top file or master_tops data matches found")
		})
		c := m.client()
		defer c.Close()
		ctx := t.Context()
		if _, err := c.Publish(ctx, "myco/audit", map[string]any{"n": 7}); err != nil {
			t.Fatal(err)
		}
		ev, _ := evs.wait(t, "the audit reaction's return", func(ev *bus.Event, d map[string]any) bool {
			return ev.Tag != "" && strings.HasSuffix(ev.Tag, "/ret/web01") && d["return"] == "audited 7"
		})
		if ev.Depth < 2 {
			t.Errorf("the return of a reaction's job is deeper than the event reacted to: depth %d", ev.Depth)
		}
		// Every job's start runs the audit script, once per job: its
		// own cmd.script job is not reacted to.
		var news, scripts, others []*bus.Event
		var datas []map[string]any
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			evs.sync(t)
			news, _ = evs.all(func(ev *bus.Event, d map[string]any) bool {
				return strings.HasSuffix(ev.Tag, "/new") && strings.HasPrefix(ev.Tag, "salt/job/") && d["fun"] == "cmd.script"
			})
			scripts, datas = evs.all(func(ev *bus.Event, d map[string]any) bool {
				return strings.HasSuffix(ev.Tag, "/ret/web01") && d["fun"] == "cmd.script"
			})
			others, _ = evs.all(func(ev *bus.Event, d map[string]any) bool {
				return strings.HasSuffix(ev.Tag, "/new") && strings.HasPrefix(ev.Tag, "salt/job/") && d["fun"] != "cmd.script"
			})
			if len(scripts) > 0 && len(others) == len(scripts) || time.Now().After(deadline) {
				break
			}
		}
		// One audit per job; an audit published while web01 was still
		// connecting is published again (a retry), not reacted to.
		if len(scripts) == 0 || len(others) != len(scripts) || len(news) < len(scripts) {
			t.Errorf("audit script jobs: %d other jobs, %d audits started, %d returned", len(others), len(news), len(scripts))
		}
		for _, d := range datas {
			if !strings.Contains(fmt.Sprint(d["return"]), "audit of job ") {
				t.Errorf("audit script return: %v", d["return"])
			}
		}
		loops, _ := evs.all(tagIs("brine/reactor/loop", nil))
		if len(loops) > 0 {
			t.Errorf("the audit reaction looped: %d loop notices", len(loops))
		}
	})

	t.Run("grains set on an agent target it at once; caller reactions; network.ping", func(t *testing.T) {
		rets, errs, code := execJSON(t, m, "web01", "grains.setval", "deploy_group", "blue")
		if code != 0 || fmt.Sprint(rets["web01"]) != "map[deploy_group:blue]" {
			t.Fatalf("grains.setval: exit %d %v\n%s", code, rets, errs)
		}
		rets, _, code = execJSON(t, m, "-G", "deploy_group:blue", "grains.append", "tags", "a")
		if code != 0 || fmt.Sprint(rets) != "map[web01:map[tags:[a]]]" {
			t.Errorf("a grain set a moment ago targets its agent: exit %d %v", code, rets)
		}
		if b, err := os.ReadFile(filepath.Join(web01.dir, "grains")); err != nil || !strings.Contains(string(b), "deploy_group: blue") {
			t.Errorf("the grains file: %q %v", b, err)
		}
		rets, _, code = execJSON(t, m, "web01", "network.ping", "127.0.0.1", "return_boolean=True", "timeout=2")
		if code != 0 || rets["web01"] != true {
			t.Errorf("network.ping 127.0.0.1: exit %d %v", code, rets)
		}
		c := m.client()
		defer c.Close()
		if _, err := c.Publish(t.Context(), "myco/caller", nil); err != nil {
			t.Fatal(err)
		}
		evs.wait(t, "the caller reaction's return on db01", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret/db01") && d["return"] == "from the agent beside the master"
		})
	})

	t.Run("saltutil.running and kill_job; mine.get from an agent", func(t *testing.T) {
		out, errs, code := m.run(nil, "exec", "web02", "cmd.run", "sleep 60", "--async")
		jid := strings.TrimPrefix(strings.TrimSpace(out), "Executed command with job ID: ")
		if code != 0 || len(jid) != 20 {
			t.Fatalf("--async: exit %d: %q %s", code, out, errs)
		}
		var running []any
		for deadline := time.Now().Add(10 * time.Second); len(running) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			rets, _, _ := execJSON(t, m, "web02", "saltutil.running")
			running, _ = rets["web02"].([]any)
		}
		if len(running) != 1 || running[0].(map[string]any)["jid"] != jid || running[0].(map[string]any)["fun"] != "cmd.run" {
			t.Fatalf("saltutil.running: %v", running)
		}
		rets, _, code := execJSON(t, m, "web02", "saltutil.find_job", jid)
		if code != 0 || rets["web02"].(map[string]any)["jid"] != jid {
			t.Errorf("saltutil.find_job: exit %d %v", code, rets)
		}
		start := time.Now()
		if rets, _, code = execJSON(t, m, "web02", "saltutil.kill_job", jid); code != 0 {
			t.Errorf("saltutil.kill_job: exit %d %v", code, rets)
		}
		_, ret := evs.wait(t, "the killed job's return", tagIs("salt/job/"+jid+"/ret/web02", nil))
		if ret["success"] != false || !strings.Contains(fmt.Sprint(ret["return"]), "killed") || time.Since(start) > 10*time.Second {
			t.Errorf("killed job's return after %s: %v", time.Since(start), ret)
		}
		rets, _, code = execJSON(t, m, "db01", "mine.get", "web*", "network.ip_addrs")
		if code != 0 || keysOf(rets["db01"].(map[string]any)) != "[web01 web02]" {
			t.Errorf("mine.get from an agent: exit %d %v", code, rets)
		}
	})

	t.Run("an agent killed mid-job returns it after its restart, once", func(t *testing.T) {
		out, errs, code := m.run(nil, "exec", "db01", "test.sleep", "30", "--async")
		jid := strings.TrimPrefix(strings.TrimSpace(out), "Executed command with job ID: ")
		if code != 0 || len(jid) != 20 {
			t.Fatalf("--async: exit %d: %q %s", code, out, errs)
		}
		proc := filepath.Join(db01.dir, "cache", "proc", jid)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(proc); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("db01 never started job %s (%s)", jid, proc)
			}
		}
		_ = db01.cmd.Process.Signal(syscall.SIGKILL)
		<-db01.exited
		db01.start()
		_, ret := evs.wait(t, "the interrupted return", tagIs("salt/job/"+jid+"/ret/db01", nil))
		if ret["success"] != false || !strings.Contains(fmt.Sprint(ret["return"]), "restarted while the job ran") {
			t.Errorf("interrupted job's return: %v", ret)
		}
		evs.sync(t)
		if n, _ := evs.all(tagIs("salt/job/"+jid+"/ret/db01", nil)); len(n) != 1 {
			t.Errorf("%d returns for the interrupted job, want 1", len(n))
		}
	})

	t.Run("the master killed mid-job gets the return after its restart, once", func(t *testing.T) {
		db01.waitLog(logAccepted, 1)
		out, errs, code := m.run(nil, "exec", "web01", "test.sleep", "3", "--async")
		jid := strings.TrimPrefix(strings.TrimSpace(out), "Executed command with job ID: ")
		if code != 0 {
			t.Fatalf("--async: exit %d: %s", code, errs)
		}
		time.Sleep(500 * time.Millisecond)
		evs.stop()
		m.stop(syscall.SIGKILL)
		time.Sleep(4 * time.Second) // the job ends while the master is down
		m.start()
		evs2 := watchEvents(t, m, t0)
		_, ret := evs2.wait(t, "the return after the master's restart", tagIs("salt/job/"+jid+"/ret/web01", nil))
		if ret["return"] != true {
			t.Errorf("return: %v", ret)
		}
		evs2.sync(t)
		if n, _ := evs2.all(tagIs("salt/job/"+jid+"/ret/web01", nil)); len(n) != 1 {
			t.Errorf("%d returns after the restart, want 1", len(n))
		}
		out, _, code = m.run(nil, "jobs", "show", jid, "--json")
		if code != 0 || !strings.Contains(out, `"web01"`) {
			t.Errorf("brine jobs show %s: exit %d\n%s", jid, code, out)
		}
	})

	t.Run("Salt's command names", func(t *testing.T) {
		dir := t.TempDir()
		out, errs, code := m.run(nil, "install-aliases", dir, "--json")
		var made struct{ Created []string }
		if code != 0 || json.Unmarshal([]byte(out), &made) != nil || len(made.Created) != 7 {
			t.Fatalf("brine install-aliases: exit %d\n%s%s", code, out, errs)
		}
		if out, _, code = m.run(nil, "install-aliases", dir); code != 0 || strings.Count(out, "kept") != 7 {
			t.Errorf("install-aliases again keeps the links: exit %d\n%s", code, out)
		}
		// salt-run state.event waits for the next job; salt starts one.
		watch := tied(exec.Command(filepath.Join(dir, "salt-run"), "-c", m.confDir, "state.event", "salt/job/*/new", "count=1", "quiet=True"))
		if err := watch.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond) // the watch subscribes
		out, errs, code = runCmd(t, exec.Command(filepath.Join(dir, "salt"), "-c", m.confDir, "web01", "event.send",
			"myapp/deploy/complete", `{"version": "1.4.2", "status": "ok"}`))
		if code != 0 || out != "web01:\n    True\n" {
			t.Errorf("salt web01 event.send: exit %d\n%s%s", code, out, errs)
		}
		werr := make(chan error, 1)
		go func() { werr <- watch.Wait() }()
		select {
		case err := <-werr:
			if err != nil {
				t.Errorf("salt-run state.event salt/job/*/new count=1 quiet=True: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = watch.Process.Kill()
			t.Errorf("salt-run state.event count=1 did not end after a job started")
		}
		evs2 := watchEvents(t, m, t0)
		_, d := evs2.wait(t, "myapp/deploy/complete", tagIs("myapp/deploy/complete", nil))
		if dd, _ := d["data"].(map[string]any); dd["status"] != "ok" || dd["version"] != "1.4.2" || dd["__pub_tgt"] != "web01" || d["id"] != "web01" {
			t.Errorf("event from salt web01 event.send: %v", d)
		}
		out, errs, code = runCmd(t, exec.Command(filepath.Join(dir, "salt"), "-c", m.confDir, "web01", "test.ping", "--summary"))
		if code != 2 || !strings.Contains(errs, "--summary") {
			t.Errorf("an unsupported Salt flag: exit %d\n%s%s", code, out, errs)
		}
		out, errs, code = runCmd(t, exec.Command(filepath.Join(dir, "salt-key"), "-c", m.confDir, "-L"))
		if code != 0 || !strings.Contains(out, "web01") {
			t.Errorf("salt-key -L: exit %d\n%s%s", code, out, errs)
		}
		// The job that sent the event, looked up as salt-run does.
		_, nd := evs2.wait(t, "the event.send job", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret/web01") && d["fun"] == "event.send"
		})
		jid := fmt.Sprint(nd["jid"])
		out, errs, code = runCmd(t, exec.Command(filepath.Join(dir, "salt-run"), "-c", m.confDir, "jobs.lookup_jid", jid))
		if code != 0 || out != "web01: true\n" {
			t.Errorf("salt-run jobs.lookup_jid %s: exit %d\n%s%s", jid, code, out, errs)
		}
		out, errs, code = runCmd(t, exec.Command(filepath.Join(dir, "salt-call"), "-c", web01.dir, "event.send",
			"instar/custom/event", "with_grains=true"))
		if code != 0 || out != "local:\n    True\n" {
			t.Errorf("salt-call event.send: exit %d\n%s%s", code, out, errs)
		}
		out, errs, code = runCmd(t, exec.Command(filepath.Join(dir, "salt-call"), "-c", web01.dir, "cp.list_master", "prefix=lab/", "--out", "json"))
		if code != 0 || !strings.Contains(out, `"lab/audit.sh"`) {
			t.Errorf("salt-call cp.list_master (the master's file server): exit %d\n%s%s", code, out, errs)
		}
		_, d = evs2.wait(t, "instar/custom/event", tagIs("instar/custom/event", nil))
		if dd, _ := d["data"].(map[string]any); dd["grains"] == nil || d["id"] != "web01" {
			t.Errorf("salt-call event.send with_grains=true: %v", d)
		}
	})
}

func slicesContains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
