package e2e

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/integrations/dnsmasq/dnsmasqtest"
	"github.com/brinehq/brine/internal/saltpeer"
)

// The Salt fleet's formula: a highstate whose file takes its text from
// pillar and its name and kernel from grains, and the state a deploy
// reaction applies with the version its event carries.
var saltFleetStates = map[string]string{
	"top.sls": "base:\n  'web-s*':\n    - motd\n",
	"motd.sls": `motd:
  file.managed:
    - name: {{ pillar['marker_dir'] }}/motd-{{ grains['id'] }}
    - contents: "{{ pillar['motd'] }} ({{ grains['role'] }} on {{ grains['kernel'] }})"
`,
	"deploy.sls": `deployed:
  file.managed:
    - name: {{ pillar['marker_dir'] }}/deployed-{{ grains['id'] }}
    - contents: "version {{ pillar['version'] }}"
`,
	// Seed 003's reaction: the sender's id is the target, the event's
	// version its pillar.
	"reactor/deploy.sls": `deploy_app:
  local.state.sls:
    - tgt: {{ data['id'] }}
    - arg:
      - deploy
    - kwarg:
        pillar:
          version: {{ data['data']['version'] }}
`,
	// The seed's key reaction, for the web fleet, salt-minions and brine
	// agents alike.
	"reactor/accept.sls": `{% if data['act'] == 'pend' and data['id'].startswith('web-') %}
accept_minion:
  wheel.key.accept:
    - match: {{ data['id'] }}
{% endif %}
`,
}

// TestSaltMinion runs three unmodified salt-minion 3006.6 processes and
// two brine agents against one brine master, which serves the minions on
// its own ports with Salt's transport: their keys accepted by the seed's
// salt/auth reaction, jobs to all five (glob and grain targets), a
// highstate from brine's file_roots with pillar on a real minion,
// salt-call event.send from one starting seed 003's deploy reaction, and a
// deleted key cutting its minion off while the others keep answering.
// The minions' logs (SALT_LOG_LEVEL=debug for more than info) and the
// master's are printed when it fails.
func TestSaltMinion(t *testing.T) {
	start := time.Now()
	tree := saltpeer.Tree(t)

	m := newTestMaster(t)
	srv, marks := t.TempDir(), t.TempDir()
	for name, body := range saltFleetStates {
		writeFile(t, filepath.Join(srv, "salt", name), body)
	}
	writeFile(t, filepath.Join(srv, "pillar", "top.sls"), "base:\n  'web-s*':\n    - fleet\n")
	writeFile(t, filepath.Join(srv, "pillar", "fleet.sls"), fmt.Sprintf("marker_dir: %s\nmotd: Welcome to the salt fleet\n", marks))
	writeFile(t, filepath.Join(m.confDir, "master.d", "roots.conf"), fmt.Sprintf("file_roots:\n  base: [%s]\npillar_roots:\n  base: [%s]\n",
		filepath.Join(srv, "salt"), filepath.Join(srv, "pillar")))
	reactorConf := filepath.Join(m.confDir, "master.d", "reactor.conf")
	keyReaction := "  - 'salt/auth':\n    - salt://reactor/accept.sls\n"
	deployReaction := "  - 'myco/deploy/*':\n    - salt://reactor/deploy.sls\n"
	writeFile(t, reactorConf, "reactor:\n"+keyReaction+deployReaction)
	t0 := time.Now().Add(-time.Second)
	m.start()
	evs := watchEvents(t, m, t0)

	_, reqPort, _ := net.SplitHostPort(m.reqAddr)
	_, pubPort, _ := net.SplitHostPort(m.pubAddr)
	ret, _ := strconv.Atoi(reqPort)
	pub, _ := strconv.Atoi(pubPort)
	var minions []*saltpeer.Minion
	for _, id := range []string{"web-s1", "web-s2", "web-s3"} {
		minions = append(minions, saltpeer.NewMinion(t, tree, saltpeer.MinionConfig{
			ID: id, MasterPort: ret, PublishPort: pub, LogLevel: os.Getenv("SALT_LOG_LEVEL"), Extra: "grains:\n  role: frontend\n",
		}).Start())
	}
	s2, s3 := minions[1], minions[2]
	agents := []*testAgent{newTestAgent(t, m, "web-b1", "127.0.0.1", "").start(), newTestAgent(t, m, "web-b2", "127.0.0.1", "").start()}
	all := []string{"web-b1", "web-b2", "web-s1", "web-s2", "web-s3"}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("master log:\n%s", m.log)
		}
		t.Logf("TestSaltMinion took %v", time.Since(start).Round(time.Millisecond))
	})

	ok := t.Run("keys accepted by the salt/auth reaction", func(t *testing.T) {
		const authKeys = "[_stamp act id pub result]"
		for _, s := range minions {
			// Salt's shape: the load's pub as the minion sent it, its
			// minion.pub (channel/server.py _auth).
			_, d := evs.wait(t, "salt/auth pend "+s.ID, tagIs("salt/auth", map[string]any{"act": "pend", "id": s.ID, "result": true}))
			key := s.PublicKey(t)
			if d["pub"] != key || keysOf(d) != authKeys {
				t.Errorf("salt/auth pend of %s = %v; want %s, pub %q", s.ID, d, authKeys, key)
			}
			_, ret := evs.wait(t, "wheel.key.accept of "+s.ID, func(ev *bus.Event, d map[string]any) bool {
				return strings.HasPrefix(ev.Tag, "salt/wheel/") && strings.HasSuffix(ev.Tag, "/ret") &&
					d["fun"] == "wheel.key.accept" && fmt.Sprint(d["fun_args"]) == "[map[match:"+s.ID+"]]"
			})
			if ret["success"] != true || fmt.Sprint(ret["return"]) != "map[minions:["+s.ID+"]]" {
				t.Errorf("the reaction's wheel.key.accept for %s returned %v", s.ID, ret)
			}
			_, d = evs.wait(t, "salt/auth accept "+s.ID, tagIs("salt/auth", map[string]any{"act": "accept", "id": s.ID, "result": true}))
			if d["pub"] != key || keysOf(d) != authKeys {
				t.Errorf("salt/auth accept of %s = %v; want %s, pub %q", s.ID, d, authKeys, key)
			}
		}
		for _, a := range agents {
			a.waitLog(logAccepted, 1)
		}
		for _, id := range all {
			evs.wait(t, "salt/minion/"+id+"/start", tagIs("salt/minion/"+id+"/start", map[string]any{"id": id}))
		}
		if l := keyList(t, m); !slices.Equal(l["minions"], all) || len(l["minions_pre"]) != 0 {
			t.Errorf("brine key -L --json = %v; want all five accepted", l)
		}
	})
	if !ok {
		return
	}

	t.Run("test.ping answered by all five", func(t *testing.T) {
		rets, errs, code := execJSON(t, m, "-t", "20", "*", "test.ping")
		if code != 0 || len(rets) != len(all) {
			t.Errorf("brine exec '*' test.ping: exit %d, %v\n%s", code, rets, errs)
		}
		for _, id := range all {
			if rets[id] != true {
				t.Errorf("%s answered test.ping with %#v", id, rets[id])
			}
		}
	})

	t.Run("cmd.run to a grain target", func(t *testing.T) {
		rets, errs, code := execJSON(t, m, "-t", "20", "-G", "kernel:Linux", "cmd.run", "echo hi from $(hostname)")
		host, _ := os.Hostname()
		if code != 0 || len(rets) != len(all) {
			t.Errorf("brine exec -G kernel:Linux cmd.run: exit %d, %v\n%s", code, rets, errs)
		}
		for _, id := range all {
			if rets[id] != "hi from "+host {
				t.Errorf("%s: cmd.run returned %#v", id, rets[id])
			}
		}
		// The grain set in the minions' configuration selects them only.
		rets, errs, code = execJSON(t, m, "-t", "20", "-G", "role:frontend", "test.ping")
		if code != 0 || !slices.Equal(slices.Sorted(maps.Keys(rets)), []string{"web-s1", "web-s2", "web-s3"}) {
			t.Errorf("brine exec -G role:frontend test.ping: exit %d, %v\n%s", code, rets, errs)
		}
	})

	t.Run("highstate from file_roots with pillar", func(t *testing.T) {
		rets, errs, code := execJSON(t, m, "-t", "60", "web-s1", "state.apply")
		res, _ := rets["web-s1"].(map[string]any)
		st, _ := res["file_|-motd_|-"+filepath.Join(marks, "motd-web-s1")+"_|-managed"].(map[string]any)
		if code != 0 || len(res) != 1 || st["result"] != true || st["__sls__"] != "motd" {
			t.Errorf("brine exec web-s1 state.apply: exit %d, %v\n%s", code, rets, errs)
		}
		b, err := os.ReadFile(filepath.Join(marks, "motd-web-s1"))
		if want := "Welcome to the salt fleet (frontend on Linux)"; err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("the highstate's file: %q, %v; want %q", b, err, want)
		}
	})

	t.Run("salt-call event.send starts the deploy reaction", func(t *testing.T) {
		out, errs, code := s2.SaltCall(t, "event.send", "myco/deploy/x", `{"version": "v7"}`)
		if code != 0 || strings.TrimSpace(out) != "local:\n    True" {
			t.Fatalf("salt-call event.send: exit %d\n%s%s", code, out, errs)
		}
		ev, d := evs.wait(t, "myco/deploy/x", tagIs("myco/deploy/x", map[string]any{"id": "web-s2"}))
		if data, _ := d["data"].(map[string]any); data["version"] != "v7" || ev.Source != "agent://web-s2" {
			t.Errorf("myco/deploy/x from %s: %v", ev.Source, d)
		}
		_, r := evs.wait(t, "the deploy's state.sls return", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret/web-s2") && d["fun"] == "state.sls"
		})
		if r["success"] != true || fmt.Sprint(r["retcode"]) != "0" {
			t.Errorf("state.sls deploy on web-s2: %v", r)
		}
		b, err := os.ReadFile(filepath.Join(marks, "deployed-web-s2"))
		if err != nil || string(b) != "version v7\n" && string(b) != "version v7" {
			t.Errorf("the deploy's file: %q, %v", b, err)
		}
		if names, _ := filepath.Glob(filepath.Join(marks, "deployed-*")); len(names) != 1 {
			t.Errorf("the deploy ran beyond its sender: %v", names)
		}
	})

	t.Run("a deleted key cuts its minion off", func(t *testing.T) {
		// The onboarding window closes: without the key reaction, a
		// deleted minion's next _auth leaves it pending.
		writeFile(t, reactorConf, "reactor:\n"+deployReaction)
		_ = m.cmd.Process.Signal(syscall.SIGHUP)
		dnsmasqtest.WaitFor(t, "the key reaction dropped", func() (bool, string) {
			out, _, _ := m.run(nil, "reactor", "list")
			return !strings.Contains(out, "salt/auth"), out
		})
		pings := func() int { return strings.Count(s3.Log(), "Executing command test.ping") }
		before := pings()
		out, errs, code := m.run(nil, "key", "-d", "web-s3", "-y")
		if code != 0 || !strings.Contains(out, "Key for minion web-s3 deleted.") {
			t.Fatalf("brine key -d web-s3 -y: exit %d\n%s%s", code, out, errs)
		}
		rets, errs, code := execJSON(t, m, "-t", "20", "*", "test.ping")
		if code != 0 || !slices.Equal(slices.Sorted(maps.Keys(rets)), []string{"web-b1", "web-b2", "web-s1", "web-s2"}) {
			t.Errorf("brine exec '*' test.ping after the delete: exit %d, %v\n%s", code, rets, errs)
		}
		_, errs, code = m.run(nil, "exec", "web-s3", "test.ping")
		if code != 2 || !strings.Contains(errs, "No minions matched the target") {
			t.Errorf("brine exec web-s3 test.ping: exit %d, %s; want 2, no minion matched", code, errs)
		}
		// The minion is told nothing but fails to read the next publish
		// (the session key was rotated) and signs in again: pending.
		dnsmasqtest.WaitFor(t, "web-s3 pending again", func() (bool, string) {
			l := keyList(t, m)
			return slices.Equal(l["minions_pre"], []string{"web-s3"}) && !slices.Contains(l["minions"], "web-s3"), fmt.Sprint(l)
		})
		if n := pings(); n != before {
			t.Errorf("web-s3 ran %d test.ping job(s) after its key was deleted", n-before)
		}
		if up := manageUp(t, m); !slices.Equal(up, []string{"web-b1", "web-b2", "web-s1", "web-s2"}) {
			t.Errorf("manage.up = %v after web-s3's key was deleted", up)
		}
		for _, s := range minions {
			if s.Exited() {
				t.Errorf("salt-minion %s exited", s.ID)
			}
		}
	})
}
