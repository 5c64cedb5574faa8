package cmd

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
)

// These tests run the cmd functions on Windows (under wine in CI: its
// cmd.exe, no PowerShell), as Salt's Windows minion runs them.

func newEnv(t *testing.T) *modules.Env {
	t.Helper()
	return &modules.Env{CacheDir: testenv.TempDir(t), Opts: func() map[string]any { return map[string]any{} },
		Files: &modulestest.Files{Dir: testenv.TempDir(t), Tree: map[string]map[string]string{
			"base": {"scripts/hello.bat": "@echo off\r\necho hello %1 %2\r\nexit /b 3\r\n"},
		}}}
}

func call(t *testing.T, fun string, args []any, kwargs map[string]any) (any, int64, error) {
	t.Helper()
	reg, err := modules.Registry(newEnv(t), Module)
	if err != nil {
		t.Fatal(err)
	}
	ctx, rc := modules.WithRetcode(context.Background())
	rc.Store(-1)
	v, err := reg.Call(ctx, fun, args, kwargs, nil)
	return v, rc.Load(), err
}

func TestWindowsRun(t *testing.T) {
	dir := testenv.TempDir(t)
	if err := os.WriteFile(filepath.Join(dir, "marker.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := func(kv ...any) map[string]any {
		m := map[string]any{"__pub_jid": "20250101000000000000"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		fun     string
		args    []any
		kwargs  map[string]any
		want    any
		retcode int64
		err     string
	}{
		{"cmd.exe line", "cmd.run", []any{"echo hello & echo world"}, job(), "hello \r\nworld", 0, ""},
		{"exit code", "cmd.retcode", []any{"exit /b 7"}, job(), 7, 7, ""},
		{"builtin needs the shell", "cmd.run", []any{"dir /b"}, job("python_shell", false), nil, 0,
			"Unable to run command"},
		{"program without the shell", "cmd.run_stdout", []any{"cmd.exe /c echo direct"}, job("python_shell", false),
			"direct", 0, ""},
		{"cwd", "cmd.run", []any{"dir /b"}, job("cwd", dir), "marker.txt", 0, ""},
		{"env", "cmd.run", []any{"echo %BRINE_X%"}, job("env", map[string]any{"BRINE_X": "from env"}), "from env", 0, ""},
		{"stderr apart", "cmd.run_all", []any{"echo out & echo err 1>&2 & exit /b 2"}, job(),
			map[string]any{"retcode": 2, "stdout": "out", "stderr": "err"}, 2, ""},
		{"runas refused", "cmd.run", []any{"echo x"}, job("runas", "Administrator"), nil, 0,
			"runas is not supported on Windows"},
		{"group refused", "cmd.run", []any{"echo x"}, job("group", "Users"), nil, 0,
			"group is not currently available on Windows"},
		{"umask refused", "cmd.run", []any{"echo x"}, job("umask", "022"), nil, 0, "umask is not available on Windows"},
		{"timeout", "cmd.run", []any{"ping -n 30 127.0.0.1"}, job("timeout", 1), "ping -n 30 127.0.0.1 : Timed out after 1 seconds",
			1, ""},
		{"list quoted", "cmd.run_stdout", []any{[]any{"cmd.exe", "/c", "echo", "a b"}}, job("python_shell", false),
			`"a b"`, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, rc, err := call(t, tc.fun, tc.args, tc.kwargs)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%s: err %v, want %q", tc.fun, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.fun, err)
			}
			if m, ok := got.(map[string]any); ok {
				delete(m, "pid")
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s = %#v, want %#v", tc.fun, got, tc.want)
			}
			if rc != tc.retcode {
				t.Errorf("retcode %d, want %d", rc, tc.retcode)
			}
		})
	}
}

// A timeout ends what the command started too (the job object), not only
// cmd.exe: the child ping would otherwise hold the output open.
func TestWindowsTimeoutKillsTree(t *testing.T) {
	start := time.Now()
	got, _, err := call(t, "cmd.run", []any{"ping -n 60 127.0.0.1 & echo never"},
		map[string]any{"__pub_jid": "1", "timeout": 2})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := got.(string); !strings.Contains(s, "Timed out after 2 seconds") {
		t.Errorf("cmd.run = %q, want the timeout message", got)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s: the process tree was not ended", d)
	}
}

func TestWindowsScript(t *testing.T) {
	got, rc, err := call(t, "cmd.script", []any{"salt://scripts/hello.bat", "one two"}, map[string]any{"__pub_jid": "1"})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := got.(map[string]any)
	if m["stdout"] != "hello one two" || m["retcode"] != 3 || rc != 3 {
		t.Errorf("cmd.script = %#v (retcode %d), want hello one two, 3", got, rc)
	}
}

// Wine has a powershell.exe (a stub that runs nothing), real Windows
// PowerShell; pwsh (PowerShell Core) is looked up too, and its absence
// said in Salt's words.
func TestWindowsShellAvailable(t *testing.T) {
	if !shellAvailable("powershell") || !shellAvailable(comspec()) {
		t.Errorf("powershell or cmd.exe not found")
	}
	_, _, err := call(t, "cmd.run", []any{"Get-Date"}, map[string]any{"__pub_jid": "1", "shell": "pwsh"})
	if err == nil || !strings.Contains(err.Error(), "The shell pwsh is not available") {
		t.Errorf("cmd.run shell=pwsh without PowerShell Core: %v, want the shell is not available", err)
	}
}

func TestWindowsArgv(t *testing.T) {
	for _, tc := range []struct {
		cmd     any
		shell   string
		py      bool
		argv    []string
		cmdline string
	}{
		{"echo a & echo b", `C:\Windows\system32\cmd.exe`, true, []string{comspec(), "/c", "echo a & echo b"},
			comspec() + ` /c "echo a & echo b"`},
		{`"C:\Program Files\x.exe" /q`, `C:\Windows\system32\cmd.exe`, false, []string{`C:\Program Files\x.exe`},
			`"C:\Program Files\x.exe" /q`},
		{"Get-Date -Format o", "powershell", true,
			[]string{"powershell", "-NonInteractive", "-NoProfile", "-ExecutionPolicy", "Bypass", "-Command", "Get-Date -Format o"}, ""},
		{[]any{`C:\s\run.ps1`, "a"}, `C:\Windows\system32\cmd.exe`, false,
			[]string{"powershell", "-NonInteractive", "-NoProfile", "-ExecutionPolicy", "Bypass", "-File", `C:\s\run.ps1`, "a"}, ""},
		{[]any{`C:\s\run.bat`, "a b"}, `C:\Windows\system32\cmd.exe`, false,
			[]string{comspec(), "/c", `C:\s\run.bat "a b"`}, comspec() + ` /c "C:\s\run.bat "a b""`},
	} {
		c := &command{}
		if err := c.setArgv(&options{fun: "cmd.run", cmd: tc.cmd, shell: tc.shell, pythonShell: tc.py}); err != nil {
			t.Fatalf("%v: %v", tc.cmd, err)
		}
		if !reflect.DeepEqual(c.argv, tc.argv) || c.cmdline != tc.cmdline {
			t.Errorf("%v: argv %q cmdline %q, want %q %q", tc.cmd, c.argv, c.cmdline, tc.argv, tc.cmdline)
		}
	}
}
