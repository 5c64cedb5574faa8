package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// goInternals are words of Go's type system that a configuration error
// must never show: the operator wrote YAML, not Go.
var goInternals = []string{"Go struct", "Go value", "unmarshal", "int64", "uint64", "map[string]", "interface {}",
	"[]string", "Settings.", "time.Duration", "reflect"}

func TestTypeErrorsNameFileLineAndKey(t *testing.T) {
	cases := []struct {
		name, file, body, want string
	}{
		{"port", "master", "id: m\n\npublish_port: abc\n", `master:3: publish_port: want a port number, got "abc"`},
		{"port list", "master", "ret_port: [1, 2]\n", `master:1: ret_port: want a port number, got a list`},
		{"port mapping", "master", "publish_port: {a: 1}\n", `master:1: publish_port: want a port number, got a mapping`},
		{"port overflow", "master", "ret_port: 99999999999999999999999\n", `master:1: ret_port: want a port number, got "99999999999999999999999"`},
		{"number", "master", "max_event_size: big\n", `master:1: max_event_size: want a whole number, got "big"`},
		{"bool", "master", "strict: maybe\n", `master:1: strict: want true or false, got "maybe"`},
		{"string", "master", "id: [a]\n", `master:1: id: want a string, got a list`},
		{"mapping", "master", "bus: hello\n", `master:1: bus: want a mapping, got "hello"`},
		{"duration", "master", "bus:\n  max_age: forever\n", `master:2: bus.max_age: want a duration such as 90s, 15m or 168h, got "forever"`},
		{"duration without unit", "master", "bus:\n  max_age: 12\n", `master:2: bus.max_age: want a duration such as 90s, 15m or 168h, got "12"`},
		{"list", "master", "bus:\n  cluster:\n    routes: nats://x\n", `master:3: bus.cluster.routes: want a list of strings, got "nats://x"`},
		{"list item", "master", "bus:\n  cluster:\n    routes:\n      - nats://a\n      - {a: b}\n", `master:5: bus.cluster.routes[1]: want a string, got a mapping`},
		{"master.d", "master.d/ports.conf", "log_level: info\nret_port: four\n", `master.d/ports.conf:2: ret_port: want a port number, got "four"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, tc.file), tc.body)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("loaded")
			}
			if want := dir + string(filepath.Separator) + tc.want; err.Error() != want {
				t.Errorf("error\n %s\nwant\n %s", err, want)
			}
			for _, w := range goInternals {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q shows %q", err, w)
				}
			}
		})
	}
}

// TestSectionTypeErrors covers what every part decoding its own section
// (api, slack, ddns… through Decoder.Decode) reports.
func TestSectionTypeErrors(t *testing.T) {
	type listener struct {
		Port    int           `yaml:"port"`
		TLS     bool          `yaml:"tls"`
		Timeout time.Duration `yaml:"timeout"`
		Users   []string      `yaml:"users"`
		Limits  map[string]int
		Ratio   float64 `yaml:"ratio"`
	}
	type section struct {
		Listeners []listener `yaml:"listeners"`
		Name      string     `yaml:"name"`
	}
	cases := []struct{ name, body, want string }{
		{"port", "api:\n  listeners:\n    - port: http\n", `api.listeners[0].port: want a port number, got "http"`},
		{"bool", "api:\n  listeners:\n    - port: 1\n    - tls: 'on please'\n", `api.listeners[1].tls: want true or false, got "on please"`},
		{"list", "api:\n  listeners: {port: 1}\n", `api.listeners: want a list, got a mapping`},
		{"strings", "api:\n  listeners:\n    - users: [a, [b]]\n", `api.listeners[0].users[1]: want a string, got a list`},
		{"map value", "api:\n  listeners:\n    - limits: {a: 1, b: x}\n", `api.listeners[0].limits.b: want a whole number, got "x"`},
		{"float", "api:\n  listeners:\n    - ratio: half\n", `api.listeners[0].ratio: want a number, got "half"`},
		{"duration", "api:\n  listeners:\n    - timeout: soon\n", `api.listeners[0].timeout: want a duration such as 90s, 15m or 168h, got "soon"`},
		{"section", "api: [1]\n", `api: want a mapping, got a list`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "master"), "id: m\n"+tc.body)
			m, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			var s section
			err = m.Decode("api", &s)
			if err == nil {
				t.Fatal("decoded")
			}
			if !strings.HasPrefix(err.Error(), filepath.Join(dir, "master")+":") || !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("error\n %s\nwant master:LINE: %s", err, tc.want)
			}
			for _, w := range goInternals {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q shows %q", err, w)
				}
			}
		})
	}
}
