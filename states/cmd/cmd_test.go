package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	cmdmod "github.com/brinehq/brine/modules/cmd"
	"github.com/brinehq/brine/modules/modulestest"
	"github.com/brinehq/brine/state"
)

// render is a stand-in template engine: {{ key }} is the context's value.
func render(_ context.Context, engine, _ string, src []byte, c map[string]any) ([]byte, error) {
	if engine != "jinja" {
		return nil, fmt.Errorf("unknown template engine %s", engine)
	}
	s := string(src)
	for k, v := range c {
		s = strings.ReplaceAll(s, "{{ "+k+" }}", fmt.Sprint(v))
	}
	return []byte(s), nil
}

func setup(t *testing.T) *function.Registry {
	t.Helper()
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{
		"base": {
			"scripts/hello.sh": "#!/bin/sh\necho \"hello $*\"\n",
			"scripts/tmpl.sh":  "#!/bin/sh\necho '{{ greeting }} {{ who }}'\n",
			"scripts/state.sh": "#!/bin/sh\necho working\necho\necho \"changed=yes comment='script changed' n=1\"\n",
		},
		"dev": {"scripts/hello.sh": "#!/bin/sh\necho \"dev $*\"\n"},
	}}
	env := &modules.Env{ID: "web01", Grains: func() map[string]any { return map[string]any{} },
		Opts: func() map[string]any { return map[string]any{} }, CacheDir: t.TempDir(), Files: files}
	if _, err := modules.Registry(env, cmdmod.Module); err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	return reg
}

func run(t *testing.T, reg *function.Registry, test bool, saltenv, fun string, kwargs map[string]any) state.Result {
	t.Helper()
	ctx := state.With(context.Background(), &state.Running{Test: test, Saltenv: saltenv, Template: render})
	out, err := reg.Call(ctx, fun, nil, kwargs, nil)
	if err != nil {
		t.Fatalf("%s %v: %v", fun, kwargs, err)
	}
	return out.(state.Result)
}

// outcome is what a case checks of a command's changes (the pid varies).
func outcome(ch map[string]any) map[string]any {
	if ch == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range ch {
		if k == "pid" {
			if _, ok := v.(int); !ok {
				out["pid"] = fmt.Sprintf("bad pid %v", v)
			}
			continue
		}
		out[k] = v
	}
	return out
}

func TestRunAndScript(t *testing.T) {
	reg := setup(t)
	dir := t.TempDir()
	created := filepath.Join(dir, "created")
	notCreated := filepath.Join(dir, "not-created")
	cases := []struct {
		name    string
		fun     string
		test    bool
		saltenv string
		kwargs  map[string]any
		result  any
		comment string
		changes map[string]any
	}{
		{"run", "cmd.run", false, "", map[string]any{"name": "echo hello"}, true, `Command "echo hello" run`,
			map[string]any{"retcode": 0, "stdout": "hello", "stderr": ""}},
		{"effect", "cmd.run", false, "", map[string]any{"name": "touch " + created, "creates": created, "unless": "false"}, true,
			`Command "touch ` + created + `" run`, map[string]any{"retcode": 0, "stdout": "", "stderr": ""}},
		{"fails", "cmd.run", false, "", map[string]any{"name": "echo oops >&2; exit 2"}, false, `Command "echo oops >&2; exit 2" run`,
			map[string]any{"retcode": 2, "stdout": "", "stderr": "oops"}},
		{"success_retcodes", "cmd.run", false, "", map[string]any{"name": "exit 2", "success_retcodes": []any{int64(2)}}, true,
			`Command "exit 2" run`, map[string]any{"retcode": 0, "stdout": "", "stderr": ""}},
		{"test mode", "cmd.run", true, "", map[string]any{"name": "touch " + notCreated}, nil,
			`Command "touch ` + notCreated + `" would have been executed`, map[string]any{"cmd": "touch " + notCreated}},
		{"cwd", "cmd.run", false, "", map[string]any{"name": "pwd", "cwd": dir}, true, `Command "pwd" run`,
			map[string]any{"retcode": 0, "stdout": dir, "stderr": ""}},
		{"missing cwd", "cmd.run", false, "", map[string]any{"name": "pwd", "cwd": "/no/such/dir"}, false,
			`Desired working directory "/no/such/dir" is not available`, nil},
		{"env", "cmd.run", false, "", map[string]any{"name": "echo $FOO", "env": []any{map[string]any{"FOO": "bar"}}}, true,
			`Command "echo $FOO" run`, map[string]any{"retcode": 0, "stdout": "bar", "stderr": ""}},
		{"bad env", "cmd.run", false, "", map[string]any{"name": "true", "env": "FOO=bar"}, false,
			"Invalidly-formatted 'env' parameter. See documentation.", nil},
		{"runas", "cmd.run", false, "", map[string]any{"name": "id -un", "runas": "nobody"}, true, `Command "id -un" run`,
			map[string]any{"retcode": 0, "stdout": "nobody", "stderr": ""}},
		{"hide_output", "cmd.run", false, "", map[string]any{"name": "echo secret", "hide_output": true}, true,
			`Command "echo secret" run`, map[string]any{"retcode": 0, "stdout": "", "stderr": ""}},
		{"timeout", "cmd.run", false, "", map[string]any{"name": "sleep 5", "timeout": int64(1)}, false, `Command "sleep 5" run`,
			map[string]any{"retcode": 1, "stdout": "sleep 5 : Timed out after 1 seconds", "stderr": ""}},
		{"ignore_timeout", "cmd.run", false, "", map[string]any{"name": "sleep 5", "timeout": int64(1), "ignore_timeout": true}, true,
			`Command "sleep 5" run`, map[string]any{"retcode": 0, "stdout": "sleep 5 : Timed out after 1 seconds", "stderr": ""}},
		{"root", "cmd.run", false, "", map[string]any{"name": "true", "root": "/srv/jail"}, false,
			"root: running a command in a chroot (cmd.run_chroot) is not supported", nil},
		{"stateful changed", "cmd.run", false, "", map[string]any{"name": `echo working; echo; echo "changed=yes comment='it changed' n=1"`,
			"stateful": true}, true, "it changed",
			map[string]any{"changed": "yes", "n": "1", "retcode": 0, "stdout": "working\n", "stderr": ""}},
		{"stateful unchanged", "cmd.run", false, "", map[string]any{"name": `echo "changed=no comment='all good'"`, "stateful": true},
			true, "all good", nil},
		{"stateful json", "cmd.run", false, "", map[string]any{"name": `echo '{"changed": true, "comment": "j", "x": 1}'`,
			"stateful": true}, true, "j", map[string]any{"changed": true, "x": float64(1), "retcode": 0, "stdout": "", "stderr": ""}},
		{"stateful json not object", "cmd.run", false, "", map[string]any{"name": `echo '[1]'`, "stateful": true}, false,
			"script JSON output must be a JSON object (e.g., {})!", nil},
		{"stateful garbage", "cmd.run", false, "", map[string]any{"name": "echo not pairs", "stateful": true}, false,
			"Failed parsing script output! Stdout must be JSON or a line of name=value pairs.",
			map[string]any{"retcode": 0, "stdout": "not pairs", "stderr": ""}},
		{"stateful no output", "cmd.run", false, "", map[string]any{"name": "echo err >&2", "stateful": true}, true, "err", nil},
		{"stateful test mode", "cmd.run", true, "", map[string]any{"name": "touch " + notCreated, "stateful": true}, nil, "", nil},
		{"stateful test_name", "cmd.run", true, "", map[string]any{"name": "touch " + notCreated,
			"stateful": []any{map[string]any{"test_name": `echo "changed=yes comment=would"`}}}, nil, "would",
			map[string]any{"changed": "yes", "retcode": 0, "stdout": "changed=yes comment=woul", "stderr": ""}},
		{"wait", "cmd.wait", false, "", map[string]any{"name": "touch " + notCreated}, true, "", nil},
		{"watch", "cmd.watch", false, "", map[string]any{"name": "touch " + notCreated}, true, "", nil},
		{"wait_script", "cmd.wait_script", false, "", map[string]any{"name": "salt://scripts/hello.sh"}, true, "", nil},
		{"mod_watch run", "cmd.mod_watch", false, "", map[string]any{"name": "echo fired", "sfun": "wait", "cwd": dir}, true,
			`Command "echo fired" run`, map[string]any{"retcode": 0, "stdout": "fired", "stderr": ""}},
		{"mod_watch script", "cmd.mod_watch", false, "", map[string]any{"name": "salt://scripts/hello.sh", "sfun": "wait_script",
			"args": "w"}, true, "Command 'salt://scripts/hello.sh' run", map[string]any{"retcode": 0, "stdout": "hello w", "stderr": ""}},
		{"mod_watch other", "cmd.mod_watch", false, "", map[string]any{"name": "x", "sfun": "call"}, false,
			"cmd.call does not work with the watch requisite, please use cmd.wait or cmd.wait_script", nil},
		{"script", "cmd.script", false, "", map[string]any{"name": "salt://scripts/hello.sh", "args": "a 'b c'"}, true,
			"Command 'salt://scripts/hello.sh' run", map[string]any{"retcode": 0, "stdout": "hello a b c", "stderr": ""}},
		{"script args in name", "cmd.script", false, "", map[string]any{"name": "salt://scripts/hello.sh x y"}, true,
			"Command 'salt://scripts/hello.sh x y' run", map[string]any{"retcode": 0, "stdout": "hello x y", "stderr": ""}},
		{"script source", "cmd.script", false, "", map[string]any{"name": "greet", "source": "salt://scripts/hello.sh"}, true,
			"Command 'greet' run", map[string]any{"retcode": 0, "stdout": "hello", "stderr": ""}},
		{"script saltenv", "cmd.script", false, "dev", map[string]any{"name": "salt://scripts/hello.sh"}, true,
			"Command 'salt://scripts/hello.sh' run", map[string]any{"retcode": 0, "stdout": "dev", "stderr": ""}},
		{"script saltenv query", "cmd.script", false, "", map[string]any{"name": "salt://scripts/hello.sh?saltenv=dev"}, true,
			"Command 'salt://scripts/hello.sh?saltenv=dev' run", map[string]any{"retcode": 0, "stdout": "dev", "stderr": ""}},
		{"script template", "cmd.script", false, "", map[string]any{"name": "salt://scripts/tmpl.sh", "template": "jinja",
			"defaults": map[string]any{"greeting": "hi", "who": "all"}, "context": map[string]any{"who": "you"}}, true,
			"Command 'salt://scripts/tmpl.sh' run", map[string]any{"retcode": 0, "stdout": "hi you", "stderr": ""}},
		{"script stateful", "cmd.script", false, "", map[string]any{"name": "salt://scripts/state.sh", "stateful": true}, true,
			"script changed", map[string]any{"changed": "yes", "n": "1", "retcode": 0, "stdout": "working\n", "stderr": ""}},
		{"script test mode", "cmd.script", true, "", map[string]any{"name": "salt://scripts/hello.sh"}, nil,
			"Command 'salt://scripts/hello.sh' would have been executed", nil},
		{"script missing", "cmd.script", false, "", map[string]any{"name": "salt://scripts/nope.sh"}, false,
			"Unable to cache script salt://scripts/nope.sh from saltenv 'base'", nil},
		{"script missing template", "cmd.script", false, "", map[string]any{"name": "salt://scripts/nope.sh", "template": "jinja"}, false,
			"Unable to cache script salt://scripts/nope.sh from saltenv 'base'", nil},
		{"script bad context", "cmd.script", false, "", map[string]any{"name": "salt://scripts/hello.sh", "context": "x"}, false,
			"Invalidly-formatted 'context' parameter. Must be formed as a dict.", nil},
		{"script fails", "cmd.script", false, "", map[string]any{"name": "salt://scripts/hello.sh", "cwd": "/no/such"}, false,
			`Desired working directory "/no/such" is not available`, nil},
	}
	for _, c := range cases {
		r := run(t, reg, c.test, c.saltenv, c.fun, c.kwargs)
		if state.Value(r.Result) != c.result || r.Comment != c.comment || !reflect.DeepEqual(outcome(r.Changes), c.changes) {
			t.Errorf("%s: got %v %q %#v\nwant %v %q %#v", c.name, state.Value(r.Result), r.Comment, outcome(r.Changes), c.result, c.comment, c.changes)
		}
	}
	if _, err := os.Stat(created); err != nil {
		t.Errorf("cmd.run did not run: %v", err)
	}
	if _, err := os.Stat(notCreated); err == nil {
		t.Errorf("a test-mode or waiting state ran its command")
	}
}
