package grains

import (
	"context"
	"reflect"
	"testing"

	"github.com/brinehq/brine/modules"
)

func TestGrainsFunctions(t *testing.T) {
	g := map[string]any{"os": "Debian", "roles": []any{"web", "db"},
		"ip4_interfaces": map[string]any{"eth0": []any{"10.0.0.5"}}, "empty": ""}
	reg, err := modules.Registry(&modules.Env{Grains: func() map[string]any { return g }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		fun    string
		args   []any
		kwargs map[string]any
		want   any
	}{
		{"grains.get", []any{"os"}, nil, "Debian"},
		{"grains.get", []any{"ip4_interfaces:eth0:0"}, nil, "10.0.0.5"},
		{"grains.get", []any{"missing"}, map[string]any{"default": "none"}, "none"},
		{"grains.get", []any{"ip4_interfaces/eth0"}, map[string]any{"delimiter": "/"}, []any{"10.0.0.5"}},
		{"grains.item", []any{"os", "missing"}, nil, map[string]any{"os": "Debian", "missing": ""}},
		{"grains.has_value", []any{"roles"}, nil, true},
		{"grains.has_value", []any{"empty"}, nil, false},
		{"grains.ls", nil, nil, []string{"empty", "ip4_interfaces", "os", "roles"}},
	}
	for _, tc := range cases {
		got, err := reg.Call(context.Background(), tc.fun, tc.args, tc.kwargs, nil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v %v = %#v, %v; want %#v", tc.fun, tc.args, tc.kwargs, got, err, tc.want)
		}
	}
}
