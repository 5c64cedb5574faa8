//go:build !windows

package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
)

func newEnv(t *testing.T) *modules.Env {
	t.Helper()
	return &modules.Env{CacheDir: t.TempDir(), Opts: func() map[string]any { return map[string]any{} },
		Files: &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{
			"base": {"scripts/hello.sh": "#!/bin/sh\necho \"hello $# [$1] [$2]\"\necho oops >&2\nexit 3\n",
				"scripts/plain.sh": "echo no shebang\n"},
			"dev": {"scripts/hello.sh": "#!/bin/sh\necho dev\n"},
		}}}
}

func registry(t *testing.T, env *modules.Env) *function.Registry {
	t.Helper()
	reg, err := modules.Registry(env, Module)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// call calls fun and returns its return, error and the retcode it set
// (-1: none).
func call(reg *function.Registry, fun string, args []any, kwargs map[string]any) (any, int64, error) {
	ctx, rc := modules.WithRetcode(context.Background())
	rc.Store(-1)
	v, err := reg.Call(ctx, fun, args, kwargs, nil)
	return v, rc.Load(), err
}

func TestRunFunctions(t *testing.T) {
	reg := registry(t, newEnv(t))
	dir := t.TempDir()
	job := map[string]any{"__pub_jid": "20250101000000000000"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name    string
		fun     string
		args    []any
		kwargs  map[string]any
		want    any
		retcode int64
		err     string
	}{
		{"merged output", "cmd.run", []any{"echo out; echo err >&2; exit 2"}, job, "out\nerr", 2, ""},
		{"no shell outside a job", "cmd.run", []any{"echo a;b  'c d'"}, nil, "a;b c d", 0, ""},
		{"python_shell=False in a job", "cmd.run", []any{"echo $0"}, with("__pub_jid", "1", "python_shell", false), "$0", 0, ""},
		{"python_shell=True", "cmd.run", []any{"echo $((1+2))"}, with("python_shell", true), "3", 0, ""},
		{"redirect_stderr=False", "cmd.run", []any{"echo out; echo err >&2"}, with("__pub_jid", "1", "redirect_stderr", false), "out", 0, ""},
		{"list", "cmd.run", []any{[]any{"printf", "%s|", "a b", 3}}, nil, "a b|3|", 0, ""},
		{"rstrip", "cmd.run", []any{"printf 'x  \n\n'"}, job, "x", 0, ""},
		{"no rstrip", "cmd.run", []any{"printf 'x  \n'"}, with("__pub_jid", "1", "rstrip", false), "x  \n", 0, ""},
		{"hide_output", "cmd.run", []any{"echo secret; exit 1"}, with("__pub_jid", "1", "hide_output", true), "", 1, ""},
		{"stdin", "cmd.run", []any{"cat"}, with("stdin", `one\ntwo`), "one\ntwo", 0, ""},
		{"stdin raw", "cmd.run", []any{"cat"}, with("stdin", `one\ntwo`, "stdin_raw_newlines", true), `one\ntwo`, 0, ""},
		{"stdin not read", "cmd.run", []any{"true"}, with("stdin", strings.Repeat("x", 1<<20)), "", 0, ""},
		{"env", "cmd.run", []any{"echo $FOO-$NUM-$B-$N"}, with("__pub_jid", "1",
			"env", map[string]any{"FOO": "bar", "NUM": 3, "B": true, "N": nil}), "bar-3-True-", 0, ""},
		{"env list", "cmd.run", []any{"echo $A$B"}, with("__pub_jid", "1",
			"env", []any{map[string]any{"A": "1"}, map[string]any{"B": "2"}}), "12", 0, ""},
		{"clean_env", "cmd.run", []any{"/usr/bin/env"}, with("clean_env", true, "reset_system_locale", false,
			"env", map[string]any{"ONLY": "me"}), "ONLY=me", 0, ""},
		{"locale", "cmd.run", []any{"echo $LC_MESSAGES $LC_TIME"}, with("__pub_jid", "1", "env", map[string]any{"LC_TIME": "fr_FR"}),
			"C fr_FR", 0, ""},
		{"prepend_path", "cmd.run", []any{"echo $PATH"}, with("__pub_jid", "1", "prepend_path", "/opt/x/bin", "clean_env", true,
			"env", map[string]any{"PATH": "/bin"}), "/opt/x/bin:/bin", 0, ""},
		{"cwd", "cmd.run", []any{"pwd"}, with("cwd", dir), dir, 0, ""},
		{"relative cwd", "cmd.run", []any{"pwd"}, with("cwd", "tmp"), nil, -1, "Specified cwd 'tmp' either not absolute or does not exist"},
		{"absent cwd", "cmd.run", []any{"pwd"}, with("cwd", "/nonexistent"), nil, -1, "Specified cwd '/nonexistent'"},
		{"umask", "cmd.run", []any{"umask"}, with("__pub_jid", "1", "umask", "077"), "0077", 0, ""},
		{"umask file", "cmd.run", []any{"touch f && stat -c %a f"}, with("__pub_jid", "1", "umask", "027", "cwd", dir), "640", 0, ""},
		{"zero umask", "cmd.run", []any{"true"}, with("umask", "000"), nil, -1, "zero umask is not allowed"},
		{"bad umask", "cmd.run", []any{"true"}, with("umask", "9"), nil, -1, "invalid umask: '9'"},
		{"bad shell", "cmd.run", []any{"true"}, with("shell", "/nonexistent/sh"), nil, -1, "The shell /nonexistent/sh is not available"},
		{"template", "cmd.run", []any{"true"}, with("template", "jinja"), nil, -1, "template jinja is not supported"},
		{"unknown program", "cmd.run", []any{"no-such-program-x 1"}, nil, nil, -1,
			"Unable to run command ['no-such-program-x', '1'], reason: [Errno 2] No such file or directory: 'no-such-program-x'"},
		{"unclosed quote", "cmd.run", []any{"echo 'x"}, nil, nil, -1, "no closing quotation"},
		{"empty", "cmd.run", []any{"  "}, nil, nil, -1, "no command given"},
		{"missing cmd", "cmd.run", nil, nil, nil, -1, "missing argument"},
		{"bad env", "cmd.run", []any{"true"}, with("env", "FOO=bar"), nil, -1, "env must be a mapping"},
		{"bad timeout", "cmd.run", []any{"true"}, with("timeout", "soon"), nil, -1, "wrong argument type"},
		{"success_retcodes", "cmd.run", []any{"exit 3"}, with("__pub_jid", "1", "success_retcodes", []any{2, 3}), "", 0, ""},
		{"success_retcodes string", "cmd.retcode", []any{"exit 3"}, with("__pub_jid", "1", "success_retcodes", "2, 3"), 0, 0, ""},
		{"success_stdout", "cmd.run", []any{"echo all good; exit 1"}, with("__pub_jid", "1", "success_stdout", []any{"good"}), "all good", 0, ""},
		{"ignore_retcode", "cmd.run", []any{"exit 4"}, with("__pub_jid", "1", "ignore_retcode", true), "", 0, ""},
		{"raise_err", "cmd.run", []any{"echo bad; exit 4"}, with("__pub_jid", "1", "raise_err", true), nil, -1, "cmd.run: bad"},
		{"killed by a signal", "cmd.retcode", []any{"kill -9 $$"}, job, -9, -9, ""},
		{"quiet", "cmd.run", []any{"echo q"}, with("output_loglevel", "quiet"), "q", 0, ""},
		{"unknown loglevel", "cmd.run", []any{"echo q"}, with("output_loglevel", "loud"), "q", 0, ""},

		{"shell", "cmd.shell", []any{"echo $((2*3)) | cat"}, nil, "6", 0, ""},
		{"shell without", "cmd.shell", []any{"echo $((2*3))"}, with("python_shell", false), "$((2*3))", 0, ""},
		{"stdout", "cmd.run_stdout", []any{"echo out; echo err >&2; exit 1"}, job, "out", 1, ""},
		{"stderr", "cmd.run_stderr", []any{"echo out; echo err >&2"}, job, "err", 0, ""},
		{"retcode", "cmd.retcode", []any{"exit 5"}, job, 5, 5, ""},
		{"retcode ignored", "cmd.retcode", []any{"exit 5"}, with("__pub_jid", "1", "ignore_retcode", true), 5, 0, ""},
		{"all", "cmd.run_all", []any{"echo out; echo err >&2; exit 1"}, job,
			map[string]any{"retcode": 1, "stdout": "out", "stderr": "err"}, 1, ""},
		{"all redirected", "cmd.run_all", []any{"echo out; echo err >&2"}, with("__pub_jid", "1", "redirect_stderr", true),
			map[string]any{"retcode": 0, "stdout": "out\nerr", "stderr": ""}, 0, ""},
		{"all hidden", "cmd.run_all", []any{"echo out; echo err >&2"}, with("__pub_jid", "1", "hide_output", true),
			map[string]any{"retcode": 0, "stdout": "", "stderr": ""}, 0, ""},
		{"all timeout", "cmd.run_all", []any{"sleep 5"}, with("timeout", 0.2),
			map[string]any{"retcode": 1, "stdout": "['sleep', '5'] : Timed out after 0.2 seconds", "stderr": ""}, 1, ""},
		{"run timeout", "cmd.run", []any{"sleep 5"}, with("__pub_jid", "1", "timeout", 1),
			"sleep 5 : Timed out after 1 seconds", 1, ""},
	}
	for _, tc := range cases {
		got, rc, err := call(reg, tc.fun, tc.args, tc.kwargs)
		if m, ok := got.(map[string]any); ok {
			if pid, ok := m["pid"].(int); !ok || pid <= 0 {
				t.Errorf("%s: pid %v", tc.name, m["pid"])
			}
			delete(m, "pid")
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) || rc != tc.retcode {
			t.Errorf("%s: %s %q = %#v, %v (retcode %d); want %#v (retcode %d)", tc.name, tc.fun, tc.args, got, err, rc, tc.want, tc.retcode)
		}
	}
}

// alive reports whether the process pid exists (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// childPid reads the pid a command wrote to file.
func childPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the command did not write its child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d outlived its command", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	reg := registry(t, newEnv(t))
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	got, rc, err := call(reg, "cmd.run_all", []any{"sleep 300 & echo $! > " + pidFile + "; echo started; wait"},
		map[string]any{"python_shell": true, "timeout": 1})
	if err != nil || rc != 1 {
		t.Fatalf("cmd.run_all = %v, %v (retcode %d)", got, err, rc)
	}
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("the timeout of 1s took %v", el)
	}
	m := got.(map[string]any)
	if !strings.HasSuffix(m["stdout"].(string), " : Timed out after 1 seconds") || m["retcode"] != 1 {
		t.Errorf("return %v", m)
	}
	waitGone(t, childPid(t, pidFile))
}

func TestKilledJobKillsTheProcessGroup(t *testing.T) {
	reg := registry(t, newEnv(t))
	old := killGrace
	killGrace = 200 * time.Millisecond
	defer func() { killGrace = old }()
	for _, tc := range []struct{ name, script string }{
		{"term", "sleep 300 & echo $! > %s; wait"},
		// The shell ignores SIGTERM: SIGKILL follows after the grace.
		{"kill", "trap '' TERM; sleep 300 & echo $! > %s; wait; wait"},
	} {
		pidFile := filepath.Join(t.TempDir(), "pid")
		ctx, cancel := context.WithCancelCause(context.Background())
		stopped := errors.New("the job was killed")
		go func() {
			for !fileExists(pidFile) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel(stopped)
		}()
		start := time.Now()
		_, err := reg.Call(ctx, "cmd.run", []any{fmt.Sprintf(tc.script, pidFile)}, map[string]any{"python_shell": true}, nil)
		if !errors.Is(err, stopped) {
			t.Errorf("%s: err = %v, want the job's cause", tc.name, err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("%s: stopping took %v", tc.name, el)
		}
		waitGone(t, childPid(t, pidFile))
	}
}

func fileExists(p string) bool {
	b, err := os.ReadFile(p)
	return err == nil && len(b) > 0 && b[len(b)-1] == '\n'
}

func TestOutputIsCapped(t *testing.T) {
	old := maxOutput
	maxOutput = 1000
	defer func() { maxOutput = old }()
	reg := registry(t, newEnv(t))
	got, rc, err := call(reg, "cmd.run_all", []any{"head -c 300000 /dev/zero | tr '\\0' a; head -c 5000 /dev/zero | tr '\\0' b >&2"},
		map[string]any{"python_shell": true})
	if err != nil || rc != 0 {
		t.Fatal(got, err, rc)
	}
	m := got.(map[string]any)
	if want := strings.Repeat("a", 1000) + "\n[output truncated: 299000 bytes not kept]"; m["stdout"] != want {
		t.Errorf("stdout %.60q… (%d bytes)", m["stdout"], len(m["stdout"].(string)))
	}
	if want := strings.Repeat("b", 1000) + "\n[output truncated: 4000 bytes not kept]"; m["stderr"] != want {
		t.Errorf("stderr %.60q…", m["stderr"])
	}
}

func TestBackground(t *testing.T) {
	reg := registry(t, newEnv(t))
	marker := filepath.Join(t.TempDir(), "done")
	start := time.Now()
	got, rc, err := call(reg, "cmd.run_all", []any{"sleep 0.3; touch " + marker}, map[string]any{"python_shell": true, "bg": true})
	if err != nil || rc != 0 || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("bg: %v, %v, retcode %d after %v", got, err, rc, time.Since(start))
	}
	if m := got.(map[string]any); m["retcode"] != nil || m["stdout"] != "" || m["pid"].(int) <= 0 {
		t.Errorf("bg return %v", m)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !fileExistsAny(marker) {
		if time.Now().After(deadline) {
			t.Fatal("the background command did not run")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fileExistsAny(p string) bool { _, err := os.Stat(p); return err == nil }

func TestJobsRestrictedByGlobs(t *testing.T) {
	env := newEnv(t)
	env.Opts = func() map[string]any {
		return map[string]any{"cmd_blacklist_glob": []any{"rm *"}, "cmd_whitelist_glob": []any{"echo *", "rm *"}}
	}
	reg := registry(t, env)
	job := map[string]any{"__pub_jid": "1"}
	if got, _, err := call(reg, "cmd.run", []any{"echo ok"}, job); got != "ok" || err != nil {
		t.Errorf("whitelisted: %v, %v", got, err)
	}
	for _, c := range []string{"rm -rf /tmp/x", "ls /"} {
		if _, _, err := call(reg, "cmd.run", []any{c}, job); err == nil || !strings.Contains(err.Error(), `The shell command "`+c+`" is not permitted`) {
			t.Errorf("%s: err = %v", c, err)
		}
	}
	// A call from another function has no jid: the globs do not apply.
	if got, _, err := call(reg, "cmd.run", []any{"ls /"}, nil); err != nil || got == "" {
		t.Errorf("not a job: %v, %v", got, err)
	}
}

func TestRunas(t *testing.T) {
	reg := registry(t, newEnv(t))
	if _, _, err := call(reg, "cmd.run", []any{"id"}, map[string]any{"runas": "no-such-user-x"}); err == nil ||
		!strings.Contains(err.Error(), "User 'no-such-user-x' is not available") {
		t.Errorf("unknown user: %v", err)
	}
	if _, _, err := call(reg, "cmd.run", []any{"id"}, map[string]any{"group": "no-such-group-x"}); err == nil ||
		!strings.Contains(err.Error(), "Group 'no-such-group-x' is not available") {
		t.Errorf("unknown group: %v", err)
	}
	testenv.NeedRoot(t, "runas needs root: run these tests as root")
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("runas needs the user nobody: %v", err)
	}
	got, rc, err := call(reg, "cmd.run", []any{"echo $(id -u):$(id -g) $HOME $USER; pwd; umask"},
		map[string]any{"runas": "nobody", "python_shell": true, "umask": "022"})
	want := fmt.Sprintf("%s:%s %s nobody\n", nobody.Uid, nobody.Gid, nobody.HomeDir)
	if err != nil || rc != 0 || !strings.HasPrefix(got.(string), want) || !strings.HasSuffix(got.(string), "\n0022") {
		t.Errorf("runas nobody = %q, %v; want %q…", got, err, want)
	}
	if got, _, err := call(reg, "cmd.run", []any{"touch /root/brine-runas-test"}, map[string]any{"runas": "nobody"}); err != nil ||
		!strings.Contains(got.(string), "Permission denied") {
		t.Errorf("runas nobody writing /root: %v, %v", got, err)
	}
	if got, _, err := call(reg, "cmd.run", []any{"id -g"}, map[string]any{"group": "nogroup"}); err != nil {
		t.Errorf("group: %v", err)
	} else if g, err := user.LookupGroup("nogroup"); err == nil && got != g.Gid {
		t.Errorf("group nogroup: id -g = %v, want %s", got, g.Gid)
	}
}

func TestScript(t *testing.T) {
	env := newEnv(t)
	reg := registry(t, env)
	local := filepath.Join(t.TempDir(), "local.sh")
	if err := os.WriteFile(local, []byte("#!/bin/sh\necho \"local $*\"; pwd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	job := map[string]any{"__pub_jid": "1"}
	cases := []struct {
		name    string
		fun     string
		args    []any
		kwargs  map[string]any
		want    any
		retcode int64
		err     string
	}{
		{"salt:// with args", "cmd.script", []any{"salt://scripts/hello.sh", `a "b c"`}, job,
			map[string]any{"retcode": 3, "stdout": "hello 2 [a] [b c]", "stderr": "oops"}, 3, ""},
		{"list args", "cmd.script", []any{"salt://scripts/hello.sh", []any{"x", 1}}, nil,
			map[string]any{"retcode": 3, "stdout": "hello 2 [x] [1]", "stderr": "oops"}, 3, ""},
		{"saltenv", "cmd.script", []any{"salt://scripts/hello.sh"}, map[string]any{"saltenv": "dev"},
			map[string]any{"retcode": 0, "stdout": "dev", "stderr": ""}, 0, ""},
		{"saltenv query", "cmd.script", []any{"salt://scripts/hello.sh?saltenv=dev"}, nil,
			map[string]any{"retcode": 0, "stdout": "dev", "stderr": ""}, 0, ""},
		{"no shebang through the shell", "cmd.script", []any{"salt://scripts/plain.sh"}, job,
			map[string]any{"retcode": 0, "stdout": "no shebang", "stderr": ""}, 0, ""},
		{"local", "cmd.script", []any{local, "z"}, map[string]any{"cwd": "/"},
			map[string]any{"retcode": 0, "stdout": "local z\n/", "stderr": ""}, 0, ""},
		{"hide_output", "cmd.script", []any{"salt://scripts/hello.sh"}, map[string]any{"hide_output": true},
			map[string]any{"retcode": 3, "stdout": "", "stderr": ""}, 3, ""},
		{"ignore_retcode", "cmd.script", []any{"salt://scripts/hello.sh"}, map[string]any{"ignore_retcode": true},
			map[string]any{"retcode": 3, "stdout": "hello 0 [] []", "stderr": "oops"}, 0, ""},
		{"retcode", "cmd.script_retcode", []any{"salt://scripts/hello.sh"}, job, 3, 3, ""},
		{"timeout", "cmd.script_retcode", []any{"salt://scripts/hello.sh", "x"}, map[string]any{"timeout": 5}, 3, 3, ""},
		{"absent salt://", "cmd.script", []any{"salt://scripts/nope.sh"}, nil, nil, -1, "unable to cache salt://scripts/nope.sh"},
		{"absent local", "cmd.script", []any{"/nonexistent/x.sh"}, nil, nil, -1, "unable to cache /nonexistent/x.sh"},
		{"relative", "cmd.script", []any{"x.sh"}, nil, nil, -1, `source "x.sh": want a salt:// URL or an absolute local path`},
		{"http", "cmd.script", []any{"https://example.com/x.sh"}, nil, nil, -1, "want a salt:// URL"},
		{"template", "cmd.script", []any{"salt://scripts/hello.sh"}, map[string]any{"template": "jinja"}, nil, -1, "not supported"},
		{"bad args", "cmd.script", []any{"salt://scripts/hello.sh", "'x"}, nil, nil, -1, "args: no closing quotation"},
		{"missing source", "cmd.script", nil, nil, nil, -1, "missing argument"},
	}
	for _, tc := range cases {
		got, rc, err := call(reg, tc.fun, tc.args, tc.kwargs)
		if m, ok := got.(map[string]any); ok {
			delete(m, "pid")
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) || rc != tc.retcode {
			t.Errorf("%s: %s %q = %#v, %v (retcode %d); want %#v (retcode %d)", tc.name, tc.fun, tc.args, got, err, rc, tc.want, tc.retcode)
		}
	}
	// Every run's private copy is gone; the directory holding them is the agent's only.
	dir := filepath.Join(env.CacheDir, "scripts")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 0 {
		t.Errorf("%s after the scripts: %v, %v", dir, ents, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v", dir, fi.Mode(), err)
	}
	// Without a master there is no salt://.
	env.Files = nil
	if _, _, err := call(reg, "cmd.script", []any{"salt://scripts/hello.sh"}, nil); err == nil || !strings.Contains(err.Error(), "salt:// needs a master") {
		t.Errorf("without a master: %v", err)
	}
}

func TestScriptSeesItsPrivateCopy(t *testing.T) {
	env := newEnv(t)
	env.Files.(*modulestest.Files).Tree["base"]["scripts/self.sh"] = "#!/bin/sh\nstat -c '%a %U' \"$0\" \"$(dirname \"$0\")\"\n"
	reg := registry(t, env)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := call(reg, "cmd.script", []any{"salt://scripts/self.sh", "-"}, nil)
	if m, _ := got.(map[string]any); err != nil || m["stdout"] != "500 "+me.Username+"\n700 "+me.Username {
		t.Errorf("script copy: %v, %v", got, err)
	}
	testenv.NeedRoot(t, "runas needs root: run these tests as root")
	got, _, err = call(reg, "cmd.script", []any{"salt://scripts/self.sh", "-"}, map[string]any{"runas": "nobody"})
	if m, _ := got.(map[string]any); err != nil || m["stdout"] != "500 nobody\n700 nobody" || m["retcode"] != 0 {
		t.Errorf("script as nobody: %v, %v", got, err)
	}
}

func TestWhich(t *testing.T) {
	reg := registry(t, newEnv(t))
	sh, _, _ := call(reg, "cmd.which", []any{"sh"}, nil)
	if p, ok := sh.(string); !ok || !filepath.IsAbs(p) || filepath.Base(p) != "sh" {
		t.Errorf("cmd.which sh = %v", sh)
	}
	// Without a PATH the system directories are searched, /bin first.
	t.Setenv("PATH", "")
	sh = "/bin/sh"
	cases := []struct {
		fun  string
		args []any
		want any
	}{
		{"cmd.which", []any{"sh"}, sh},
		{"cmd.which", []any{"/bin/sh"}, "/bin/sh"},
		{"cmd.which", []any{"/etc/passwd"}, nil},
		{"cmd.which", []any{"no-such-program-x"}, nil},
		{"cmd.has_exec", []any{"sh"}, true},
		{"cmd.has_exec", []any{"no-such-program-x"}, false},
		{"cmd.which_bin", []any{[]any{"no-such-program-x", "sh"}}, sh},
		{"cmd.which_bin", []any{[]any{"no-such-program-x"}}, nil},
	}
	for _, tc := range cases {
		if got, _, err := call(reg, tc.fun, tc.args, nil); err != nil || got != tc.want {
			t.Errorf("%s %v = %v, %v; want %v", tc.fun, tc.args, got, err, tc.want)
		}
	}
}

func TestRun(t *testing.T) {
	out, code, err := Run(context.Background(), "sh", "-c", "echo out; echo err >&2; exit 7")
	if err != nil || out != "out\nerr" || code != 7 {
		t.Errorf("Run = %q, %d, %v", out, code, err)
	}
	if _, _, err := Run(context.Background(), "no-such-program-x"); err == nil {
		t.Error("Run of an absent program succeeded")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, _, err := Run(ctx, "sleep", "30"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run past its context: %v", err)
	}
}

func TestCmdSafeFalseRunsThroughTheShell(t *testing.T) {
	env := newEnv(t)
	env.Opts = func() map[string]any { return map[string]any{"cmd_safe": false} }
	if got, _, err := call(registry(t, env), "cmd.run", []any{"echo $((1+2))"}, nil); got != "3" || err != nil {
		t.Errorf("cmd_safe: False: %v, %v", got, err)
	}
}
