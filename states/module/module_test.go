package module

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	cmdmod "github.com/brinehq/brine/modules/cmd"
	filemod "github.com/brinehq/brine/modules/file"
	testmod "github.com/brinehq/brine/modules/test"
	"github.com/brinehq/brine/state"
)

// states returns the module state functions over an agent whose execution
// functions are test, cmd and file's.
func states(t *testing.T) *function.Registry {
	t.Helper()
	env := &modules.Env{ID: "web01", Grains: func() map[string]any { return map[string]any{} },
		Opts: func() map[string]any { return map[string]any{} }, CacheDir: t.TempDir()}
	if _, err := modules.Registry(env, testmod.Module, cmdmod.Module, filemod.Module); err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	return reg
}

func run(t *testing.T, reg *function.Registry, test bool, fun string, kwargs map[string]any) state.Result {
	t.Helper()
	ctx := state.With(context.Background(), &state.Running{Test: test})
	out, err := reg.Call(ctx, fun, nil, kwargs, nil)
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	return out.(state.Result)
}

func TestRun(t *testing.T) {
	reg := states(t)
	dir := t.TempDir()
	touched := filepath.Join(dir, "touched")
	cases := []struct {
		name    string
		fun     string
		test    bool
		kwargs  map[string]any
		result  any
		comment string
		changes map[string]any
	}{
		{"legacy", "module.run", false, map[string]any{"name": "test.echo", "text": "hi"}, true,
			"Module function test.echo executed", map[string]any{"ret": "hi"}},
		{"legacy m_name", "module.run", false, map[string]any{"name": "file.touch", "m_name": touched}, true,
			"Module function file.touch executed", map[string]any{"ret": true}},
		{"legacy args and kwargs", "module.run", false, map[string]any{"name": "test.arg", "args": []any{"a", int64(1)},
			"kwargs": map[string]any{"k": "v"}}, true, "Module function test.arg executed",
			map[string]any{"ret": map[string]any{"args": []any{"a", int64(1)}, "kwargs": map[string]any{"k": "v"}}}},
		{"legacy false", "module.run", false, map[string]any{"name": "test.false"}, false,
			"Module function test.false executed", map[string]any{"ret": false}},
		{"legacy retcode", "module.run", false, map[string]any{"name": "cmd.run_all", "cmd": "echo out; exit 3",
			"python_shell": true}, false, "Module function cmd.run_all executed", nil},
		{"legacy missing argument", "module.run", false, map[string]any{"name": "test.echo"}, false,
			"The following arguments are missing: text", nil},
		{"legacy hidden name missing", "module.run", false, map[string]any{"name": "file.touch"}, false,
			"The following arguments are missing: m_name", nil},
		{"legacy unknown", "module.run", false, map[string]any{"name": "no.such"}, false, "Module function no.such is not available", nil},
		{"legacy bad args", "module.run", false, map[string]any{"name": "test.arg", "args": "x"}, false, "'args' must be a list.", nil},
		{"legacy exception", "module.run", false, map[string]any{"name": "file.read", "path": "relative"}, false,
			"Module function file.read threw an exception. Exception: file.read: File path must be absolute: relative", nil},
		{"legacy test mode", "module.run", true, map[string]any{"name": "test.echo", "text": "hi"}, nil,
			"Module function test.echo is set to execute", nil},
		{"new", "module.run", false, map[string]any{"name": "id", "test.echo": []any{map[string]any{"text": "hi"}}}, true,
			"test.echo: hi", map[string]any{"test.echo": "hi"}},
		{"new several", "module.run", false, map[string]any{"name": "id", "test.true": nil,
			"test.arg": []any{"x", map[string]any{"and": "kw"}}}, true,
			"test.arg: Success, test.true: True",
			map[string]any{"test.true": true, "test.arg": map[string]any{"args": []any{"x"}, "kwargs": map[string]any{"and": "kw"}}}},
		{"new twice", "module.run", false, map[string]any{"name": "id", "test.echo:a": []any{"one"}, "test.echo:b": []any{"two"}},
			true, "test.echo:a: one, test.echo:b: two", map[string]any{"test.echo:a": "one", "test.echo:b": "two"}},
		{"new false", "module.run", false, map[string]any{"name": "id", "test.false": nil}, false, "'test.false': False", map[string]any{}},
		{"new missing argument", "module.run", false, map[string]any{"name": "id", "test.echo": nil}, false,
			"'test.echo' failed: Missing arguments: text", map[string]any{}},
		{"new unknown", "module.run", false, map[string]any{"name": "id", "no.such": nil, "test.true": nil}, false,
			"Unavailable function: no.such.", nil},
		{"new test mode", "module.run", true, map[string]any{"name": "id", "test.echo": []any{"hi"}}, nil,
			"Function test.echo to be executed.", nil},
		{"new test mode several", "module.run", true, map[string]any{"name": "id", "test.echo": []any{"hi"}, "test.true": nil}, nil,
			"FunctionTrue test.echo, test.true to be executed.", nil},
		{"wait", "module.wait", false, map[string]any{"name": "test.echo", "text": "hi"}, true, "", nil},
		{"watch", "module.watch", true, map[string]any{"name": "test.echo"}, true, "", nil},
		{"mod_watch", "module.mod_watch", false, map[string]any{"name": "test.echo", "text": "hi", "sfun": "wait"}, true,
			"Module function test.echo executed", map[string]any{"ret": "hi"}},
	}
	for _, c := range cases {
		r := run(t, reg, c.test, c.fun, c.kwargs)
		if state.Value(r.Result) != c.result || r.Comment != c.comment || c.changes != nil && !reflect.DeepEqual(r.Changes, c.changes) {
			t.Errorf("%s: got %v %q %#v; want %v %q %#v", c.name, state.Value(r.Result), r.Comment, r.Changes, c.result, c.comment, c.changes)
		}
	}
	if _, err := os.Stat(touched); err != nil {
		t.Errorf("file.touch through module.run: %v", err)
	}
	r := run(t, reg, false, "module.run", map[string]any{"name": "cmd.run_all", "cmd": "echo out; exit 3", "python_shell": true})
	if ret, _ := r.Changes["ret"].(map[string]any); ret["retcode"] != 3 || ret["stdout"] != "out" {
		t.Errorf("cmd.run_all through module.run: %#v", r.Changes)
	}
}

// The new syntax runs its functions in the order the SLS wrote them: a
// file written then read.
func TestRunInWrittenOrder(t *testing.T) {
	reg := states(t)
	path := filepath.Join(t.TempDir(), "f")
	kwargs := map[string]any{
		"name":       "ordered",
		"file.write": []any{map[string]any{"path": path}, map[string]any{"args": []any{"written"}}},
		"cmd.run":    []any{map[string]any{"cmd": "cat " + path}},
	}
	ctx := state.With(context.Background(), &state.Running{ArgOrder: []string{"name", "file.write", "cmd.run"}})
	out, err := reg.Call(ctx, "module.run", nil, kwargs, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := out.(state.Result)
	if state.Value(r.Result) != true || r.Changes["cmd.run"] != "written" {
		t.Errorf("result %v, changes %v", state.Value(r.Result), r.Changes)
	}
}
