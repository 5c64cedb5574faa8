// Package cmd is Salt's cmd execution module: run, run_all, run_stdout,
// run_stderr, retcode, shell, script, script_retcode, which, which_bin and
// has_exec, with Salt's arguments (in Salt's positional order), defaults
// and return shapes.
//
// Every command runs in a process group of its own, so that whatever ends
// it — its timeout, or its job ended by saltutil.kill_job, term_job or the
// job's timeout — ends what it started too, not only the shell: a
// `sleep 600 &` would otherwise outlive the job and hold its output open.
//
// A command's exit status becomes the job's retcode (Salt's
// __context__['retcode']), so that a failing command fails its job while
// the return stays the command's output.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
)

// params are every parameter of the cmd functions; each function lists
// the ones it takes in Salt's positional order.
var params = map[string]function.Param{
	"cmd":                 {Name: "cmd", Kind: function.Any, Required: true},
	"source":              {Name: "source", Kind: function.String, Required: true},
	"args":                {Name: "args", Kind: function.Any},
	"cwd":                 {Name: "cwd", Kind: function.String},
	"stdin":               {Name: "stdin", Kind: function.String},
	"runas":               {Name: "runas", Kind: function.String},
	"group":               {Name: "group", Kind: function.String},
	"shell":               {Name: "shell", Kind: function.String, Default: DefaultShell},
	"python_shell":        {Name: "python_shell", Kind: function.Bool},
	"env":                 {Name: "env", Kind: function.Any},
	"clean_env":           {Name: "clean_env", Kind: function.Bool, Default: false},
	"template":            {Name: "template", Kind: function.Any},
	"rstrip":              {Name: "rstrip", Kind: function.Bool, Default: true},
	"umask":               {Name: "umask", Kind: function.String},
	"output_encoding":     {Name: "output_encoding", Kind: function.String},
	"output_loglevel":     {Name: "output_loglevel", Kind: function.String, Default: "debug"},
	"log_callback":        {Name: "log_callback", Kind: function.Any},
	"hide_output":         {Name: "hide_output", Kind: function.Bool, Default: false},
	"timeout":             {Name: "timeout", Kind: function.Number},
	"reset_system_locale": {Name: "reset_system_locale", Kind: function.Bool, Default: true},
	"ignore_retcode":      {Name: "ignore_retcode", Kind: function.Bool, Default: false},
	"saltenv":             {Name: "saltenv", Kind: function.String},
	"use_vt":              {Name: "use_vt", Kind: function.Bool, Default: false},
	"bg":                  {Name: "bg", Kind: function.Bool, Default: false},
	"password":            {Name: "password", Kind: function.String},
	"encoded_cmd":         {Name: "encoded_cmd", Kind: function.Bool, Default: false},
	"raise_err":           {Name: "raise_err", Kind: function.Bool, Default: false},
	"prepend_path":        {Name: "prepend_path", Kind: function.String},
	"success_retcodes":    {Name: "success_retcodes", Kind: function.Any},
	"success_stdout":      {Name: "success_stdout", Kind: function.Any},
	"success_stderr":      {Name: "success_stderr", Kind: function.Any},
	"stdin_raw_newlines":  {Name: "stdin_raw_newlines", Kind: function.Bool, Default: false},
	"redirect_stderr":     {Name: "redirect_stderr", Kind: function.Bool, Default: false},
}

// keywordOnly are options Salt's functions take through **kwargs (passed
// on to its _run) where they are not named parameters: declared after the
// positional ones so that they are checked like the others.
var keywordOnly = []string{"python_shell", "clean_env", "prepend_path", "rstrip", "hide_output",
	"ignore_retcode", "bg", "saltenv", "stdin_raw_newlines"}

// declare returns the parameters named, then the keyword-only ones the
// function does not name.
func declare(names ...string) []function.Param {
	out := make([]function.Param, 0, len(names)+len(keywordOnly))
	for _, n := range names {
		out = append(out, params[n])
	}
	for _, n := range keywordOnly {
		if !slices.Contains(names, n) {
			out = append(out, params[n])
		}
	}
	return out
}

// withDefault returns ps with name's default changed.
func withDefault(ps []function.Param, name string, def any) []function.Param {
	for i := range ps {
		if ps[i].Name == name {
			ps[i].Default = def
		}
	}
	return ps
}

// Positional parameters of Salt's functions, in order.
var (
	// cmd.run merges stderr into stdout unless told not to.
	runParams = withDefault(declare("cmd", "cwd", "stdin", "runas", "group", "shell", "python_shell", "env",
		"clean_env", "template", "rstrip", "umask", "output_encoding", "output_loglevel", "log_callback",
		"hide_output", "timeout", "reset_system_locale", "ignore_retcode", "saltenv", "use_vt", "redirect_stderr",
		"bg", "password", "encoded_cmd", "raise_err", "prepend_path", "success_retcodes", "success_stdout",
		"success_stderr"), "redirect_stderr", true)
	shellParams = declare("cmd", "cwd", "stdin", "runas", "group", "shell", "env", "clean_env", "template",
		"rstrip", "umask", "output_encoding", "output_loglevel", "log_callback", "hide_output", "timeout",
		"reset_system_locale", "ignore_retcode", "saltenv", "use_vt", "bg", "password", "prepend_path",
		"success_retcodes", "success_stdout", "success_stderr")
	streamParams = declare("cmd", "cwd", "stdin", "runas", "group", "shell", "python_shell", "env", "clean_env",
		"template", "rstrip", "umask", "output_encoding", "output_loglevel", "log_callback", "hide_output",
		"timeout", "reset_system_locale", "ignore_retcode", "saltenv", "use_vt", "password", "prepend_path",
		"success_retcodes", "success_stdout", "success_stderr")
	runAllParams = declare("cmd", "cwd", "stdin", "runas", "group", "shell", "python_shell", "env",
		"clean_env", "template", "rstrip", "umask", "output_encoding", "output_loglevel", "log_callback",
		"hide_output", "timeout", "reset_system_locale", "ignore_retcode", "saltenv", "use_vt", "redirect_stderr",
		"password", "encoded_cmd", "prepend_path", "success_retcodes", "success_stdout", "success_stderr")
	retcodeParams = declare("cmd", "cwd", "stdin", "runas", "group", "shell", "python_shell", "env", "clean_env",
		"template", "umask", "output_encoding", "output_loglevel", "log_callback", "timeout",
		"reset_system_locale", "ignore_retcode", "saltenv", "use_vt", "password", "success_retcodes",
		"success_stdout", "success_stderr")
	scriptParams = declare("source", "args", "cwd", "stdin", "runas", "group", "shell", "python_shell", "env",
		"template", "umask", "output_encoding", "output_loglevel", "log_callback", "hide_output", "timeout",
		"reset_system_locale", "saltenv", "use_vt", "bg", "password", "success_retcodes", "success_stdout",
		"success_stderr")
	scriptRetcodeParams = declare("source", "args", "cwd", "stdin", "runas", "group", "shell", "python_shell",
		"env", "template", "umask", "timeout", "reset_system_locale", "saltenv", "output_encoding",
		"output_loglevel", "log_callback", "use_vt", "password", "success_retcodes", "success_stdout",
		"success_stderr")
)

// Module declares the cmd functions.
func Module(env *modules.Env) []function.Func {
	r := runner{env: env}
	return []function.Func{
		{
			Name: "cmd.run", Params: runParams, VarKwargs: true, Run: r.handler(modeRun),
			Doc: "Run cmd and return its output, stderr merged into stdout (redirect_stderr=True) and trailing " +
				"whitespace stripped; its exit status is the job's retcode. Jobs run it through shell " +
				"(default /bin/sh) unless python_shell=False, which splits it shlex-style and runs it directly.",
		},
		{
			Name: "cmd.shell", Params: shellParams, VarKwargs: true, Run: r.handler(modeShell),
			Doc: "cmd.run through the shell, whoever calls it (python_shell defaults to True).",
		},
		{
			Name: "cmd.run_stdout", Params: streamParams, VarKwargs: true, Run: r.handler(modeStdout),
			Doc: "Run cmd and return its standard output only.",
		},
		{
			Name: "cmd.run_stderr", Params: streamParams, VarKwargs: true, Run: r.handler(modeStderr),
			Doc: "Run cmd and return its standard error only.",
		},
		{
			Name: "cmd.run_all", Params: runAllParams, VarKwargs: true, Run: r.handler(modeAll),
			Doc: "Run cmd and return {pid, retcode, stdout, stderr}.",
		},
		{
			Name: "cmd.retcode", Params: retcodeParams, VarKwargs: true, Run: r.handler(modeRetcode),
			Doc: "Run cmd and return its exit status.",
		},
		{
			Name: "cmd.script", Params: scriptParams, VarKwargs: true, Run: r.script(false),
			Doc: "Fetch source (salt://path from the master, or a local absolute path) to a private temporary " +
				"file, run it with args (a string split shlex-style, or a list) and return {pid, retcode, stdout, stderr}.",
		},
		{
			Name: "cmd.script_retcode", Params: scriptRetcodeParams, VarKwargs: true, Run: r.script(true),
			Doc: "cmd.script, returning the script's exit status.",
		},
		{
			Name: "cmd.which", Doc: "The path of the executable cmd on this agent's PATH (and /bin, /sbin, /usr/bin, " +
				"/usr/sbin, /usr/local/bin), or None.",
			Params: []function.Param{{Name: "cmd", Kind: function.String, Required: true}}, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				if p := Which(in.String("cmd")); p != "" {
					return p, nil
				}
				return nil, nil
			},
		},
		{
			Name: "cmd.which_bin", Doc: "The path of the first of cmds (a list) found as cmd.which does, or None.",
			Params: []function.Param{{Name: "cmds", Kind: function.List, Required: true}}, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				for _, c := range in.List("cmds") {
					if p := Which(py.Str(c)); p != "" {
						return p, nil
					}
				}
				return nil, nil
			},
		},
		{
			Name: "cmd.has_exec", Doc: "Whether the executable cmd is found as cmd.which does.",
			Params: []function.Param{{Name: "cmd", Kind: function.String, Required: true}}, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) { return Which(in.String("cmd")) != "", nil },
		},
	}
}

// Which returns the path of the executable name as Salt's which does: a
// name with a slash if it is executable, else the first match in the
// agent's PATH followed by the usual system directories; "" when none.
func Which(name string) string {
	if name == "" {
		return ""
	}
	if hasSeparator(name) {
		if executable(name) {
			return name
		}
		return ""
	}
	dirs := filepath.SplitList(os.Getenv("PATH"))
	for _, d := range systemDirs {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return search(name, dirs, "")
}

// Run runs argv directly (no shell) as cmd.run does with
// python_shell=False, in a process group ended with ctx, and returns its
// output (stderr merged, trailing whitespace stripped) and exit status.
func Run(ctx context.Context, argv ...string) (string, int, error) {
	if len(argv) == 0 {
		return "", 0, errors.New("empty command")
	}
	c := &command{argv: argv, display: py.ReprList(argv), env: os.Environ(), umask: -1, merge: true}
	res, err := c.run(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("run %s: %w", py.ReprList(argv), err)
	}
	return res.stdout.text(true), res.code, nil
}

// mode is what a cmd function returns of a command.
type mode int

const (
	modeRun mode = iota
	modeShell
	modeStdout
	modeStderr
	modeAll
	modeRetcode
)

// runner runs the cmd functions of one agent.
type runner struct{ env *modules.Env }

func (r runner) handler(m mode) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		o, err := r.options(in, m == modeShell)
		if err != nil {
			return nil, err
		}
		switch m {
		case modeRun, modeShell:
			o.merge = in.Bool("redirect_stderr") || m == modeShell
		case modeAll:
			o.merge = in.Bool("redirect_stderr")
		case modeRetcode:
			o.merge = true
		}
		switch o.cmd.(type) {
		case string, []any:
		default:
			o.cmd = py.Str(o.cmd)
		}
		out, err := r.execute(ctx, o)
		if err != nil {
			return nil, err
		}
		switch m {
		case modeRun, modeShell:
			if in.Bool("raise_err") && out.failed() && !o.ignoreRetcode {
				return nil, fmt.Errorf("%s: %s", o.fun, out.shown(o).stdout)
			}
			return out.shown(o).stdout, nil
		case modeStdout:
			return out.shown(o).stdout, nil
		case modeStderr:
			return out.shown(o).stderr, nil
		case modeRetcode:
			return out.retcode, nil
		}
		return out.shown(o).dict(), nil
	}
}

// options are a call's arguments, checked.
type options struct {
	fun           string
	cmd           any // string or []any
	cwd           string
	stdin         *string
	runas, group  string
	shell         string
	pythonShell   bool
	env           map[string]string
	cleanEnv      bool
	prependPath   string
	resetLocale   bool
	rstrip        bool
	umask         int
	level         slog.Level
	quiet         bool
	timeout       any // int64 or float64 as given, for the message
	ignoreRetcode bool
	hideOutput    bool
	merge         bool
	bg            bool
	pub           bool // called by a job (__pub_jid), which the cmd_*_glob options restrict
	success       []int
	successOut    []string
	successErr    []string
}

// options reads the arguments every cmd function shares.
func (r runner) options(in *function.Input, shell bool) (*options, error) {
	o := &options{fun: in.Func, cmd: in.Value("cmd"), cwd: in.String("cwd"), runas: in.String("runas"),
		group: in.String("group"), shell: in.String("shell"), cleanEnv: in.Bool("clean_env"),
		prependPath: in.String("prepend_path"), resetLocale: in.Bool("reset_system_locale"),
		rstrip: in.Bool("rstrip"), umask: -1, ignoreRetcode: in.Bool("ignore_retcode"),
		hideOutput: in.Bool("hide_output"), bg: in.Bool("bg"), timeout: in.Value("timeout")}
	if t := in.Value("template"); t != nil {
		return nil, fmt.Errorf("%s: template %s is not supported: brine renders no templates", o.fun, py.Str(t))
	}
	if in.Has("stdin") {
		s := in.String("stdin")
		if !in.Bool("stdin_raw_newlines") {
			// Salt turns a "\n" typed on a command line into a newline.
			s = strings.ReplaceAll(s, `\n`, "\n")
		}
		o.stdin = &s
	}
	_, o.pub = in.ExtraKwargs["__pub_jid"]
	switch {
	case in.Has("python_shell"):
		o.pythonShell = in.Bool("python_shell")
	case shell:
		o.pythonShell = true
	default:
		// Salt's _python_shell_default: a job (it has a jid) runs through
		// the shell, a call from another function does not, unless the
		// agent sets cmd_safe: False.
		o.pythonShell = o.pub || !optBool(r.env, "cmd_safe", true)
	}
	var err error
	if o.env, err = envMap(in.Value("env")); err != nil {
		return nil, fmt.Errorf("%s: %w", o.fun, err)
	}
	if in.Has("umask") {
		if o.umask, err = parseUmask(in.String("umask")); err != nil {
			return nil, fmt.Errorf("%s: %w", o.fun, err)
		}
	}
	if o.level, o.quiet, err = logLevel(in.String("output_loglevel")); err != nil {
		r.log().Error("output_loglevel: falling back to info", "function", o.fun, "err", err)
	}
	if in.Has("timeout") && in.Float("timeout") < 0 {
		return nil, fmt.Errorf("%s: timeout must not be negative, got %v", o.fun, py.Str(in.Value("timeout")))
	}
	for _, s := range splitInput(in.Value("success_retcodes")) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%s: success_retcodes must be a list of integers, got %q", o.fun, s)
		}
		o.success = append(o.success, n)
	}
	o.successOut = splitInput(in.Value("success_stdout"))
	o.successErr = splitInput(in.Value("success_stderr"))
	return o, nil
}

// outcome is a command's return data, Salt's run_all dict.
type outcome struct {
	pid            int
	retcode        any // int; nil for a command left running (bg)
	stdout, stderr string
}

func (o outcome) failed() bool { return o.retcode != nil && o.retcode != 0 }

// shown applies hide_output.
func (o outcome) shown(opts *options) outcome {
	if opts.hideOutput {
		o.stdout, o.stderr = "", ""
	}
	return o
}

func (o outcome) dict() map[string]any {
	return map[string]any{"pid": o.pid, "retcode": o.retcode, "stdout": o.stdout, "stderr": o.stderr}
}

// execute runs the command o describes, logs it as Salt does and sets the
// job's retcode.
func (r runner) execute(ctx context.Context, o *options) (outcome, error) {
	c, err := r.prepare(o)
	if err != nil {
		return outcome{}, err
	}
	if err := c.setArgv(o); err != nil {
		return outcome{}, err
	}
	return r.runCommand(ctx, o, c)
}

// runCommand runs c (prepared from o) and makes its outcome.
func (r runner) runCommand(ctx context.Context, o *options, c *command) (outcome, error) {
	log := r.log().With("function", o.fun, "cmd", logName(o.cmd))
	if !o.quiet {
		log.Info("executing command", "runas", o.runas, "group", o.group, "cwd", c.dir, "bg", o.bg)
	}
	res, err := c.run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{}, err
		}
		return outcome{}, fmt.Errorf("%s: Unable to run command %s, reason: %w", o.fun, c.display, err)
	}
	out := outcome{pid: res.pid}
	switch {
	case o.bg:
		modules.SetRetcode(ctx, 0)
		return out, nil
	case res.timedOut:
		// Salt's TimedProcTimeoutError, returned as the output.
		out.retcode, out.stdout = 1, fmt.Sprintf("%s : Timed out after %s seconds", c.display, py.Str(o.timeout))
	default:
		code := res.code
		out.stdout, out.stderr = res.stdout.text(o.rstrip), res.stderr.text(o.rstrip)
		if slices.Contains(o.success, code) ||
			slices.ContainsFunc(o.successOut, func(s string) bool { return strings.Contains(out.stdout, s) }) ||
			slices.ContainsFunc(o.successErr, func(s string) bool { return strings.Contains(out.stderr, s) }) {
			code = 0
		}
		out.retcode = code
	}
	if o.ignoreRetcode {
		modules.SetRetcode(ctx, 0)
	} else {
		modules.SetRetcode(ctx, out.retcode.(int))
	}
	if !o.quiet {
		level := o.level
		if !o.ignoreRetcode && out.failed() {
			level = max(level, slog.LevelError)
			log.Error("command failed", "retcode", out.retcode)
		}
		if out.stdout != "" {
			log.Log(ctx, level, "command output", "stdout", out.stdout)
		}
		if out.stderr != "" {
			log.Log(ctx, level, "command output", "stderr", out.stderr)
		}
	}
	return out, nil
}

// prepare checks what o names (shell, user, directory) and builds the
// command's context: what it runs is set by setArgv.
func (r runner) prepare(o *options) (*command, error) {
	c := &command{umask: o.umask, merge: o.merge, bg: o.bg, stdin: o.stdin}
	if o.bg {
		c.stdin = nil
	}
	if o.timeout != nil {
		c.timeout = time.Duration(toFloat(o.timeout) * float64(time.Second))
	}
	if o.shell != "" && !shellAvailable(o.shell) {
		return nil, fmt.Errorf("%s: The shell %s is not available", o.fun, o.shell)
	}
	home, err := r.credential(o, c)
	if err != nil {
		return nil, err
	}
	if err := r.permitted(o); err != nil {
		return nil, err
	}
	c.dir = o.cwd
	if c.dir == "" {
		// Salt runs in the home of the user the command runs as, or in /
		// when that is not readable.
		c.dir = home
		if c.dir == "" || !readable(c.dir) {
			c.dir = rootDir()
		}
	}
	if fi, err := os.Stat(c.dir); !filepath.IsAbs(c.dir) || err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: Specified cwd '%s' either not absolute or does not exist", o.fun, c.dir)
	}
	c.env = r.environ(o)
	return c, nil
}

// permitted applies the agent's cmd_blacklist_glob and cmd_whitelist_glob
// to commands a job runs, as Salt's _check_avail.
func (r runner) permitted(o *options) error {
	if !o.pub {
		return nil
	}
	line := commandLine(o.cmd)
	match := func(key string) (bool, bool) {
		globs, _ := opt(r.env, key).([]any)
		for _, g := range globs {
			if s, ok := g.(string); ok && fnmatch.Compile(s).Match(line) {
				return true, true
			}
		}
		return false, len(globs) > 0
	}
	black, _ := match("cmd_blacklist_glob")
	white, listed := match("cmd_whitelist_glob")
	if black || (listed && !white) {
		return fmt.Errorf("%s: The shell command \"%s\" is not permitted", o.fun, line)
	}
	return nil
}

// environ is the command's environment: the agent's (unless clean_env),
// Salt's C locale defaults, then env, then the runas user's HOME, USER and
// LOGNAME, then prepend_path.
func (r runner) environ(o *options) []string {
	run := map[string]string{}
	if !o.cleanEnv {
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			run[envKey(k)] = v
		}
		if _, ok := o.env["NOTIFY_SOCKET"]; !ok {
			// The agent's systemd socket is not the command's to use.
			delete(run, "NOTIFY_SOCKET")
		}
	}
	if o.resetLocale && resetsLocale {
		// Salt parses English output: C unless the caller says otherwise.
		for _, k := range []string{"LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY",
			"LC_MESSAGES", "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT",
			"LC_IDENTIFICATION", "LANGUAGE"} {
			if _, ok := o.env[k]; !ok {
				run[k] = "C"
			}
		}
	}
	for k, v := range o.env {
		run[envKey(k)] = v
	}
	if o.prependPath != "" {
		run["PATH"] = o.prependPath + string(os.PathListSeparator) + run["PATH"]
	}
	out := make([]string, 0, len(run))
	for _, k := range slices.Sorted(maps.Keys(run)) {
		out = append(out, k+"="+run[k])
	}
	return out
}

func (r runner) log() *slog.Logger {
	if r.env.Log != nil {
		return r.env.Log
	}
	return slog.New(slog.DiscardHandler)
}

// opt returns an agent option (nil when absent).
func opt(env *modules.Env, key string) any {
	if env.Opts == nil {
		return nil
	}
	return env.Opts()[key]
}

// optBool returns a boolean agent option, def when absent or not a boolean.
func optBool(env *modules.Env, key string, def bool) bool {
	if b, ok := opt(env, key).(bool); ok {
		return b
	}
	return def
}

// envMap reads env: a mapping, or a list of one-key mappings (Salt's
// repack_dictlist); values become strings as Python's str(), None "".
func envMap(v any) (map[string]string, error) {
	out := map[string]string{}
	add := func(m map[string]any) {
		for k, v := range m {
			if v == nil {
				out[k] = ""
			} else {
				out[k] = py.Str(v)
			}
		}
	}
	switch t := v.(type) {
	case nil:
	case map[string]any:
		add(t)
	case []any:
		for _, item := range t {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("env: a list must hold mappings, got %s", py.Str(item))
			}
			add(m)
		}
	default:
		return nil, fmt.Errorf("env must be a mapping of variables, got %s", py.Str(v))
	}
	return out, nil
}

// parseUmask reads an octal umask as Salt does: leading zeros stripped,
// zero refused.
func parseUmask(s string) (int, error) {
	trimmed := strings.TrimLeft(s, "0")
	if trimmed == "" {
		return 0, errors.New("zero umask is not allowed")
	}
	n, err := strconv.ParseUint(trimmed, 8, 32)
	if err != nil || n > 0o777 {
		return 0, fmt.Errorf("invalid umask: '%s'", s)
	}
	return int(n), nil
}

// logLevel reads output_loglevel: Salt's level names; quiet logs nothing.
// An unknown name is an error and info is used, as Salt falls back.
func logLevel(s string) (slog.Level, bool, error) {
	switch strings.ToLower(s) {
	case "quiet":
		return 0, true, nil
	case "all", "garbage", "trace", "profile", "debug":
		return slog.LevelDebug, false, nil
	case "info":
		return slog.LevelInfo, false, nil
	case "warning", "warn":
		return slog.LevelWarn, false, nil
	case "error", "critical":
		return slog.LevelError, false, nil
	}
	return slog.LevelInfo, false, fmt.Errorf("invalid output_loglevel %q (quiet, debug, info, warning, error, critical…)", s)
}

// splitInput reads a list argument given as a list or a comma-separated
// string (Salt's split_input).
func splitInput(v any) []string {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		return py.Strs(t)
	}
	parts := strings.Split(py.Str(v), ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// logName is the command's first word, which is all Salt logs of it: the
// rest may hold secrets.
func logName(cmd any) string {
	switch t := cmd.(type) {
	case []any:
		if len(t) > 0 {
			return strings.TrimSpace(py.Str(t[0]))
		}
		return ""
	}
	fields := strings.Fields(py.Str(cmd))
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// commandLine is the command as one line, as the cmd_*_glob options match it.
func commandLine(cmd any) string {
	if l, ok := cmd.([]any); ok {
		return strings.Join(py.Strs(l), " ")
	}
	return py.Str(cmd)
}

func toFloat(v any) float64 {
	switch t := v.(type) {
	case int64:
		return float64(t)
	case float64:
		return t
	}
	return 0
}
