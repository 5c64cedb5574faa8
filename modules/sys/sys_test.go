package sys

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// fixture is a module of a few functions, with one whose name starts like
// sys's (sysctl), to check that "sys" does not match it.
func fixture(*modules.Env) []function.Func {
	run := func(context.Context, *function.Input) (any, error) { return nil, nil }
	return []function.Func{
		{Name: "test.ping", Doc: "Return True.", Run: run},
		{Name: "test.echo", Doc: "Return text.", Params: []function.Param{{Name: "text", Kind: function.Any, Required: true}}, Run: run},
		{Name: "test.arg", Doc: "Arguments.", VarArgs: true, VarKwargs: true, Run: run},
		{Name: "sysctl.get", Doc: "A kernel parameter.", Run: run,
			Params: []function.Param{{Name: "name", Kind: function.String, Required: true},
				{Name: "default", Kind: function.Any}, {Name: "delimiter", Kind: function.String, Default: ":"}}},
	}
}

func TestSys(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, fixture, Module)
	if err != nil {
		t.Fatal(err)
	}
	sysFuns := []any{"sys.argspec", "sys.doc", "sys.list_functions", "sys.list_modules", "sys.list_state_functions",
		"sys.list_state_modules", "sys.reload_modules", "sys.state_argspec", "sys.state_doc"}
	cases := []struct {
		fun  string
		args []any
		want any
	}{
		{"sys.list_functions", []any{"test"}, []any{"test.arg", "test.echo", "test.ping"}},
		{"sys.list_functions", []any{"sys"}, sysFuns},
		{"sys.list_functions", []any{"test.p*", "sysctl"}, []any{"sysctl.get", "test.ping"}},
		{"sys.list_functions", []any{"test.echo"}, []any{"test.echo"}},
		{"sys.list_functions", []any{"nope"}, []any{}},
		{"sys.list_modules", nil, []any{"sys", "sysctl", "test"}},
		{"sys.list_modules", []any{"sys*"}, []any{"sys", "sysctl"}},
		{"sys.list_modules", []any{"test", "nope"}, []any{"test"}},
		{"sys.doc", []any{"test.ping"}, map[string]any{"test.ping": "Return True."}},
		{"sys.doc", []any{"sysctl."}, map[string]any{"sysctl.get": "A kernel parameter."}},
		{"sys.doc", []any{"t*.e*"}, map[string]any{"test.echo": "Return text."}},
		{"sys.argspec", []any{"test"}, map[string]any{
			"test.ping": map[string]any{"args": nil, "defaults": nil, "varargs": nil, "kwargs": nil},
			"test.echo": map[string]any{"args": []any{"text"}, "defaults": nil, "varargs": nil, "kwargs": nil},
			"test.arg":  map[string]any{"args": nil, "defaults": nil, "varargs": true, "kwargs": true},
		}},
		{"sys.argspec", []any{"sysctl.get"}, map[string]any{
			"sysctl.get": map[string]any{"args": []any{"name", "default", "delimiter"}, "defaults": []any{nil, ":"},
				"varargs": nil, "kwargs": nil},
		}},
		{"sys.argspec", []any{"sys.argspec"}, map[string]any{
			"sys.argspec": map[string]any{"args": []any{"module"}, "defaults": []any{""}, "varargs": nil, "kwargs": nil},
		}},
		{"sys.argspec", nil, map[string]any{}},
		{"sys.reload_modules", nil, true},
	}
	for _, tc := range cases {
		got, err := reg.Call(context.Background(), tc.fun, tc.args, nil, nil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v = %#v, %v\nwant %#v", tc.fun, tc.args, got, err, tc.want)
		}
	}
	all, err := reg.Call(context.Background(), "sys.list_functions", nil, nil, nil)
	if err != nil || len(all.([]any)) != 4+len(sysFuns) {
		t.Errorf("sys.list_functions = %v, %v", all, err)
	}
	docs, err := reg.Call(context.Background(), "sys.doc", nil, nil, nil)
	if d, _ := docs.(map[string]any); err != nil || len(d) != 4+len(sysFuns) || !strings.Contains(d["sys.doc"].(string), "documentation") {
		t.Errorf("sys.doc = %v, %v", docs, err)
	}
}

func TestBeforeRegistration(t *testing.T) {
	env := &modules.Env{}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Call(context.Background(), "sys.list_functions", nil, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "not registered yet") {
		t.Errorf("before registration: %v", err)
	}
	// The registry is read when called, not when the module is declared.
	env.Functions = reg
	if got, err := reg.Call(context.Background(), "sys.list_modules", nil, nil, nil); err != nil || !reflect.DeepEqual(got, []any{"sys"}) {
		t.Errorf("after: %v, %v", got, err)
	}
}

// The state functions are described as the execution functions are, from
// the agent's state registry.
func TestSysStates(t *testing.T) {
	env := &modules.Env{}
	reg, err := modules.Registry(env, Module)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := reg.Call(ctx, "sys.list_state_functions", nil, nil, nil); err == nil || !strings.Contains(err.Error(), "not registered yet") {
		t.Errorf("before the states are registered: %v", err)
	}
	states := function.New()
	run := func(context.Context, *function.Input) (any, error) { return nil, nil }
	if err := states.RegisterAll([]function.Func{
		{Name: "file.managed", Doc: "Manage a file.", Params: []function.Param{{Name: "name", Kind: function.String, Required: true},
			{Name: "source", Kind: function.Any}}, VarKwargs: true, Run: run},
		{Name: "file.absent", Doc: "Remove a file.", Params: []function.Param{{Name: "name", Kind: function.String, Required: true}}, Run: run},
		{Name: "pkg.installed", Doc: "Install packages.", Run: run},
	}); err != nil {
		t.Fatal(err)
	}
	env.States = states
	for _, tc := range []struct {
		fun  string
		args []any
		want any
	}{
		{"sys.list_state_functions", nil, []any{"file.absent", "file.managed", "pkg.installed"}},
		{"sys.list_state_functions", []any{"file"}, []any{"file.absent", "file.managed"}},
		{"sys.list_state_modules", nil, []any{"file", "pkg"}},
		{"sys.state_doc", []any{"file.managed"}, map[string]any{"file.managed": "Manage a file."}},
		{"sys.state_argspec", []any{"file.managed"}, map[string]any{"file.managed": map[string]any{
			"args": []any{"name", "source"}, "defaults": []any{nil}, "varargs": nil, "kwargs": true}}},
		// The execution functions are not the states'.
		{"sys.list_functions", []any{"file"}, []any{}},
	} {
		got, err := reg.Call(ctx, tc.fun, tc.args, nil, nil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v = %#v, %v; want %#v", tc.fun, tc.args, got, err, tc.want)
		}
	}
}
