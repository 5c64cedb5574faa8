package master

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The runners that read what the master keeps of its agents, against a
// master with one agent (the test's, through the agent protocol): cache.grains, cache.pillar,
// pillar.show_pillar, the master's pillar.get, manage.versions,
// jobs.last_run and doc.*.
func TestOperatorRunners(t *testing.T) {
	roots := t.TempDir()
	for name, body := range map[string]string{
		"top.sls":    "base:\n  '*':\n    - common\n  'web*':\n    - web\n",
		"common.sls": "common:\n  dns: 192.0.2.53\n",
		"web.sls":    "web:\n  roles: {{ grains.get('roles', []) | json }}\n  fqdn: {{ grains.get('fqdn', 'none') }}\n",
	} {
		if err := os.WriteFile(filepath.Join(roots, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := t.TempDir()
	sls := "report:\n  test.nop:\n    - name: {{ salt['pillar.get']('common:dns') }} {{ salt['pillar.get']('release', 'none') }}\n"
	if err := os.WriteFile(filepath.Join(files, "report.sls"), []byte(sls), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"web/empty", "web/conf"} {
		if err := os.MkdirAll(filepath.Join(files, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(files, "web", "conf", "nginx.conf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, mt := startWith(t, testConfig(t, fmt.Sprintf("auto_accept: true\npillar_roots:\n  base: [%s]\nfile_roots:\n  base: [%s]\n", roots, files)))
	stop := runMemAgent(t, mt, "web01", map[string]any{"id": "web01", "roles": []any{"web"}, "fqdn": "web01.example.com"},
		map[string]any{"network.ip_addrs": []any{"192.0.2.10"}},
		map[string]any{"test.version": "test", "sys.doc": map[string]any{"test.ping": "Returns True.", "pkg.upgrade": "Upgrades."}})
	ctx := context.Background()
	call := func(fun string, args []any, kwargs map[string]any) any {
		t.Helper()
		got, err := m.funcs.Call(ctx, fun, args, kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return got
	}
	// The agent reported its grains (mine) and asked for its pillar once
	// connected.
	deadline := time.Now().Add(15 * time.Second)
	for len(call("cache.grains", []any{"*"}, nil).(map[string]any)) == 0 || len(call("cache.pillar", nil, nil).(map[string]any)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("web01's grains and pillar never reached the master")
		}
		time.Sleep(50 * time.Millisecond)
	}

	grains := call("cache.grains", []any{"web*"}, nil).(map[string]any)
	g, _ := grains["web01"].(map[string]any)
	if len(grains) != 1 || fmt.Sprint(g["roles"]) != "[web]" || g["id"] != "web01" {
		t.Errorf("cache.grains web* = %v", grains)
	}
	if got := call("cache.grains", []any{"db*"}, nil); !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("cache.grains db* = %v, want {}", got)
	}
	if got := call("cache.grains", []any{"roles:web"}, map[string]any{"tgt_type": "grain"}).(map[string]any); len(got) != 1 {
		t.Errorf("cache.grains -G roles:web = %v", got)
	}
	if got := call("cache.mine", nil, nil).(map[string]any); got["web01"] == nil || got["web01"].(map[string]any)["network.ip_addrs"] == nil {
		t.Errorf("cache.mine = %v, want web01's network.ip_addrs", got)
	}
	cached := call("cache.pillar", []any{"web01"}, nil).(map[string]any)
	if p, _ := cached["web01"].(map[string]any); fmt.Sprint(p["common"]) != "map[dns:192.0.2.53]" {
		t.Errorf("cache.pillar web01 = %v", cached)
	}

	// show_pillar compiles with the grains last reported; keywords set
	// grains; '*' (no such agent) gets {fqdn: '*'}.
	p := call("pillar.show_pillar", []any{"web01"}, nil).(map[string]any)
	if fmt.Sprint(p["web"]) != fmt.Sprintf("map[fqdn:%v roles:[web]]", g["fqdn"]) || p["common"] == nil {
		t.Errorf("pillar.show_pillar web01 = %v", p)
	}
	p = call("pillar.show_pillar", []any{"web01"}, map[string]any{"roles": []any{"db"}}).(map[string]any)
	if fmt.Sprint(p["web"].(map[string]any)["roles"]) != "[db]" {
		t.Errorf("pillar.show_pillar web01 roles=[db] = %v", p)
	}
	if p := call("pillar.show_pillar", nil, nil).(map[string]any); fmt.Sprint(p) != "map[common:map[dns:192.0.2.53]]" {
		t.Errorf("pillar.show_pillar = %v", p)
	}
	// ... and is not kept as the agent's (pillar targets match that one).
	if p := call("cache.pillar", []any{"web01"}, nil).(map[string]any)["web01"].(map[string]any); fmt.Sprint(p["web"].(map[string]any)["roles"]) != "[web]" {
		t.Errorf("show_pillar replaced web01's pillar: %v", p)
	}
	// The master's own pillar (t1_master).
	if got := call("pillar.get", []any{"common:dns"}, nil); got != "192.0.2.53" {
		t.Errorf("pillar.get common:dns = %v", got)
	}
	if got := call("pillar.items", nil, nil).(map[string]any); got["web"] != nil {
		t.Errorf("the master's pillar has web's: %v", got)
	}
	// An orchestration's templates read it with salt['pillar.get'], its
	// pillar= included.
	high := call("state.orch_show_sls", []any{"report"}, map[string]any{"pillar": map[string]any{"release": "r42"}})
	if got := fmt.Sprint(high); !strings.Contains(got, "192.0.2.53 r42") {
		t.Errorf("orch_show_sls with salt['pillar.get'] = %s", got)
	}

	// fileserver.* over file_roots.
	for fun, want := range map[string]any{
		"fileserver.envs":           []any{"base"},
		"fileserver.file_list":      []any{"report.sls", "web/conf/nginx.conf"},
		"fileserver.dir_list":       []any{"web", "web/conf", "web/empty"},
		"fileserver.empty_dir_list": []any{"web/empty"},
	} {
		if got := call(fun, nil, nil); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", fun, got, want)
		}
	}
	// Salt's other names of the presence lists.
	for fun, want := range map[string]any{"manage.joined": []any{"web01"}, "manage.alived": []any{"web01"}, "manage.list_not_state": []any{},
		"manage.list_state": []any{"web01"}} {
		if got := call(fun, nil, nil); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", fun, got, want)
		}
	}
	if got := call("manage.list_state", nil, map[string]any{"subset": []any{"db01"}}); !reflect.DeepEqual(got, []any{}) {
		t.Errorf("manage.list_state subset=[db01] = %v", got)
	}

	// manage.versions runs test.version; the agent and the master are
	// both "test".
	want := map[string]any{"Master": "test", "Up to date": map[string]any{"web01": "test"}}
	if got := call("manage.versions", nil, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("manage.versions = %v, want %v", got, want)
	}
	// The job store records the job from the bus, moments after it ends.
	deadline = time.Now().Add(10 * time.Second)
	for call("jobs.last_run", nil, map[string]any{"function": "test.version"}) == false && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	last, _ := call("jobs.last_run", nil, map[string]any{"function": "test.version"}).(map[string]any)
	for _, j := range last {
		if j.(map[string]any)["Function"] != "test.version" {
			t.Errorf("jobs.last_run function=test.version = %v", last)
		}
	}
	if len(last) != 1 {
		t.Errorf("jobs.last_run = %v", last)
	}
	if got := call("jobs.last_run", nil, map[string]any{"function": "nothing.ran"}); got != false {
		t.Errorf("jobs.last_run of a function never run = %v, want False", got)
	}

	// doc.*: the master's functions, wheel apart; the agents' sys.doc.
	if d := call("doc.runner", nil, nil).(map[string]any); d["manage.versions"] == nil || d["key.accept"] != nil {
		t.Errorf("doc.runner: manage.versions %v, key.accept %v", d["manage.versions"], d["key.accept"])
	}
	if d := call("doc.wheel", nil, nil).(map[string]any); d["key.accept"] == nil || d["manage.versions"] != nil {
		t.Errorf("doc.wheel = %v", d)
	}
	if d := call("doc.execution", nil, nil).(map[string]any); d["test.ping"] == nil || d["pkg.upgrade"] == nil {
		t.Errorf("doc.execution has %d functions, test.ping %v", len(d), d["test.ping"])
	}

	stop()
	want = map[string]any{"Master": "test", "Minion offline": map[string]any{"web01": false}}
	if got := call("manage.versions", nil, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("manage.versions with web01 stopped = %v, want %v", got, want)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		agent, master string
		want          int
	}{
		{"1.4.2", "1.4.2", 0}, {"v1.4.2", "1.4.2", 0}, {"1.4.1", "1.4.2", -1}, {"1.10.0", "1.9.3", 1},
		{"1.4", "1.4.0", -1}, {"3fa9c1e2b7d0", "3fa9c1e2b7d0", 0}, {"devel", "1.4.2", -1}, {"1.4.2", "devel", -1},
		// git describe --tags, as the build stamps: commits after a tag.
		{"v1.4.2-3-gabc1234", "v1.4.2", 1}, {"v1.4.2-3-gabc1234", "v1.4.3", -1}, {"v1.4.2-3-gabc1234", "v1.4.2-10-g0123abc", -1},
		{"v1.4.2-3-gabc1234-dirty", "v1.4.2-3-gabc1234", 0}, {"v1.4.2-dirty", "v1.4.2", 0}, {"v1.4.2", "v1.4.2-1-gdeadbee", -1},
		{"v1.4.2-rc1", "v1.4.2", -1}, {"v1.4.2-rc1", "v1.4.2-rc1", 0}, {"v1.4.2-3-gXYZ", "v1.4.2", -1},
	} {
		if got := compareVersions(tc.agent, tc.master); got != tc.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tc.agent, tc.master, got, tc.want)
		}
	}
}
