// Package alternatives is Salt's alternatives execution module: the
// alternatives system (update-alternatives on Debian, alternatives on the
// RedHat family) read and changed as Salt's module does, with its answers
// (False for a name without a link, the tool's error text as a return).
// The alternatives states (states/alternatives) are built on the same
// Tool, as Salt's states call this module.
//
// Formulas ask it what is installed while they render (the php formula's
// salt['alternatives.show_current']('php')), so its read functions answer
// on any machine with /etc/alternatives; like Salt's, the module is not
// available without that directory.
package alternatives

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// DefaultAltdir is where the alternatives' links are.
const DefaultAltdir = "/etc/alternatives"

// Tool is the alternatives system of a machine.
type Tool struct {
	// Altdir and Admindir are the tool's directories; "" for its own
	// (/etc/alternatives, /var/lib/dpkg/alternatives). Tests set them.
	Altdir, Admindir string
	// Command is the tool: "update-alternatives", or "alternatives" on
	// the RedHat family (Salt's _get_cmd).
	Command string
}

// For is the tool of a machine with these grains.
func For(grains map[string]any) Tool {
	if grains["os_family"] == "RedHat" {
		return Tool{Command: "alternatives"}
	}
	return Tool{Command: "update-alternatives"}
}

func (t Tool) altdir() string {
	if t.Altdir != "" {
		return t.Altdir
	}
	return DefaultAltdir
}

// Run runs the tool with args: its output and error output, trailing
// newlines cut, and whether it exited 0.
func (t Tool) Run(ctx context.Context, args ...string) (stdout, stderr string, ok bool) {
	var opts []string
	if t.Altdir != "" {
		opts = append(opts, "--altdir", t.Altdir)
	}
	if t.Admindir != "" {
		opts = append(opts, "--admindir", t.Admindir)
	}
	c := exec.CommandContext(ctx, t.Command, append(opts, args...)...)
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	return strings.TrimRight(o.String(), "\n"), strings.TrimRight(e.String(), "\n"), err == nil
}

// answer is Salt's reply of a command it runs: stdout, or stderr when the
// command failed (and, with needStderr, said why: Salt's display and
// install keep the output of a failure that printed no error).
func (t Tool) answer(ctx context.Context, needStderr bool, args ...string) string {
	out, errOut, ok := t.Run(ctx, args...)
	if !ok && (!needStderr || errOut != "") {
		return errOut
	}
	return out
}

// Display is alternatives.display: --display's output, or its error.
func (t Tool) Display(ctx context.Context, name string) string {
	return t.answer(ctx, true, "--display", name)
}

// Exists is alternatives.check_exists: a line of --display starts with
// path.
func (t Tool) Exists(ctx context.Context, name, path string) bool {
	out, errOut, ok := t.Run(ctx, "--display", name)
	if !ok && errOut != "" {
		return false
	}
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, path) {
			return true
		}
	}
	return false
}

// Current is alternatives.show_current: where name's link in the
// alternatives directory points, and whether there is one.
func (t Tool) Current(name string) (string, bool) {
	p, err := os.Readlink(filepath.Join(t.altdir(), name))
	return p, err == nil
}

// Link is alternatives.show_link on Debian: the generic name (Link:) of
// --query's first block, and whether there is one.
func (t Tool) Link(ctx context.Context, name string) (string, bool) {
	out, errOut, ok := t.Run(ctx, "--query", name)
	if !ok && errOut != "" {
		return "", false
	}
	first, _, _ := strings.Cut(out, "\n\n")
	for l := range strings.SplitSeq(first, "\n") {
		if v, ok := strings.CutPrefix(l, "Link:"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// Install is alternatives.install: --install's output, or its error.
func (t Tool) Install(ctx context.Context, name, link, path string, priority int64) string {
	return t.answer(ctx, true, "--install", link, name, path, fmt.Sprint(priority))
}

// Remove, Auto and Set are alternatives.remove, auto and set: the
// output, or the error when the tool failed.
func (t Tool) Remove(ctx context.Context, name, path string) string {
	return t.answer(ctx, false, "--remove", name, path)
}

// Auto puts name in auto mode (alternatives.auto).
func (t Tool) Auto(ctx context.Context, name string) string {
	return t.answer(ctx, false, "--auto", name)
}

// Set makes path name's alternative (alternatives.set).
func (t Tool) Set(ctx context.Context, name, path string) string {
	return t.answer(ctx, false, "--set", name, path)
}

// orFalse is a string answer, or Salt's False when there is none.
func orFalse(s string, ok bool) any {
	if !ok {
		return false
	}
	return s
}

// ToolOf is the agent's tool, chosen by its grains when called (the
// execution functions and the states use it).
func ToolOf(env *modules.Env) func() Tool {
	return func() Tool {
		if env == nil || env.Grains == nil {
			return For(nil)
		}
		return For(env.Grains())
	}
}

// Module declares the alternatives functions.
func Module(env *modules.Env) []function.Func { return Funcs(ToolOf(env), DefaultAltdir) }

// Funcs declares the functions over the tool tool returns; they are not
// available when altdir is not a directory, as Salt's module does not
// load then.
func Funcs(tool func() Tool, altdir string) []function.Func {
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	path := function.Param{Name: "path", Kind: function.String, Required: true}
	fs := []function.Func{
		{Name: "alternatives.display", ReadOnly: true, Doc: "The alternatives of name (--display), or the tool's error.",
			Params: []function.Param{name},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return tool().Display(ctx, in.String("name")), nil
			}},
		{Name: "alternatives.show_link", ReadOnly: true, Doc: "The generic name (master link) of name's alternatives, or False.",
			Params: []function.Param{name},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return orFalse(tool().Link(ctx, in.String("name"))), nil
			}},
		{Name: "alternatives.show_current", ReadOnly: true, Doc: "The path name's link points to now, or False.",
			Params: []function.Param{name},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return orFalse(tool().Current(in.String("name"))), nil
			}},
		{Name: "alternatives.check_exists", ReadOnly: true, Doc: "Whether path is a registered alternative of name.",
			Params: []function.Param{name, path},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return tool().Exists(ctx, in.String("name"), in.String("path")), nil
			}},
		{Name: "alternatives.check_installed", ReadOnly: true, Doc: "Whether name's link points to path now.",
			Params: []function.Param{name, path},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				cur, ok := tool().Current(in.String("name"))
				return ok && cur == in.String("path"), nil
			}},
		{Name: "alternatives.install", Doc: "Register path as an alternative of name, with link the generic name, at priority.",
			Params: []function.Param{name, {Name: "link", Kind: function.String, Required: true}, path,
				{Name: "priority", Kind: function.Int, Required: true}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return tool().Install(ctx, in.String("name"), in.String("link"), in.String("path"), in.Int("priority")), nil
			}},
		{Name: "alternatives.remove", Doc: "Unregister path as an alternative of name.",
			Params: []function.Param{name, path},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return tool().Remove(ctx, in.String("name"), in.String("path")), nil
			}},
		{Name: "alternatives.auto", Doc: "Put name in auto mode: its alternative of highest priority.",
			Params: []function.Param{name},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return tool().Auto(ctx, in.String("name")), nil
			}},
		{Name: "alternatives.set", Doc: "Make path, a registered alternative, name's (manual mode).",
			Params: []function.Param{name, path},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return tool().Set(ctx, in.String("name"), in.String("path")), nil
			}},
	}
	if st, err := os.Stat(altdir); err != nil || !st.IsDir() {
		for i := range fs {
			n := fs[i].Name
			fs[i].Run = func(context.Context, *function.Input) (any, error) {
				// Salt's reason for not loading the module.
				return nil, fmt.Errorf("%s is not available: Cannot load alternatives module: %s dir not found", n, altdir)
			}
		}
	}
	return fs
}
