package event

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/modules"
)

func TestSendBuildsSaltsPayload(t *testing.T) {
	var gotTag string
	var got map[string]any
	env := &modules.Env{ID: "web01", Grains: func() map[string]any { return map[string]any{"os": "Debian", "fqdn": "web01.example.com"} },
		FireMaster: func(_ context.Context, tag string, data map[string]any) error { gotTag, got = tag, data; return nil }}
	reg, err := modules.Registry(env, Module)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []any
		kwargs map[string]any
		want   map[string]any
		err    string
	}{
		{"data", []any{"myapp/deploy", map[string]any{"version": "1.4.2"}}, map[string]any{"__pub_fun": "event.send"},
			map[string]any{"version": "1.4.2", "__pub_fun": "event.send"}, ""},
		{"data wins over kwargs", []any{"t"}, map[string]any{"data": map[string]any{"a": 1}, "a": 2}, map[string]any{"a": int64(1)}, ""},
		{"grains subset", []any{"t"}, map[string]any{"with_grains": []any{"os"}}, map[string]any{"grains": map[string]any{"os": "Debian"}}, ""},
		{"env opts", []any{"t"}, map[string]any{"with_env_opts": true}, map[string]any{"saltenv": "base", "pillarenv": nil}, ""},
		{"string data", []any{"t", "not json"}, nil, nil, "data must be a mapping"},
	}
	for _, tc := range cases {
		got = nil
		ret, err := reg.Call(context.Background(), "event.send", tc.args, tc.kwargs, nil)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v", tc.name, err)
			}
			continue
		}
		if err != nil || ret != true || !reflect.DeepEqual(got, tc.want) || gotTag != tc.args[0] {
			t.Errorf("%s: %v %v: sent %q %v, want %v", tc.name, ret, err, gotTag, got, tc.want)
		}
	}
}
