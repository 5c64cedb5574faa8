package pillar

import (
	"context"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

func TestPillarFunctions(t *testing.T) {
	own := map[string]any{"apache": map[string]any{"port": int64(80), "mods": []any{"ssl"}}, "db_host": "db1", "flat": "x"}
	env := &modules.Env{Pillar: func(context.Context, bool) (map[string]any, error) { return own, nil }}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, name string, args []any, kwargs map[string]any) any {
		t.Helper()
		out, err := reg.Call(ctx, name, args, kwargs, nil)
		if err != nil {
			t.Fatalf("%s%v: %v", name, args, err)
		}
		return out
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		args   []any
		kwargs map[string]any
		want   any
	}{
		{"pillar.get", []any{"apache:port"}, nil, int64(80)},
		{"pillar.get", []any{"apache/port"}, map[string]any{"delimiter": "/"}, int64(80)},
		{"pillar.get", []any{"nope", "dflt"}, nil, "dflt"},
		{"pillar.get", []any{"nope"}, nil, ""},
		{"pillar.get", []any{"apache"}, map[string]any{"default": map[string]any{"port": int64(8080), "user": "www"}, "merge": true},
			map[string]any{"port": int64(80), "user": "www", "mods": []any{"ssl"}}},
		{"pillar.fetch", []any{"db_host"}, nil, "db1"},
		{"pillar.items", []any{"db_host", "flat"}, nil, map[string]any{"db_host": "db1", "flat": "x"}},
		{"pillar.item", []any{"db_host", "nope"}, nil, map[string]any{"db_host": "db1", "nope": ""}},
		{"pillar.raw", []any{"flat"}, nil, "x"},
		{"pillar.keys", []any{"apache"}, nil, []any{"mods", "port"}},
		{"pillar.ls", nil, nil, []any{"apache", "db_host", "flat"}},
	} {
		if got := run(ctx, tc.name, tc.args, tc.kwargs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v %v = %#v, want %#v", tc.name, tc.args, tc.kwargs, got, tc.want)
		}
	}
	// A state run's pillar (with its pillar= override) is what its
	// templates' pillar.get reads.
	run2 := modules.WithPillar(ctx, map[string]any{"version": "v2"})
	if got := run(run2, "pillar.get", []any{"version", "master"}, nil); got != "v2" {
		t.Errorf("pillar.get in a state run = %v", got)
	}
	if _, err := reg.Call(ctx, "pillar.keys", []any{"flat"}, nil, nil); err == nil {
		t.Error("pillar.keys of a string: no error")
	}
}
