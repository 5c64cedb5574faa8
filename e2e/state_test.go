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
	"github.com/brinehq/brine/internal/testlock"
)

// stateInitScript is a SysV service for the formula's service.running: a
// detached sleep with a pid file.
const stateInitScript = `#!/bin/sh
### BEGIN INIT INFO
# Provides:          %[1]s
# Required-Start:
# Required-Stop:
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: brine's state test service
### END INIT INFO
PIDFILE=%[2]s
running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }
case "$1" in
start) running && exit 0; setsid sleep 3598.%[3]d </dev/null >/dev/null 2>&1 & echo $! >"$PIDFILE" ;;
stop) if running; then kill "$(cat "$PIDFILE")"; sleep 0.2; fi; rm -f "$PIDFILE" ;;
restart|force-reload) "$0" stop && "$0" start ;;
reload) running || exit 7 ;;
status) running && exit 0; exit 3 ;;
esac
`

// seed003 is seed 003's formula, as its author wrote it but for names on
// this machine: a map imported with context, an include, the version
// from pillar, git.latest watched by the service, and onfail
// notifications (one whose requisite does not fail, one whose does).
var seed003 = map[string]string{
	"apache/map.sls": `{% set apache = salt['grains.filter_by']({
    'Debian': {'pkg': 'hello', 'service': '@SVC@'},
    'RedHat': {'pkg': 'hello', 'service': '@SVC@'},
}, default='Debian') %}
`,
	"apache/init.sls": `{% from "apache/map.sls" import apache with context %}
install_apache:
  pkg.installed:
    - name: {{ apache.pkg }}

enable_apache:
  service.running:
    - name: {{ apache.service }}
    - enable: True
    - require:
      - pkg: install_apache
`,
	"apptest.sls": `{% from "apache/map.sls" import apache with context %}
{% set version = salt.pillar.get('version', 'master') %}
include:
  - apache

deploy_app:
  git.latest:
    - name: @REPO@
    - target: @CHECKOUT@
    - rev: {{ version }}
    - force_reset: True
    - watch_in:
      - service: enable_apache

notify_of_fail:
  event.send:
    - name: apptest/failed
    - onfail:
      - git: deploy_app

check_release:
  cmd.run:
    - name: test -f @CHECKOUT@/release-{{ version }}
    - require:
      - git: deploy_app

report_bad_release:
  event.send:
    - name: apptest/bad_release
    - data:
        version: {{ version }}
    - onfail:
      - cmd: check_release
`,
	"top.sls": `base:
  '*':
    - common
  'os_family:Debian':
    - match: grain
    - debian
`,
	"common.sls": `/tmp/brine-state-common-{{ grains['id'] }}:
  file.managed:
    - contents: "managed for {{ grains['id'] }}, db {{ pillar.get('db_host', 'none') }}"
`,
	"debian.sls": `debian_marker:
  test.succeed_without_changes:
    - name: debian for {{ grains['id'] }}
`,
	"broken/yaml.sls":    "a:\n  test.nop:\n    - name: x\n   bad: indentation\n",
	"broken/jinja.sls":   "a:\n  test.nop:\n    - name: {{ nosuch.attr( }}\n",
	"broken/missing.sls": "a:\n  test.nop:\n    - require:\n      - pkg: nonexistent\n",
	"broken/cycle.sls":   "a:\n  test.nop:\n    - require:\n      - test: b\nb:\n  test.nop:\n    - require:\n      - test: a\n",
	"broken/include.sls": "include:\n  - nosuchformula\n",
	"broken/gpg.sls":     "#!yaml|gpg\na:\n  test.nop\n",
	"broken/unknown.sls": "a:\n  pkg.nosuchfunction:\n    - name: x\n",
}

var deployReaction = `deploy_app:
  cmd.state.sls:
    - tgt: {{ data['id'] }}
    - kwarg:
        mods: apptest
        pillar:
          version: {{ data['data']['version'] }}
`

// TestStates applies seed 003's formula on a real agent: a real package,
// a real service restarted by its watch, a git checkout at the version an
// event carries, through seed 003's reaction; test mode; the highstate
// from top.sls; pillar compiled per agent; the errors a formula can have.
func TestStates(t *testing.T) {
	// Other packages' tests install packages too: one at a time, or each
	// sees the other's installs in its package lists.
	testlock.Hold(t, "apt")
	testenv.NeedRoot(t, "TestStates installs a package and a SysV service: run the tests as root (CI does)")
	for _, tool := range []string{"git", "apt-get", "dpkg-query", "update-rc.d", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (make test installs it): %v", tool, err)
		}
	}
	// The package must be absent for the first run to install it.
	_ = exec.Command("dpkg", "--purge", "hello").Run()
	t.Cleanup(func() { _ = exec.Command("dpkg", "--purge", "hello").Run() })

	svc := fmt.Sprintf("brine-state-svc-%06x", rand.Uint32()>>8)
	pidfile := filepath.Join(t.TempDir(), svc+".pid")
	script := filepath.Join("/etc/init.d", svc)
	if err := os.WriteFile(script, fmt.Appendf(nil, stateInitScript, svc, pidfile, rand.IntN(1e6)), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command(script, "stop").Run()
		_ = exec.Command("update-rc.d", "-f", svc, "remove").Run()
		_ = os.Remove(script)
	})
	pid := func() string { b, _ := os.ReadFile(pidfile); return strings.TrimSpace(string(b)) }

	repo, checkout := gitRepo(t), filepath.Join(t.TempDir(), "app")

	m := newTestMaster(t)
	srv := t.TempDir()
	for name, body := range seed003 {
		writeFile(t, filepath.Join(srv, "salt", name), strings.NewReplacer("@SVC@", svc, "@REPO@", repo, "@CHECKOUT@", checkout).Replace(body))
	}
	writeFile(t, filepath.Join(srv, "salt", "reactor", "deploy.sls"), deployReaction)
	writeFile(t, filepath.Join(srv, "pillar", "top.sls"), "base:\n  '*':\n    - common\n  web01:\n    - web01_secrets\n")
	writeFile(t, filepath.Join(srv, "pillar", "common.sls"), "db_host: db.example.com\nversion: master\n")
	writeFile(t, filepath.Join(srv, "pillar", "web01_secrets.sls"), "db_password: hunter2-only-web01\n")
	writeFile(t, filepath.Join(m.confDir, "master.d", "states.conf"), fmt.Sprintf(`auto_accept: true
file_roots:
  base: [%s]
pillar_roots:
  base: [%s]
reactor:
  - 'myco/deploy':
    - salt://reactor/deploy.sls
`, filepath.Join(srv, "salt"), filepath.Join(srv, "pillar")))
	t0 := time.Now().Add(-time.Second)
	m.start()
	evs := watchEvents(t, m, t0)
	web01 := newTestAgent(t, m, "web01", "127.0.0.1", "").start()
	web02 := newTestAgent(t, m, "web02", "127.0.0.1", "").start()
	web01.waitLog(logAccepted, 1)
	web02.waitLog(logAccepted, 1)

	state := func(t *testing.T, args ...string) (map[string]any, int) {
		t.Helper()
		rets, errs, code := execJSON(t, m, append([]string{"-t", "120"}, args...)...)
		ret, ok := rets[args[0]].(map[string]any)
		if !ok {
			t.Fatalf("brine exec %v: exit %d, return %#v\n%s", args, code, rets[args[0]], errs)
		}
		return ret, code
	}
	result := func(t *testing.T, ret map[string]any, key string) map[string]any {
		t.Helper()
		r, ok := ret[key].(map[string]any)
		if !ok {
			t.Fatalf("no state %s in the return; it has %s", key, keysOf(ret))
		}
		return r
	}
	gitKey := "git_|-deploy_app_|-" + repo + "_|-latest"

	t.Run("test mode changes nothing", func(t *testing.T) {
		ret, code := state(t, "web01", "state.apply", "apptest", "test=True", "pillar={version: v1}")
		if code != 0 {
			t.Errorf("exit %d", code)
		}
		for _, key := range []string{"pkg_|-install_apache_|-hello_|-installed", gitKey} {
			r := result(t, ret, key)
			if r["result"] != nil || len(r["changes"].(map[string]any)) == 0 {
				t.Errorf("%s in test mode: result %v changes %v, want None and the pending changes", key, r["result"], r["changes"])
			}
		}
		if _, err := os.Stat(checkout); err == nil {
			t.Error("test mode cloned the repository")
		}
		if out, _ := exec.Command("dpkg-query", "-W", "-f=${Status}", "hello").Output(); strings.Contains(string(out), "ok installed") {
			t.Error("test mode installed the package")
		}
		if pid() != "" {
			t.Error("test mode started the service")
		}
	})

	var firstPid string
	t.Run("seed 003 reaction deploys v1", func(t *testing.T) {
		if _, errs, code := web01.call("event.send", "myco/deploy", "version=v1"); code != 0 {
			t.Fatalf("event.send: exit %d %s", code, errs)
		}
		_, d := evs.wait(t, "the deploy's state.sls return", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret/web01") && d["fun"] == "state.sls"
		})
		ret, ok := d["return"].(map[string]any)
		if !ok {
			t.Fatalf("state.sls returned %#v", d["return"])
		}
		if d["out"] != "highstate" || fmt.Sprint(d["retcode"]) != "2" {
			t.Errorf("out %v retcode %v, want highstate and 2 (check_release fails: no release-v1 file)", d["out"], d["retcode"])
		}
		want := map[string]struct {
			result any
			ran    bool
		}{
			"pkg_|-install_apache_|-hello_|-installed":        {true, true},
			"service_|-enable_apache_|-" + svc + "_|-running": {true, true},
			gitKey: {true, true},
			"event_|-notify_of_fail_|-apptest/failed_|-send":                  {true, false},
			"cmd_|-check_release_|-test -f " + checkout + "/release-v1_|-run": {false, true},
			"event_|-report_bad_release_|-apptest/bad_release_|-send":         {true, true},
		}
		if len(ret) != len(want) {
			t.Errorf("states %s, want %d", keysOf(ret), len(want))
		}
		for key, w := range want {
			r := result(t, ret, key)
			for _, f := range []string{"__id__", "__run_num__", "__sls__", "changes", "comment", "duration", "name", "result", "start_time"} {
				if _, ok := r[f]; !ok {
					t.Errorf("%s: no %s (Salt's shape): %v", key, f, r)
				}
			}
			if r["result"] != w.result {
				t.Errorf("%s: result %v, want %v: %v", key, r["result"], w.result, r["comment"])
			}
			if ran, has := r["__state_ran__"]; has == w.ran || (has && ran != false) {
				t.Errorf("%s: __state_ran__ %v, ran %v", key, ran, w.ran)
			}
		}
		if c := result(t, ret, "event_|-notify_of_fail_|-apptest/failed_|-send")["comment"]; c != "State was not run because onfail req did not change" {
			t.Errorf("onfail comment %q", c)
		}
		if s := result(t, ret, gitKey)["__sls__"]; s != "apptest" {
			t.Errorf("git __sls__ %v", s)
		}
		if s := result(t, ret, "pkg_|-install_apache_|-hello_|-installed")["__sls__"]; s != "apache" {
			t.Errorf("pkg __sls__ %v", s)
		}
		if st, _ := time.Parse("15:04:05.000000", fmt.Sprint(result(t, ret, gitKey)["start_time"])); st.IsZero() {
			t.Errorf("start_time %v is not Salt's HH:MM:SS.ffffff", result(t, ret, gitKey)["start_time"])
		}
		if b, err := os.ReadFile(filepath.Join(checkout, "VERSION")); err != nil || strings.TrimSpace(string(b)) != "v1" {
			t.Errorf("checkout VERSION %q, %v; want v1", b, err)
		}
		if firstPid = pid(); firstPid == "" {
			t.Error("the service is not running")
		}
		evs.wait(t, "apptest/bad_release from the onfail that ran", tagIs("apptest/bad_release", nil))
		if bad, _ := evs.all(tagIs("apptest/failed", nil)); len(bad) > 0 {
			t.Error("the onfail notification whose requisite succeeded fired")
		}
	})

	t.Run("v2 through the reaction restarts the watching service", func(t *testing.T) {
		if _, errs, code := web01.call("event.send", "myco/deploy", "version=v2"); code != 0 {
			t.Fatalf("event.send: exit %d %s", code, errs)
		}
		_, d := evs.wait(t, "the v2 deploy's return", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret/web01") && d["fun"] == "state.sls" && strings.Contains(fmt.Sprint(d["fun_args"]), "version:v2")
		})
		ret, ok := d["return"].(map[string]any)
		if !ok {
			t.Fatalf("state.sls returned %#v", d["return"])
		}
		if fmt.Sprint(d["retcode"]) != "0" {
			t.Errorf("retcode %v: v2 has its release file", d["retcode"])
		}
		svcRes := result(t, ret, "service_|-enable_apache_|-"+svc+"_|-running")
		if svcRes["changes"].(map[string]any)[svc] != true {
			t.Errorf("the service was not restarted by its watch: %v", svcRes)
		}
		if p := pid(); p == "" || p == firstPid {
			t.Errorf("service pid %q after the watch, %q before", p, firstPid)
		}
		if r := result(t, ret, "event_|-report_bad_release_|-apptest/bad_release_|-send"); r["__state_ran__"] != false {
			t.Errorf("the onfail ran though check_release succeeded: %v", r)
		}
	})

	t.Run("second run changes nothing", func(t *testing.T) {
		ret, code := state(t, "web01", "state.sls", "apptest", "pillar={version: v2}")
		if code != 0 {
			t.Errorf("exit %d", code)
		}
		for key, v := range ret {
			r := v.(map[string]any)
			if len(r["changes"].(map[string]any)) != 0 && !strings.HasPrefix(key, "cmd_") {
				t.Errorf("%s changed on the second run: %v", key, r["changes"])
			}
		}
	})

	t.Run("highstate from top.sls with pillar", func(t *testing.T) {
		for _, id := range []string{"web01", "web02"} {
			ret, code := state(t, id, "state.highstate")
			if code != 0 {
				t.Errorf("%s: exit %d: %v", id, code, ret)
			}
			result(t, ret, "test_|-debian_marker_|-debian for "+id+"_|-succeed_without_changes")
			b, err := os.ReadFile("/tmp/brine-state-common-" + id)
			if err != nil || string(b) != "managed for "+id+", db db.example.com\n" {
				t.Errorf("%s: managed file %q, %v", id, b, err)
			}
			os.Remove("/tmp/brine-state-common-" + id)
		}
		rets, _, _ := execJSON(t, m, "web01", "state.show_top")
		if fmt.Sprint(rets["web01"]) != "map[base:[common debian]]" {
			t.Errorf("show_top %v", rets["web01"])
		}
	})

	t.Run("pillar is each agent's own", func(t *testing.T) {
		rets, _, _ := execJSON(t, m, "web*", "pillar.items")
		p1, _ := rets["web01"].(map[string]any)
		p2, _ := rets["web02"].(map[string]any)
		// web01 has the secret, which its return masks by key name.
		if p1["db_password"] != "***" || p1["db_host"] != "db.example.com" {
			t.Errorf("web01's pillar %v", p1)
		}
		if _, leaked := p2["db_password"]; leaked || p2["db_host"] != "db.example.com" {
			t.Errorf("web02's pillar %v: it must not hold web01's secret", p2)
		}
		rets, _, _ = execJSON(t, m, "web02", "pillar.get", "db_password", "default=absent")
		if rets["web02"] != "absent" {
			t.Errorf("web02 pillar.get db_password = %v", rets["web02"])
		}
		// Pillar targets match the pillar each agent was last compiled.
		rets, _, code := execJSON(t, m, "-I", "db_password:*", "test.ping")
		if code != 0 || keysOf(rets) != "[web01]" {
			t.Errorf("-I db_password:* selected %s (exit %d)", keysOf(rets), code)
		}
		rets, _, _ = execJSON(t, m, "-C", "I@db_host:db.example.com and web*", "test.ping")
		if keysOf(rets) != "[web01 web02]" {
			t.Errorf("I@db_host:db.example.com selected %s", keysOf(rets))
		}
		// A pillar= override's secret is masked in the job's events too.
		if _, _, code := execJSON(t, m, "web02", "state.sls", "apache", "test=True", "pillar={api_token: tok-9f8e7d-secret}"); code != 0 {
			t.Errorf("state.sls apache test=True: exit %d", code)
		}
		evs.sync(t)
		for _, secret := range []string{"hunter2-only-web01", "tok-9f8e7d-secret"} {
			if strings.Contains(evs.tags(), secret) {
				t.Errorf("the secret %s is in an event", secret)
			}
			if strings.Contains(web01.log.String(), secret) || strings.Contains(web02.log.String(), secret) {
				t.Errorf("the secret %s is in a log", secret)
			}
		}
	})

	t.Run("state functions", func(t *testing.T) {
		ret, code := state(t, "web02", "state.single", "test.succeed_with_changes", "name=one-off")
		if r := result(t, ret, "test_|-one-off_|-one-off_|-succeed_with_changes"); code != 0 || r["result"] != true {
			t.Errorf("state.single: exit %d %v", code, r)
		}
		ret, code = state(t, "web02", "state.sls_id", "check_release", "apptest", "pillar={version: v2}")
		if len(ret) != 1 || code != 0 {
			t.Errorf("state.sls_id ran %s (exit %d), want check_release alone", keysOf(ret), code)
		}
		rets, _, _ := execJSON(t, m, "web02", "state.show_sls", "apptest")
		show, _ := rets["web02"].(map[string]any)
		if d, _ := show["deploy_app"].(map[string]any); d["__sls__"] != "apptest" || fmt.Sprint(d["git"]) == "" {
			t.Errorf("show_sls deploy_app = %v", show["deploy_app"])
		}
		rets, _, _ = execJSON(t, m, "web02", "state.show_lowstate")
		if low, _ := rets["web02"].([]any); len(low) != 2 {
			t.Errorf("show_lowstate: %v", rets["web02"])
		}
		// state_events: each state's result is an event while the run
		// goes on, fired by the master under the job's tag.
		rets, _, _ = execJSON(t, m, "web02", "state.sls", "debian", "state_events=True")
		if _, ok := rets["web02"].(map[string]any); !ok {
			t.Fatalf("state.sls debian: %v", rets["web02"])
		}
		evs.wait(t, "a state progress event", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasPrefix(ev.Tag, "salt/job/") && strings.HasSuffix(ev.Tag, "/prog/web02/0") && d["id"] == "web02"
		})
		// salt-call state.apply on the agent's machine, as seed 003 runs it.
		out, errs, code := web02.call("state.apply", "debian", "--state-output", "terse")
		if code != 0 || !strings.Contains(out, "Name: debian for web02 - Function: test.succeed_without_changes - Result: Clean") {
			t.Errorf("brine call state.apply debian: exit %d\n%s%s", code, out, errs)
		}
		// The terse outputter, as an operator prints a highstate.
		out, _, code = m.run(nil, "exec", "web02", "state.apply", "debian", "--state-output", "terse")
		if code != 0 || !strings.Contains(out, "Name: debian for web02 - Function: test.succeed_without_changes - Result: Clean") ||
			!strings.Contains(out, "Summary for web02") {
			t.Errorf("terse output (exit %d):\n%s", code, out)
		}
	})

	t.Run("startup_states", func(t *testing.T) {
		web03 := newTestAgent(t, m, "web03", "127.0.0.1", "startup_states: sls\nsls_list: [debian]\n").start()
		web03.waitLog(logAccepted, 1)
		_, d := evs.wait(t, "web03's startup state return", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret/web03") && d["fun"] == "state.sls"
		})
		ret, _ := d["return"].(map[string]any)
		if _, ok := ret["test_|-debian_marker_|-debian for web03_|-succeed_without_changes"]; !ok || d["success"] != true {
			t.Errorf("startup_states return %v", d)
		}
	})

	t.Run("errors name the file and line", func(t *testing.T) {
		for _, tc := range []struct {
			sls, want string
			code      int
		}{
			{"broken.yaml", "broken/yaml.sls:4", 1},
			{"broken.jinja", "broken/jinja.sls:3", 1},
			{"broken.include", "Specified SLS nosuchformula in saltenv base is not available", 1},
			{"broken.gpg", "the gpg renderer is not available", 1},
			{"nosuch", "No matching sls found for 'nosuch' in env 'base'", 1},
			{"broken.missing", "The following requisites were not found", 2},
			// Two states requiring each other: Salt's verify_high refuses
			// them before the run (checked against Salt 3006.6).
			{"broken.cycle", `A recursive requisite was found, SLS "broken.cycle" ID "b" ID "a"`, 1},
			{"broken.unknown", "'pkg.nosuchfunction' is not available", 2},
		} {
			rets, errs, code := execJSON(t, m, "web02", "state.sls", tc.sls)
			if code == 0 || !strings.Contains(fmt.Sprint(rets["web02"]), tc.want) {
				t.Errorf("state.sls %s: exit %d, return %v, want %q\n%s", tc.sls, code, rets["web02"], tc.want, errs)
			}
		}
	})
}

// gitRepo makes a bare repository with tags v1 and v2, each commit
// holding VERSION, and v2 also release-v2.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	work, bare := filepath.Join(dir, "work"), filepath.Join(dir, "app.git")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=brine", "GIT_AUTHOR_EMAIL=brine@example.com",
			"GIT_COMMITTER_NAME=brine", "GIT_COMMITTER_EMAIL=brine@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	writeFile(t, filepath.Join(work, "VERSION"), "v1\n")
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "v1")
	git("tag", "v1")
	writeFile(t, filepath.Join(work, "VERSION"), "v2\n")
	writeFile(t, filepath.Join(work, "release-v2"), "")
	git("add", ".")
	git("commit", "-q", "-m", "v2")
	git("tag", "v2")
	git("clone", "-q", "--bare", work, bare)
	return bare
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
