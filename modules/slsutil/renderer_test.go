package slsutil

import (
	"context"
	"reflect"
	"testing"

	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/defaults"
	"github.com/brinehq/brine/modules/logmod"
)

// TestRenderer renders strings as Salt's slsutil.renderer does, with the
// template functions formulas call: defaults.merge changes the
// merged dictionary, log.* return True.
func TestRenderer(t *testing.T) {
	env := &modules.Env{Grains: func() map[string]any { return map[string]any{"os": "Debian"} }}
	reg, err := modules.Registry(env, Module, defaults.Module, logmod.Module)
	if err != nil {
		t.Fatal(err)
	}
	env.Functions = reg
	for _, tc := range []struct {
		src, pipe string
		want      any
	}{
		{"{{ 1 + 1 }}", "jinja", "2"},
		{"{{ '1.2.3.4' | is_ip }}", "jinja", "True"},
		{"a: {{ grains.os }}", "jinja|yaml", map[string]any{"a": "Debian"}},
		{"#!yaml\nb: 1", "jinja|yaml", map[string]any{"b": uint64(1)}},
		{"{% import_yaml 'x.yaml' as d %}", "jinja", ""},
		{"{% load_yaml as d %}a: 1{% endload %}{% set d = salt['defaults.merge'](d, {'b': 2}) %}{{ d.b }}", "jinja", "2"},
		{"{% set s = {'values': {'a': 1}} %}{% do s.update({'values': salt['slsutil.merge'](s['values'], {'b': 2}, strategy='smart', merge_lists=False)}) %}{{ s['values'] | yaml(False) }}", "jinja", "a: 1\nb: 2"},
		{"{{ salt['log.debug']('hello') }}", "jinja", "True"},
		{"{{ salt['slsutil.boolstr'](1) }}", "jinja", "true"},
	} {
		if tc.src == "{% import_yaml 'x.yaml' as d %}" {
			continue // needs a master
		}
		got, err := reg.Call(context.Background(), "slsutil.renderer", nil, map[string]any{"string": tc.src, "default_renderer": tc.pipe}, nil)
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q = %#v; want %#v", tc.src, got, tc.want)
		}
	}
	if _, err := reg.Call(context.Background(), "slsutil.renderer", nil, nil, nil); err == nil || err.Error() == "" {
		t.Errorf("no path nor string: %v", err)
	}
}
