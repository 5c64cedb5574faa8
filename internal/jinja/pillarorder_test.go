package jinja

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/internal/keyorder"
)

// TestPillarOrdered: templates iterate the pillar, and the mappings the
// pillar functions return, in the order the pillar was written.
func TestPillarOrdered(t *testing.T) {
	const text = "jobs:\n  mysql: {rotate: 7, daily: true}\n  a_monthly: {monthly: true}\nsalt:\n  opts:\n    makedirs: true\n    user: root\n    group: root\n"
	var ms yaml.MapSlice
	if err := yaml.UnmarshalWithOptions([]byte(text), &ms, yaml.UseOrderedMap()); err != nil {
		t.Fatal(err)
	}
	var pillar map[string]any
	if err := yaml.Unmarshal([]byte(text), &pillar); err != nil {
		t.Fatal(err)
	}
	order := keyorder.Of(ms)
	// the functions return plain maps, as the agent's do
	lookup := func(path ...string) any {
		var v any = pillar
		for _, k := range path {
			v = v.(map[string]any)[k]
		}
		return v
	}
	call := func(name string, args []any, kwargs map[string]any) (any, error) {
		switch name {
		case "pillar.get":
			if len(args) > 4 {
				return lookup(strings.Split(args[0].(string), args[4].(string))...), nil
			}
			if args[0] == "nope" {
				return args[1], nil // the default, as given
			}
			v := lookup(strings.Split(args[0].(string), ":")...)
			if len(args) > 2 && args[2] == true {
				// merge=True: the value merged over the default
				def := map[string]any{}
				for _, it := range args[1].(yaml.MapSlice) {
					def[it.Key.(string)] = it.Value
				}
				return DictUpdate(def, DeepCopy(v).(map[string]any), true, false), nil
			}
			return v, nil
		case "config.get":
			return lookup(strings.Split(args[0].(string), ":")...), nil
		case "pillar.items":
			return pillar, nil
		case "pillar.item":
			out := map[string]any{}
			for _, a := range args {
				out[a.(string)] = lookup(strings.Split(a.(string), ":")...)
			}
			return out, nil
		case "test.dict":
			return map[string]any{"b": 1, "a": 2}, nil
		}
		return nil, nil
	}
	names := []string{"pillar.get", "config.get", "pillar.items", "pillar.item", "test.dict"}
	tests := []struct {
		name, src, want string
		order           *keyorder.Order
	}{
		{"pillar", "{% for k in pillar %}{{ k }} {% endfor %}", "jobs salt ", order},
		{"pillar nested items", "{% for k, v in pillar.jobs.items() %}{{ k }}={{ v|join(',') }} {% endfor %}", "mysql=rotate,daily a_monthly=monthly ", order},
		{"pillar.get nested", "{% for k in salt['pillar.get']('salt:opts') %}{{ k }} {% endfor %}", "makedirs user group ", order},
		{"pillar.get delimiter", "{% for k in salt['pillar.get']('salt|opts', {}, False, None, '|') %}{{ k }} {% endfor %}", "makedirs user group ", order},
		{"salt.pillar.get", "{{ salt.pillar.get('jobs').keys()|list }}", "['mysql', 'a_monthly']", order},
		{"config.get", "{{ salt['config.get']('salt:opts')|list }}", "['makedirs', 'user', 'group']", order},
		{"pillar.items", "{{ salt['pillar.items']()|list }}", "['jobs', 'salt']", order},
		{"pillar.item", "{{ salt['pillar.item']('salt:opts', 'jobs') }}", "{'salt:opts': {'makedirs': True, 'user': 'root', 'group': 'root'}, 'jobs': {'mysql': {'rotate': 7, 'daily': True}, 'a_monthly': {'monthly': True}}}", order},
		{"other functions as before", "{{ salt['test.dict']()|list }}", "['a', 'b']", order},
		{"pillar.get merge: the default's keys, then the pillar's", "{{ salt['pillar.get']('salt:opts', {'zz': 1, 'user': 'x'}, True) }}", "{'zz': 1, 'user': 'root', 'makedirs': True, 'group': 'root'}", order},
		{"pillar.get's default mapping as given", "{{ salt['pillar.get']('nope', {'b': 1, 'a': {'d': 1, 'c': 2}}) }}", "{'b': 1, 'a': {'d': 1, 'c': 2}}", order},
		{"no order: sorted, as before", "{% for k in salt['pillar.get']('salt:opts') %}{{ k }} {% endfor %}", "group makedirs user ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]any{"pillar": OrderedBy(pillar, tt.order), "salt": Salt(names, PillarOrdered(call, tt.order))}
			got, err := renderStrict(t, tt.src, vars)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
