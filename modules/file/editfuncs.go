package file

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	cmdmod "github.com/brinehq/brine/modules/cmd"
)

// BackupSuffix is a backup argument as Salt reads it: False, None or ""
// for no backup, else the suffix appended to the file's name.
func BackupSuffix(v any) string {
	switch t := v.(type) {
	case nil, bool:
		return ""
	case string:
		return t
	}
	return py.Str(v)
}

// optString is an optional text argument: nil for Python's None.
func optString(in *function.Input, name string) *string {
	v := in.Value(name)
	if v == nil {
		return nil
	}
	s := py.Str(v)
	return &s
}

// optBool is an optional boolean argument: nil for Python's None.
func optBool(in *function.Input, name string) *bool {
	v := in.Value(name)
	if v == nil {
		return nil
	}
	b := py.Truth(v)
	return &b
}

// ReadArgs sets the options of o that file.blockreplace, the execution
// function and the state alike, reads the same way from its arguments:
// append_newline (unset is nil) and the insert_before_match and
// insert_after_match patterns, which must be strings (an EditError
// otherwise, in Salt's words).
func (o *BlockOpts) ReadArgs(in *function.Input) error {
	o.AppendNewline = optBool(in, "append_newline")
	for _, m := range []struct {
		key string
		dst *string
	}{{"insert_before_match", &o.InsertBeforeMatch}, {"insert_after_match", &o.InsertAfterMatch}} {
		switch v := in.Value(m.key).(type) {
		case nil:
		case string:
			*m.dst = v
		default:
			return EditError("RegEx expected in " + m.key + " parameter.")
		}
	}
	return nil
}

// editFuncs are file.replace, file.search, file.sed and
// file.blockreplace.
func editFuncs() []function.Func {
	path := function.Param{Name: "path", Kind: function.String, Required: true}
	anyp := func(n string, def any) function.Param {
		return function.Param{Name: n, Kind: function.Any, Default: def}
	}
	boolp := func(n string, def bool) function.Param {
		return function.Param{Name: n, Kind: function.Bool, Default: def}
	}
	req := func(n string) function.Param { return function.Param{Name: n, Kind: function.Any, Required: true} }
	return []function.Func{
		{
			Name: "file.replace", Doc: "Replace what a regular expression matches in a file (Python's re.sub); the diff, " +
				"or whether it changed without show_changes.",
			Params: []function.Param{path, req("pattern"), req("repl"), {Name: "count", Kind: function.Int, Default: int64(0)},
				anyp("flags", int64(8)), anyp("bufsize", int64(1)), boolp("append_if_not_found", false),
				boolp("prepend_if_not_found", false), anyp("not_found_content", nil), anyp("backup", ".bak"),
				boolp("dry_run", false), boolp("search_only", false), boolp("show_changes", true),
				boolp("ignore_if_missing", false), boolp("preserve_inode", true), boolp("backslash_literal", false)},
			Run: withPath(func(p string, in *function.Input) (any, error) {
				return Replace(p, py.Str(in.Value("pattern")), py.Str(in.Value("repl")), ReplaceOpts{
					Count: int(in.Int("count")), Flags: in.Value("flags"), AppendIfNotFound: in.Bool("append_if_not_found"),
					PrependIfNotFound: in.Bool("prepend_if_not_found"), NotFoundContent: optString(in, "not_found_content"),
					Backup: BackupSuffix(in.Value("backup")), DryRun: in.Bool("dry_run"), SearchOnly: in.Bool("search_only"),
					ShowChanges: in.Bool("show_changes"), IgnoreIfMissing: in.Bool("ignore_if_missing"),
					BackslashLiteral: in.Bool("backslash_literal")})
			}),
		},
		{
			Name: "file.search", ReadOnly: true, Doc: "Whether a regular expression matches in a file (MULTILINE by default).",
			Params: []function.Param{path, req("pattern"), anyp("flags", int64(8)), anyp("bufsize", int64(1)),
				boolp("ignore_if_missing", false), boolp("multiline", false)},
			Run: withPath(func(p string, in *function.Input) (any, error) {
				bits, err := FlagBits(in.Value("flags"))
				if err != nil {
					return nil, err
				}
				if in.Bool("multiline") {
					bits |= 8
				}
				return Replace(p, py.Str(in.Value("pattern")), "", ReplaceOpts{Flags: int64(bits), DryRun: true,
					SearchOnly: true, IgnoreIfMissing: in.Bool("ignore_if_missing")})
			}),
		},
		{
			Name: "file.sed", Doc: "Edit a file in place with sed's s/before/after/flags (limited to lines matching limit); " +
				"False when the file does not exist, else sed's run (pid, retcode, stdout, stderr).",
			Params: []function.Param{path, req("before"), req("after"), anyp("limit", ""), anyp("backup", ".bak"),
				anyp("options", "-r -e"), anyp("flags", "g"), boolp("escape_all", false), boolp("negate_match", false)},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				p, err := absolute(in.Func, in.String("path"))
				if err != nil {
					return nil, err
				}
				return sed(ctx, p, in)
			},
		},
		{
			Name: "file.blockreplace", Doc: "Keep the content of the block between two marker lines of a file; the diff, " +
				"or whether it changed without show_changes.",
			Params: []function.Param{path, anyp("marker_start", "#-- start managed zone --"),
				anyp("marker_end", "#-- end managed zone --"), anyp("content", ""), boolp("append_if_not_found", false),
				boolp("prepend_if_not_found", false), anyp("backup", ".bak"), boolp("dry_run", false),
				boolp("show_changes", true), anyp("append_newline", false), anyp("insert_before_match", nil),
				anyp("insert_after_match", nil)},
			Run: withPath(func(p string, in *function.Input) (any, error) {
				o := BlockOpts{MarkerStart: py.Str(in.Value("marker_start")), MarkerEnd: py.Str(in.Value("marker_end")),
					Content: py.Str(in.Value("content")), AppendIfNotFound: in.Bool("append_if_not_found"),
					PrependIfNotFound: in.Bool("prepend_if_not_found"), Backup: BackupSuffix(in.Value("backup")),
					DryRun: in.Bool("dry_run"), ShowChanges: in.Bool("show_changes")}
				if err := o.ReadArgs(in); err != nil {
					return nil, err
				}
				return Blockreplace(p, o)
			}),
		},
	}
}

// sedEscape is Salt's _sed_esc: quotes and slashes escaped, and with
// escape_all the regular expression characters too.
func sedEscape(s string, all bool) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "'", `'"'"'`), "/", `\/`)
	if all {
		for _, c := range "^.[$()|*+?{" {
			s = strings.ReplaceAll(s, string(c), `\`+string(c))
		}
	}
	return s
}

// sed runs sed -i as Salt's file.sed builds its command line.
func sed(ctx context.Context, p string, in *function.Input) (any, error) {
	if _, err := os.Stat(p); err != nil {
		return false, nil
	}
	all := in.Bool("escape_all")
	before, after := sedEscape(py.Str(in.Value("before")), all), sedEscape(py.Str(in.Value("after")), all)
	limit := sedEscape(py.Str(in.Value("limit")), all)
	args := []string{"-i"}
	if b := BackupSuffix(in.Value("backup")); b != "" {
		args[0] += b
	}
	opts, err := cmdmod.Split(py.Str(in.Value("options")))
	if err != nil {
		return nil, EditError("file.sed: options: " + err.Error())
	}
	args = append(args, opts...)
	expr := ""
	if limit != "" {
		expr = "/" + limit + "/ "
	}
	if in.Bool("negate_match") {
		expr += "!"
	}
	args = append(args, expr+"s/"+before+"/"+after+"/"+py.Str(in.Value("flags")), p)
	cmd := exec.CommandContext(ctx, "sed", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	rc := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		rc = exitErr.ExitCode()
	case err != nil:
		return nil, EditError("file.sed: cannot run sed: " + err.Error())
	}
	pid := 0
	if cmd.Process != nil {
		pid = cmd.Process.Pid
	}
	return map[string]any{"pid": int64(pid), "retcode": int64(rc),
		"stdout": strings.TrimRight(stdout.String(), "\n"), "stderr": strings.TrimRight(stderr.String(), "\n")}, nil
}
