package saltutil

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
)

// saltSyncAll is what salt-call --local saltutil.sync_all returned with
// no custom modules (Salt 3006.6): every kind, nothing synced.
var saltSyncAll = map[string]any{
	"clouds": []any{}, "beacons": []any{}, "modules": []any{}, "states": []any{}, "sdb": []any{}, "grains": []any{},
	"renderers": []any{}, "returners": []any{}, "output": []any{}, "utils": []any{}, "log_handlers": []any{},
	"executors": []any{}, "proxymodules": []any{}, "engines": []any{}, "thorium": []any{}, "serializers": []any{},
	"matchers": []any{}, "pillar": []any{},
}

func TestSync(t *testing.T) {
	refreshed := 0
	pillar := func(_ context.Context, refresh bool) (map[string]any, error) {
		if refresh {
			refreshed++
		}
		return map[string]any{}, nil
	}
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{
		"base": {"top.sls": "base: {}", "_modules/README": "not a module"},
		"dev":  {"_modules/custom.py": "def f(): pass", "_grains/roles.py": "def roles(): pass"},
	}}
	local, err := modules.Registry(&modules.Env{ID: "web1", Jobs: &fakeJobs{}, Files: files,
		Opts: func() map[string]any { return map[string]any{"file_client": "local"} }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := modules.Registry(&modules.Env{ID: "web1", Jobs: &fakeJobs{}, Files: files, Pillar: pillar,
		Opts: func() map[string]any { return map[string]any{"file_client": "remote"} }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Masterless: Salt's shape exactly, pillar included.
	got, err := local.Call(ctx, "saltutil.sync_all", nil, nil, nil)
	if err != nil || !reflect.DeepEqual(got, saltSyncAll) {
		t.Errorf("sync_all (file_client: local) = %v, %v; want %v", got, err, saltSyncAll)
	}
	bare, err := modules.Registry(&modules.Env{ID: "web1", Jobs: &fakeJobs{}}, Module)
	if err != nil {
		t.Fatal(err)
	}
	got, err = bare.Call(ctx, "saltutil.sync_all", nil, nil, nil)
	if err != nil || !reflect.DeepEqual(got, saltSyncAll) {
		t.Errorf("sync_all (no master) = %v, %v; want %v", got, err, saltSyncAll)
	}
	// With a master: no pillar key (Salt syncs pillar modules only
	// masterless), and the pillar is refreshed.
	got, err = remote.Call(ctx, "saltutil.sync_all", nil, nil, nil)
	want := map[string]any{}
	for k, v := range saltSyncAll {
		if k != "pillar" {
			want[k] = v
		}
	}
	if err != nil || !reflect.DeepEqual(got, want) || refreshed != 1 {
		t.Errorf("sync_all = %v, %v (pillar refreshed %d times); want %v", got, err, refreshed, want)
	}
	if _, err := remote.Call(ctx, "saltutil.sync_all", nil, map[string]any{"refresh": false}, nil); err != nil || refreshed != 1 {
		t.Errorf("sync_all refresh=False: %v, pillar refreshed %d times", err, refreshed)
	}
	for _, fun := range []string{"saltutil.sync_modules", "saltutil.sync_states", "saltutil.sync_sdb", "saltutil.sync_proxymodules"} {
		if got, err := remote.Call(ctx, fun, nil, nil, nil); err != nil || !reflect.DeepEqual(got, []any{}) {
			t.Errorf("%s = %v, %v; want []", fun, got, err)
		}
	}
	if _, err := remote.Call(ctx, "saltutil.sync_grains", nil, nil, nil); err != nil || refreshed != 2 {
		t.Errorf("sync_grains: %v, pillar refreshed %d times, want 2", err, refreshed)
	}

	// Custom Python modules in the environment synced: an error naming
	// them, not a sync that pretends.
	for _, tc := range []struct {
		fun    string
		kwargs map[string]any
		want   string
	}{
		{"saltutil.sync_modules", map[string]any{"saltenv": "dev"}, "salt://_modules/custom.py"},
		{"saltutil.sync_all", map[string]any{"saltenv": "base,dev"}, "salt://_modules/custom.py"},
		{"saltutil.sync_grains", map[string]any{"saltenv": []any{"dev"}}, "salt://_grains/roles.py"},
	} {
		_, err := remote.Call(ctx, tc.fun, nil, tc.kwargs, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "no custom Python modules") {
			t.Errorf("%s %v: %v, want an error naming %s", tc.fun, tc.kwargs, err, tc.want)
		}
	}
	if got, err := remote.Call(ctx, "saltutil.refresh_modules", nil, nil, nil); err != nil || got != true {
		t.Errorf("refresh_modules = %v, %v", got, err)
	}
}
