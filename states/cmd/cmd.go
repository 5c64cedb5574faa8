// Package cmd is Salt's cmd state module (salt/states/cmd.py): commands
// and scripts run as states. A command's run is a change (its pid, retcode,
// stdout and stderr), and a non-zero exit status fails the state, unless
// the command reports its own state (stateful: True). Running is the
// execution module's job (cmd.run_all and cmd.script through the agent's
// registry), so a command runs the same way from a job or a state; the
// state system decides beforehand whether it runs at all (onlyif, unless,
// creates are its requisites, not these functions' arguments).
package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	cmdmod "github.com/brinehq/brine/modules/cmd"
	"github.com/brinehq/brine/state"
)

// runParams are Salt's cmd.run (and cmd.wait) parameters.
var runParams = []function.Param{
	{Name: "name", Kind: function.String, Required: true},
	{Name: "cwd", Kind: function.String},
	{Name: "root", Kind: function.String},
	{Name: "runas", Kind: function.String},
	{Name: "shell", Kind: function.String},
	{Name: "env", Kind: function.Any},
	{Name: "prepend_path", Kind: function.String},
	{Name: "stateful", Kind: function.Any, Default: false},
	{Name: "output_loglevel", Kind: function.String, Default: "debug"},
	{Name: "hide_output", Kind: function.Bool, Default: false},
	{Name: "timeout", Kind: function.Number},
	{Name: "ignore_timeout", Kind: function.Bool, Default: false},
	{Name: "use_vt", Kind: function.Bool, Default: false},
	{Name: "success_retcodes", Kind: function.Any},
	{Name: "success_stdout", Kind: function.Any},
	{Name: "success_stderr", Kind: function.Any},
}

// scriptParams are Salt's cmd.script (and cmd.wait_script) parameters.
var scriptParams = []function.Param{
	{Name: "name", Kind: function.String, Required: true},
	{Name: "source", Kind: function.String},
	{Name: "template", Kind: function.String},
	{Name: "cwd", Kind: function.String},
	{Name: "runas", Kind: function.String},
	{Name: "password", Kind: function.String},
	{Name: "shell", Kind: function.String},
	{Name: "env", Kind: function.Any},
	{Name: "stateful", Kind: function.Any, Default: false},
	{Name: "timeout", Kind: function.Number},
	{Name: "use_vt", Kind: function.Bool, Default: false},
	{Name: "output_loglevel", Kind: function.String, Default: "debug"},
	{Name: "hide_output", Kind: function.Bool, Default: false},
	{Name: "defaults", Kind: function.Any},
	{Name: "context", Kind: function.Any},
	{Name: "success_retcodes", Kind: function.Any},
	{Name: "success_stdout", Kind: function.Any},
	{Name: "success_stderr", Kind: function.Any},
}

// Module declares the cmd state functions.
func Module(env *modules.Env) []function.Func {
	s := states{env: env, self: function.New()}
	nothing := func(_ context.Context, in *function.Input) (any, error) {
		return state.Succeeded(in.String("name"), "", nil), nil
	}
	funcs := []function.Func{
		{
			Name: "cmd.run", Doc: "Run the command name through the shell; non-zero exit fails the state.",
			Params: runParams, VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) { return s.run(ctx, in), nil },
		},
		{
			Name: "cmd.script", Doc: "Download the script source (salt:// or a local path), render it (template: jinja) and run it with args.",
			Params: scriptParams, VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) { return s.script(ctx, in), nil },
		},
		{
			Name: "cmd.wait", Doc: "Run the command only when a watched state changed (through cmd.mod_watch).",
			Params: runParams, VarKwargs: true, Run: nothing,
		},
		{
			Name: "cmd.watch", Doc: "Salt's alias of cmd.wait.",
			Params: runParams, VarKwargs: true, Run: nothing,
		},
		{
			Name: "cmd.wait_script", Doc: "Run the script only when a watched state changed (through cmd.mod_watch).",
			Params: scriptParams, VarKwargs: true, Run: nothing,
		},
		{
			Name: "cmd.mod_watch", Doc: "What a watch requisite runs: the command (sfun run, wait, watch) or script (script, wait_script).",
			Params:    []function.Param{{Name: "name", Kind: function.String, Required: true}, {Name: "sfun", Kind: function.String}},
			VarKwargs: true,
			Run:       func(ctx context.Context, in *function.Input) (any, error) { return s.modWatch(ctx, in) },
		},
	}
	// Two fixed, distinct names: registering them cannot fail.
	_ = s.self.RegisterAll(funcs[:2])
	return funcs
}

// states runs the cmd states of one agent; self holds cmd.run and
// cmd.script, to which mod_watch binds the watching state's arguments.
type states struct {
	env  *modules.Env
	self *function.Registry
}

// stateful reads the stateful argument: True, or a list whose first item
// names test_name, the command to run in test mode.
func stateful(v any) (bool, string) {
	if l, ok := v.([]any); ok && len(l) > 0 {
		if m, ok := l[0].(map[string]any); ok {
			if tn, ok := m["test_name"]; ok {
				return true, py.Str(tn)
			}
		}
		return true, ""
	}
	return v == true, ""
}

// validEnv is Salt's check of env: absent, a list or a mapping.
func validEnv(v any) bool {
	switch v.(type) {
	case nil, []any, map[string]any:
		return true
	}
	return false
}

// common are the arguments the states pass on as given.
var common = []string{"cwd", "runas", "shell", "env", "output_loglevel", "hide_output", "timeout", "use_vt",
	"success_retcodes", "success_stdout", "success_stderr"}

// callArgs builds the execution function's keywords: the state's own
// arguments that were given, and the extra keywords the function takes
// (Salt passes its **kwargs down; the function's own check keeps out the
// state system's and unknown ones).
func (s states) callArgs(in *function.Input, fun string, names ...string) map[string]any {
	kw := map[string]any{"python_shell": true}
	for _, n := range names {
		if in.Has(n) && in.Value(n) != nil {
			kw[n] = in.Value(n)
		}
	}
	for k, v := range in.ExtraKwargs {
		if s.env.Functions.Accepts(fun, k) && !strings.HasPrefix(k, "__") {
			if _, set := kw[k]; !set {
				kw[k] = v
			}
		}
	}
	return kw
}

// invocation is what run and script share about a call: the name they
// answer under (in test mode, the stateful test_name when given), the
// test_name, whether the command speaks Salt's stateful protocol and
// whether the run is a test.
type invocation struct {
	name, testName string
	stateful, test bool
}

func begin(ctx context.Context, in *function.Input) invocation {
	c := invocation{name: in.String("name"), test: state.From(ctx).Test}
	c.stateful, c.testName = stateful(in.Value("stateful"))
	if c.test && c.testName != "" {
		c.name = c.testName
	}
	return c
}

// wouldRun is the test-mode answer when no test_name runs instead.
func (c invocation) wouldRun(comment string, changes map[string]any) state.Result {
	r := state.Pending(c.name, comment, changes)
	if c.stateful {
		return reinterpret(r)
	}
	return r
}

// badCwd is the failure for a cwd that is not a directory (bad is true
// then); no cwd is fine.
func badCwd(name, cwd string) (r state.Result, bad bool) {
	if cwd == "" {
		return r, false
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return state.Failed(name, "Desired working directory \"%s\" is not available", cwd), true
	}
	return r, false
}

// call runs fun (cmd.run_all or cmd.script) and gives its mapping.
func (s states) call(ctx context.Context, fun string, kw map[string]any) (map[string]any, error) {
	out, err := s.env.Functions.Call(ctx, fun, nil, kw, nil)
	if err != nil {
		return nil, err
	}
	all, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s returned %T, not its mapping", fun, out)
	}
	return all, nil
}

// result is the state's answer for what the command did (all, the
// mapping of cmd.run_all or cmd.script): succeeded on retcode 0, read by
// the stateful protocol when asked for, and pending in test mode when it
// says it changed something.
func (c invocation) result(all map[string]any, comment string) state.Result {
	r := state.Result{Name: c.name, Changes: all, Result: state.Bool(isZero(all["retcode"])), Comment: comment}
	if c.stateful {
		r = reinterpret(r)
	}
	if c.test && isZero(all["retcode"]) && len(r.Changes) > 0 {
		r.Result = nil
	}
	return r
}

func (s states) run(ctx context.Context, in *function.Input) state.Result {
	c := begin(ctx, in)
	name, test := c.name, c.test
	if !validEnv(in.Value("env")) {
		return state.Failed(name, "Invalidly-formatted 'env' parameter. See documentation.")
	}
	if test && c.testName == "" {
		return c.wouldRun(fmt.Sprintf("Command \"%s\" would have been executed", name), map[string]any{"cmd": name})
	}
	if in.String("root") != "" {
		return state.Failed(name, "root: running a command in a chroot (cmd.run_chroot) is not supported")
	}
	if r, bad := badCwd(name, in.String("cwd")); bad {
		return r
	}
	kw := s.callArgs(in, "cmd.run_all", append(slices.Clone(common), "prepend_path")...)
	kw["cmd"] = name
	all, err := s.call(ctx, "cmd.run_all", kw)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	// A nohup'ed command may outlive its timeout on purpose.
	if in.Bool("ignore_timeout") && isOne(all["retcode"]) && strings.Contains(py.Str(all["stdout"]), "Timed out after") {
		all["retcode"] = 0
	}
	return c.result(all, fmt.Sprintf("Command \"%s\" run", name))
}

func (s states) script(ctx context.Context, in *function.Input) state.Result {
	c := begin(ctx, in)
	name, test := c.name, c.test
	if !validEnv(in.Value("env")) {
		return state.Failed(name, "Invalidly-formatted 'env' parameter. See documentation.")
	}
	tmplCtx := map[string]any{}
	for _, k := range []string{"defaults", "context"} {
		switch v := in.Value(k).(type) {
		case nil:
		case map[string]any:
			maps.Copy(tmplCtx, v)
		default:
			if py.Truth(v) {
				return state.Failed(name, "Invalidly-formatted '%s' parameter. Must be formed as a dict.", k)
			}
		}
	}
	source := in.String("source")
	words := strings.Fields(name)
	if source == "" && len(words) > 0 {
		source = words[0]
	}
	kw := s.callArgs(in, "cmd.script", common...)
	if _, ok := kw["args"]; !ok && len(words) > 1 {
		_, rest, _ := strings.Cut(strings.TrimSpace(name), " ")
		kw["args"] = rest
	}
	if test && c.testName == "" {
		return c.wouldRun(fmt.Sprintf("Command '%s' would have been executed", name), nil)
	}
	if r, bad := badCwd(name, in.String("cwd")); bad {
		return r
	}
	saltenv := state.From(ctx).Saltenv
	if saltenv == "" {
		saltenv = "base"
	}
	kw["saltenv"] = saltenv
	kw["source"] = source
	if tmpl := in.String("template"); tmpl != "" {
		rendered, cleanup, err := s.render(ctx, tmpl, source, saltenv, tmplCtx)
		if err != nil {
			if errors.Is(err, modules.ErrNoFile) {
				return state.Failed(name, "Unable to cache script %s from saltenv '%s'", source, saltenv)
			}
			return state.Failed(name, "%v", err)
		}
		defer cleanup()
		kw["source"] = rendered
	}
	all, err := s.call(ctx, "cmd.script", kw)
	if err != nil {
		if errors.Is(err, modules.ErrNoFile) {
			return state.Failed(name, "Unable to cache script %s from saltenv '%s'", source, saltenv)
		}
		return state.Failed(name, "%v", err)
	}
	return c.result(all, fmt.Sprintf("Command '%s' run", name))
}

// render fetches the script source, renders it with the template engine
// and writes it under the agent's cache, returning its path and what
// removes it: cmd.script then runs the rendered script like any local one.
func (s states) render(ctx context.Context, engine, source, saltenv string, tmplCtx map[string]any) (string, func(), error) {
	local := source
	if rest, ok := strings.CutPrefix(source, "salt://"); ok {
		path, query, _ := strings.Cut(rest, "?")
		if q, err := url.ParseQuery(query); err == nil && q.Get("saltenv") != "" {
			saltenv = q.Get("saltenv")
		}
		if s.env.Files == nil {
			return "", nil, fmt.Errorf("%s: salt:// needs a master (this agent runs without one)", source)
		}
		var err error
		if local, err = s.env.Files.Cache(ctx, path, saltenv); err != nil {
			return "", nil, fmt.Errorf("unable to cache %s: %w", source, err)
		}
	}
	src, err := os.ReadFile(local)
	if err != nil {
		return "", nil, fmt.Errorf("script %s: %w", source, err)
	}
	out, err := state.From(ctx).Template(ctx, engine, source, src, tmplCtx)
	if err != nil {
		return "", nil, fmt.Errorf("render %s: %w", source, err)
	}
	base := os.TempDir()
	if s.env.CacheDir != "" {
		base = filepath.Join(s.env.CacheDir, "scripts")
		if err := os.MkdirAll(base, 0o700); err != nil {
			return "", nil, fmt.Errorf("script directory: %w", err)
		}
	}
	dir, err := os.MkdirTemp(base, "rendered-")
	if err != nil {
		return "", nil, fmt.Errorf("script directory: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	path := filepath.Join(dir, filepath.Base(strings.SplitN(source, "?", 2)[0]))
	if err := atomicfile.WriteBytes(path, out, 0o600); err != nil {
		cleanup()
		return "", nil, err
	}
	return path, cleanup, nil
}

func (s states) modWatch(ctx context.Context, in *function.Input) (state.Result, error) {
	sfun := in.String("sfun")
	var fun string
	switch sfun {
	case "wait", "run", "watch":
		fun = "cmd.run"
	case "wait_script", "script":
		fun = "cmd.script"
	default:
		return state.Failed(in.String("name"), "cmd.%s does not work with the watch requisite, please use cmd.wait or cmd.wait_script",
			sfun), nil
	}
	kwargs := maps.Clone(in.ExtraKwargs)
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	kwargs["name"] = in.String("name")
	out, err := s.self.Call(ctx, fun, nil, kwargs, nil)
	if err != nil {
		return state.Failed(in.String("name"), "%v", err), nil
	}
	return out.(state.Result), nil
}

func isZero(v any) bool {
	switch n := v.(type) {
	case int:
		return n == 0
	case int64:
		return n == 0
	case float64:
		return n == 0
	}
	return false
}

func isOne(v any) bool {
	switch n := v.(type) {
	case int:
		return n == 1
	case int64:
		return n == 1
	case float64:
		return n == 1
	}
	return false
}

// reinterpret is Salt's stateful protocol: the command's stdout, JSON or
// a last line of key=value words, says whether it changed anything
// (changed=yes) and the comment; only then are there changes.
func reinterpret(r state.Result) state.Result {
	ret := r.Changes
	r.Changes = nil
	r.Comment = ""
	out := py.Str(ret["stdout"])
	if ret["stdout"] == nil || out == "" {
		if se, _ := ret["stderr"].(string); se != "" {
			r.Comment = se
		}
		return r
	}
	fail := func(msg string) state.Result {
		r.Comment = msg
		r.Result = state.Bool(false)
		return r
	}
	data := map[string]any{}
	isJSON := false
	idx := -1
	var decoded any
	if err := json.Unmarshal([]byte(out), &decoded); err == nil {
		m, ok := decoded.(map[string]any)
		if !ok {
			return fail("script JSON output must be a JSON object (e.g., {})!")
		}
		data, isJSON = m, true
	} else {
		last := out
		idx = strings.LastIndex(strings.TrimRight(out, " \t\r\n\f\v"), "\n")
		if idx != -1 {
			last = out[idx+1:]
		}
		words, err := cmdmod.Split(last)
		for _, w := range words {
			k, v, ok := strings.Cut(w, "=")
			if !ok || strings.Contains(v, "=") {
				err = errors.New("not a name=value pair")
				break
			}
			data[k] = v
		}
		if err != nil {
			r = fail("Failed parsing script output! Stdout must be JSON or a line of name=value pairs.")
			r.Changes = ret
			return r
		}
	}
	changedVal, has := data["changed"]
	if !has {
		changedVal = "no"
	}
	changed, err := isTrue(changedVal)
	if err != nil {
		return fail(err.Error())
	}
	if c, ok := data["comment"]; ok {
		r.Comment = py.Str(c)
		delete(data, "comment")
	}
	if changed {
		for k, v := range ret {
			if _, ok := data[k]; !ok {
				data[k] = v
			}
		}
		if isJSON {
			data["stdout"] = ""
		} else {
			data["stdout"] = pySliceTo(py.Str(data["stdout"]), idx)
		}
		r.Changes = data
	}
	return r
}

// pySliceTo is Python's s[:n], a negative n counting from the end (Salt
// slices stdout with the index of its last newline, -1 when there is none).
func pySliceTo(s string, n int) string {
	if n < 0 {
		n += len(s)
		if n < 0 {
			n = 0
		}
	}
	if n > len(s) {
		n = len(s)
	}
	return s[:n]
}

// isTrue is Salt's _is_true: yes/true/1 and no/false/0, any case.
func isTrue(v any) (bool, error) {
	s := strings.ToLower(py.Str(v))
	switch {
	case py.Truth(v) && (s == "true" || s == "yes" || s == "1"):
		return true, nil
	case s == "false" || s == "no" || s == "0":
		return false, nil
	}
	//lint:ignore ST1005 Salt's words, the state's comment.
	return false, fmt.Errorf("Failed parsing boolean value: %s", py.Str(v))
}
