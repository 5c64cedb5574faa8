package config

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/modules"
)

func TestConfig(t *testing.T) {
	opts := map[string]any{"id": "web01", "master": "salt", "cachedir": "/var/cache/brine/minion",
		"mine_functions": map[string]any{"ips": map[string]any{"mine_function": "network.ip_addrs"}},
		"redis.host":     "r1", "redis.port": int64(6379), "os": "FromOpts",
		"pkg": map[string]any{"apache": "httpd", "list": []any{"a", "b"}}}
	grains := map[string]any{"os": "Debian", "os_family": "Debian", "ip4_interfaces": map[string]any{"eth0": []any{"10.0.0.5"}},
		"pkg": map[string]any{"apache": "apache2", "nginx": "nginx"}}
	reg, err := modules.Registry(&modules.Env{Opts: func() map[string]any { return opts },
		Grains: func() map[string]any { return grains }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		fun    string
		args   []any
		kwargs map[string]any
		want   any
	}{
		{"config.get", []any{"master"}, nil, "salt"},
		{"config.get", []any{"os"}, nil, "FromOpts"},
		{"config.get", []any{"os"}, map[string]any{"omit_opts": true}, "Debian"},
		{"config.get", []any{"os_family"}, map[string]any{"omit_grains": true}, ""},
		{"config.get", []any{"mine_functions:ips:mine_function"}, nil, "network.ip_addrs"},
		{"config.get", []any{"ip4_interfaces:eth0:0"}, nil, "10.0.0.5"},
		{"config.get", []any{"pkg/list/1"}, map[string]any{"delimiter": "/"}, "b"},
		{"config.get", []any{"pkg:nginx"}, nil, "nginx"},
		{"config.get", []any{"pkg:apache"}, nil, "httpd"},
		{"config.get", []any{"pkg:lighttpd", "none"}, nil, "none"},
		{"config.get", []any{"pkg:nginx"}, map[string]any{"merge": "recurse"}, "nginx"},
		{"config.get", []any{"pkg:apache"}, map[string]any{"merge": "recurse"}, "httpd"},
		{"config.get", []any{"pkg:nginx", "gone"}, map[string]any{"merge": "overwrite"}, "gone"},
		{"config.get", []any{"pkg:nginx"}, map[string]any{"merge": "smart"}, "nginx"},
		{"config.get", []any{"missing"}, map[string]any{"default": map[string]any{"a": 1}}, map[string]any{"a": int64(1)}},
		{"config.option", []any{"redis.port"}, nil, int64(6379)},
		{"config.option", []any{"os"}, nil, "FromOpts"},
		{"config.option", []any{"os"}, map[string]any{"omit_opts": true}, "Debian"},
		{"config.option", []any{"os"}, map[string]any{"omit_all": true}, ""},
		{"config.option", []any{"pkg:apache"}, nil, ""},
		{"config.option", []any{"missing", "dflt"}, nil, "dflt"},
		{"config.option", []any{"redis.*"}, map[string]any{"wildcard": true}, map[string]any{"redis.host": "r1", "redis.port": int64(6379)}},
		{"config.option", []any{"os*"}, map[string]any{"wildcard": true}, map[string]any{"os": "FromOpts", "os_family": "Debian"}},
		{"config.option", []any{"nothing*"}, map[string]any{"wildcard": true}, map[string]any{}},
		{"config.dot_vals", []any{"redis"}, nil, map[string]any{"redis.host": "r1", "redis.port": int64(6379)}},
		{"config.valid_fileproto", []any{"salt://top.sls"}, nil, true},
		{"config.valid_fileproto", []any{"/srv/salt/top.sls"}, nil, false},
		{"config.items", nil, nil, opts},
	}
	for _, tc := range cases {
		got, err := reg.Call(context.Background(), tc.fun, tc.args, tc.kwargs, nil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v %v = %#v, %v; want %#v", tc.fun, tc.args, tc.kwargs, got, err, tc.want)
		}
	}
	// Merging changes neither the configuration nor the grains.
	if grains["pkg"].(map[string]any)["apache"] != "apache2" || len(opts["pkg"].(map[string]any)) != 2 {
		t.Errorf("config.get merge changed its sources: %v %v", grains["pkg"], opts["pkg"])
	}
	if _, err := reg.Call(context.Background(), "config.get", nil, nil, nil); err == nil || !strings.Contains(err.Error(), "missing argument") {
		t.Errorf("config.get without a key: %v", err)
	}
}

func TestWithoutOptsOrGrains(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := reg.Call(context.Background(), "config.get", []any{"id"}, nil, nil); got != "" || err != nil {
		t.Errorf("config.get id = %v, %v", got, err)
	}
	if got, err := reg.Call(context.Background(), "config.items", nil, nil, nil); err != nil || !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("config.items = %v, %v", got, err)
	}
}
