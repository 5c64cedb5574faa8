package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// masterlessTree is a formula in Salt's usual shape (map.jinja over
// defaults.yaml, pillar overriding it, a templated file, a command guarded
// by creates) with its pillar; target is where it writes.
func masterlessTree(t *testing.T, target string) (states, pillar string) {
	t.Helper()
	dir := t.TempDir()
	states, pillar = filepath.Join(dir, "states"), filepath.Join(dir, "pillar")
	for name, body := range map[string]string{
		"states/top.sls":            "base:\n  '*':\n    - app\n",
		"states/app/defaults.yaml":  "app:\n  port: 80\n  name: demo\n",
		"states/app/map.jinja":      "{% import_yaml 'app/defaults.yaml' as defaults %}\n{% set app = salt['pillar.get']('app', default=defaults.app, merge=True) %}\n",
		"states/app/files/app.conf": "# {{ grains['id'] }}\nname = {{ app.name }}\nport = {{ app.port }}\n",
		"states/app/init.sls": `{% from 'app/map.jinja' import app with context %}
app-dir:
  file.directory:
    - name: {{ app.root }}/etc
    - makedirs: True
app-conf:
  file.managed:
    - name: {{ app.root }}/etc/app.conf
    - source: salt://app/files/app.conf
    - template: jinja
    - context:
        app: {{ app | json }}
    - require:
      - file: app-dir
app-init:
  cmd.run:
    - name: touch {{ app.root }}/initialised
    - creates: {{ app.root }}/initialised
    - require:
      - file: app-conf
`,
		"pillar/top.sls":   "base:\n  '*':\n    - app\n  'ml*':\n    - match: glob\n    - extra\n",
		"pillar/app.sls":   fmt.Sprintf("app:\n  port: 8080\n  root: %s\n", target),
		"pillar/extra.sls": "extra: {{ grains['id'] }}\n",
	} {
		writeFile(t, filepath.Join(dir, name), body)
	}
	return states, pillar
}

// stateResults reads `brine call state.* --out json`: {"local": {key: result}}.
func stateResults(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	var ret struct {
		Local map[string]map[string]any `json:"local"`
	}
	if err := json.Unmarshal([]byte(out), &ret); err != nil {
		t.Fatalf("state return: %v\n%s", err, out)
	}
	return ret.Local
}

// TestMasterless runs a formula as salt-call --local does, on a machine
// with no master and no key: file_client local in the configuration, then
// --local with --file-root and --pillar-root; a second run changes nothing,
// test=True reports nothing to do, a failed state exits 1 (2 with
// --retcode-passthrough), and nothing is queued for a master.
func TestMasterless(t *testing.T) {
	target := filepath.Join(t.TempDir(), "srv", "app")
	states, pillar := masterlessTree(t, target)
	// The master named does not exist: a masterless run must not try it.
	conf := fmt.Sprintf("id: ml1\nmaster: 127.0.0.1\nmaster_port: 1\npki_dir: pki\ncachedir: cache\nfile_client: local\n"+
		"file_roots:\n  base: [%s]\npillar_roots:\n  base: [%s]\n", states, pillar)
	a := &testAgent{t: t, id: "ml1", dir: t.TempDir()}
	writeFile(t, filepath.Join(a.dir, "minion"), conf)

	out, errs, code := a.call("state.apply", "--out", "json")
	if code != 0 {
		t.Fatalf("brine call state.apply (file_client: local): exit %d\n%s%s", code, out, errs)
	}
	res := stateResults(t, out)
	if len(res) != 3 {
		t.Fatalf("%d states ran, want 3: %v", len(res), res)
	}
	for key, r := range res {
		if r["result"] != true {
			t.Errorf("%s: result %v: %v", key, r["result"], r["comment"])
		}
	}
	conf2, err := os.ReadFile(filepath.Join(target, "etc", "app.conf"))
	if err != nil || string(conf2) != "# ml1\nname = demo\nport = 8080\n" {
		t.Errorf("app.conf (defaults.yaml, the local pillar, grains): %q, %v", conf2, err)
	}
	if _, err := os.Stat(filepath.Join(target, "initialised")); err != nil {
		t.Errorf("cmd.run did not run: %v", err)
	}
	if keys, _ := filepath.Glob(filepath.Join(a.dir, "pki", "*")); len(keys) != 0 {
		t.Errorf("a masterless run made a key: %v", keys)
	}

	t.Run("again, and in test mode, nothing to do", func(t *testing.T) {
		for _, args := range [][]string{{"state.apply", "--out", "json"}, {"state.apply", "test=True", "--out", "json"}} {
			out, errs, code := a.call(args...)
			if code != 0 {
				t.Fatalf("brine call %v: exit %d\n%s%s", args, code, out, errs)
			}
			for key, r := range stateResults(t, out) {
				if r["result"] != true || len(r["changes"].(map[string]any)) != 0 {
					t.Errorf("%v: %s: result %v changes %v: %v", args, key, r["result"], r["changes"], r["comment"])
				}
			}
		}
	})

	t.Run("the pillar is compiled here", func(t *testing.T) {
		out, errs, code := a.call("pillar.items", "--json")
		if code != 0 || !strings.Contains(out, `"extra":"ml1"`) || !strings.Contains(out, `"port":8080`) {
			t.Errorf("pillar.items: exit %d\n%s%s", code, out, errs)
		}
	})

	t.Run("events are not sent", func(t *testing.T) {
		out, errs, code := a.call("event.send", "my/app/event", "--json")
		if code != 0 || strings.TrimSpace(out) != `{"local":false}` {
			t.Errorf("event.send masterless: exit %d: %s%s; want False, as Salt", code, out, errs)
		}
		if n := a.queued(); n != 0 {
			t.Errorf("%d messages queued for a master by masterless runs", n)
		}
	})

	t.Run("--local with --file-root and --pillar-root", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other")
		states2, pillar2 := masterlessTree(t, other)
		// an agent configured for a master, run masterless by the flags
		b := &testAgent{t: t, id: "ml2", dir: t.TempDir()}
		writeFile(t, filepath.Join(b.dir, "minion"), "id: ml2\nmaster: 127.0.0.1\nmaster_port: 1\npki_dir: pki\ncachedir: cache\n")
		out, errs, code := b.call("--local", "--file-root", states2, "--pillar-root", pillar2, "state.sls", "app", "--out", "json")
		if code != 0 {
			t.Fatalf("brine call --local --file-root --pillar-root state.sls app: exit %d\n%s%s", code, out, errs)
		}
		if b, err := os.ReadFile(filepath.Join(other, "etc", "app.conf")); err != nil || !strings.Contains(string(b), "# ml2\n") {
			t.Errorf("app.conf from --file-root: %q, %v", b, err)
		}
		if keys, _ := filepath.Glob(filepath.Join(b.dir, "pki", "*")); len(keys) != 0 {
			t.Errorf("--local made a key: %v", keys)
		}
		_, errs, code = b.call("--local", "--file-root", filepath.Join(states2, "nope"), "test.ping")
		if code != 2 || !strings.Contains(errs, "--file-root") {
			t.Errorf("--file-root of a missing directory: exit %d: %s", code, errs)
		}
	})

	t.Run("a failed state: exit 1, or its retcode passed through", func(t *testing.T) {
		writeFile(t, filepath.Join(states, "broken.sls"), "fails:\n  cmd.run:\n    - name: 'false'\n")
		for _, tc := range []struct {
			args []string
			code int
		}{{nil, 1}, {[]string{"--retcode-passthrough"}, 2}} {
			out, errs, code := a.call(append(tc.args, "state.sls", "broken")...)
			if code != tc.code || !strings.Contains(out, "fails") {
				t.Errorf("brine call %v state.sls broken: exit %d, want %d\n%s%s", tc.args, code, tc.code, out, errs)
			}
		}
	})
}
