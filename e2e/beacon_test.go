package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/testenv"
)

// TestBeaconRemediation is seed 000's next step: an agent's beacons see a
// managed file changed by hand and a service stopped, and reactions put
// both right (a state re-applied, the service started), visible in the
// job store and the Slack audit.
func TestBeaconRemediation(t *testing.T) {
	testenv.NeedRoot(t, "TestBeaconRemediation installs a SysV service: run the tests as root (CI does)")
	svc := fmt.Sprintf("brine-beacon-svc-%06x", rand.Uint32()>>8)
	pidfile := filepath.Join(t.TempDir(), svc+".pid")
	script := filepath.Join("/etc/init.d", svc)
	if err := os.WriteFile(script, fmt.Appendf(nil, stateInitScript, svc, pidfile, rand.IntN(1e6)), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command(script, "stop").Run()
		_ = os.Remove(script)
	})
	if out, err := exec.Command(script, "start").CombinedOutput(); err != nil {
		t.Fatalf("starting %s: %v %s", svc, err, out)
	}
	pid := func() string { b, _ := os.ReadFile(pidfile); return strings.TrimSpace(string(b)) }
	watched := filepath.Join(t.TempDir(), "motd")
	const managed = "managed by brine\n"
	if err := os.WriteFile(watched, []byte(managed), 0o644); err != nil {
		t.Fatal(err)
	}

	rec, apiURL := newSlackRecorder(t)
	m := newTestMaster(t)
	srv := t.TempDir()
	writeFile(t, filepath.Join(srv, "motd.sls"), fmt.Sprintf("%s:\n  file.managed:\n    - contents: %q\n", watched, strings.TrimSuffix(managed, "\n")))
	writeFile(t, filepath.Join(srv, "reactor", "restore.sls"), `restore_{{ data['id'] }}:
  local.state.apply:
    - tgt: {{ data['id'] }}
    - arg:
      - motd
    - kwarg:
        queue: True
`)
	writeFile(t, filepath.Join(srv, "reactor", "service.sls"), `{% if not data[data['service_name']]['running'] %}
start_{{ data['service_name'] }}:
  local.service.start:
    - tgt: {{ data['id'] }}
    - arg:
      - {{ data['service_name'] }}
{% endif %}
`)
	writeFile(t, filepath.Join(m.confDir, "master.d", "beacons.conf"), fmt.Sprintf(`auto_accept: true
file_roots:
  base: [%s]
slack:
  token: xoxb-test-token
  api_url: %s
  channel: '#audit'
  rate: 0
reactor:
  - 'salt/beacon/*/inotify/*':
    - salt://reactor/restore.sls
  - 'salt/beacon/*/service/*':
    - salt://reactor/service.sls
`, srv, apiURL))
	t0 := time.Now().Add(-time.Second)
	m.start()
	evs := watchEvents(t, m, t0)
	web01 := newTestAgent(t, m, "web01", "127.0.0.1", fmt.Sprintf(`beacons:
  inotify:
    - files:
        %s:
          mask:
            - modify
            - close_write
    - disable_during_state_run: True
  service:
    - services:
        %s:
          onchangeonly: True
    - interval: 0.5
`, watched, svc)).start()
	web01.waitLog(logAccepted, 1)
	time.Sleep(time.Second) // the beacons' first checks

	t.Run("a managed file changed by hand is restored", func(t *testing.T) {
		if err := os.WriteFile(watched, []byte("changed by hand\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			if b, _ := os.ReadFile(watched); string(b) == managed {
				break
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(watched)
				t.Fatalf("the file was not restored: %q\n%s", b, evs.tags())
			}
			time.Sleep(100 * time.Millisecond)
		}
		evs.wait(t, "the inotify beacon's event", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasPrefix(ev.Tag, "salt/beacon/web01/inotify/") && d["path"] == watched
		})
	})

	t.Run("a stopped service is started again", func(t *testing.T) {
		before := pid()
		if out, err := exec.Command(script, "stop").CombinedOutput(); err != nil {
			t.Fatalf("stopping: %v %s", err, out)
		}
		deadline := time.Now().Add(30 * time.Second)
		for pid() == "" || pid() == before {
			if time.Now().After(deadline) {
				t.Fatalf("the service was not started again\n%s", evs.tags())
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("both are in the job store and the Slack audit", func(t *testing.T) {
		out, _, code := m.run(nil, "jobs", "list", "--json")
		if code != 0 || !strings.Contains(out, `"state.apply"`) || !strings.Contains(out, `"service.start"`) {
			t.Errorf("jobs list: exit %d\n%s", code, out)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			msgs := rec.wait(t, 1)
			all := fmt.Sprint(msgs)
			if strings.Contains(all, "state.apply") && strings.Contains(all, "service.start") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Slack: %v", msgs)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("beacons.* manage them live and save them", func(t *testing.T) {
		rets, errs, code := execJSON(t, m, "web01", "beacons.add", "myload", "[{beacon_module: load}, {averages: {1m: [0, 1000]}}]")
		if code != 0 || fmt.Sprint(rets["web01"]) != "map[comment:Added beacon: myload. result:true]" {
			t.Fatalf("beacons.add: exit %d %v %s", code, rets, errs)
		}
		rets, _, _ = execJSON(t, m, "web01", "beacons.list", "return_yaml=False")
		if l, _ := rets["web01"].(map[string]any); l["myload"] == nil || l["inotify"] == nil {
			t.Errorf("beacons.list: %v", rets)
		}
		rets, _, _ = execJSON(t, m, "web01", "beacons.add", "bad", "[{beacon_module: load}, {averages: {2m: [0, 1]}}]")
		if !strings.Contains(fmt.Sprint(rets["web01"]), "Beacon bad configuration invalid") {
			t.Errorf("a bad beacon: %v", rets)
		}
		rets, _, _ = execJSON(t, m, "web01", "beacons.save")
		saved := filepath.Join(web01.dir, "minion.d", "beacons.conf")
		if b, err := os.ReadFile(saved); err != nil || !strings.Contains(string(b), "myload") {
			t.Errorf("beacons.save: %v; %s: %q %v", rets, saved, b, err)
		}
		evs.wait(t, "beacons.save's completion event", tagIs("salt/minion/web01/beacons_save_complete", nil))
		rets, _, _ = execJSON(t, m, "web01", "beacons.delete", "myload")
		if fmt.Sprint(rets["web01"]) != "map[comment:Deleted beacon: myload. result:true]" {
			t.Errorf("beacons.delete: %v", rets)
		}
		rets, _, _ = execJSON(t, m, "web01", "beacons.reset")
		if fmt.Sprint(rets["web01"]) != "map[comment:Beacon configuration reset. result:true]" {
			t.Errorf("beacons.reset: %v", rets)
		}
		rets, _, _ = execJSON(t, m, "web01", "beacons.list", "return_yaml=False")
		if l, _ := rets["web01"].(map[string]any); l["myload"] == nil {
			t.Errorf("after reset, the saved beacon is not back: %v", rets)
		}
	})

	t.Run("a misconfigured beacon stops the agent at start", func(t *testing.T) {
		bad := newTestAgent(t, m, "bad01", "127.0.0.1", "beacons:\n  inotify:\n    - files:\n        /tmp:\n          mask: [modfy]\n  nosuch:\n    - interval: 5\n")
		out, err := bad.command("agent", "-c", bad.dir).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "minion:") || !strings.Contains(string(out), "no beacon module \"nosuch\"") ||
			!strings.Contains(string(out), "modfy") {
			t.Errorf("brine agent with bad beacons: %v\n%s", err, out)
		}
	})
}
