// Package alternatives is Salt's alternatives state module:
// alternatives.install, alternatives.remove, alternatives.auto and
// alternatives.set, through Debian's update-alternatives as Salt's
// alternatives module runs it, with Salt's comments and changes.
//
// The alternative a name points to is read from its link in
// /etc/alternatives, as Salt's show_current reads it; what is registered
// from update-alternatives --display.
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
	"github.com/brinehq/brine/state"
)

type states struct {
	// altdir and admindir are update-alternatives' directories; "" for
	// its own (/etc/alternatives, /var/lib/dpkg/alternatives).
	altdir, admindir string
}

// Module declares the alternatives states.
func Module(*modules.Env) []function.Func { return (&states{}).funcs() }

func (s *states) funcs() []function.Func {
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	path := function.Param{Name: "path", Kind: function.String, Required: true}
	return []function.Func{
		{Name: "alternatives.install", Doc: "Register path as an alternative for name, with link the generic name and priority.",
			Params: []function.Param{name, {Name: "link", Kind: function.String, Required: true}, path,
				{Name: "priority", Kind: function.Int, Required: true}},
			Run: s.install},
		{Name: "alternatives.remove", Doc: "Unregister path as an alternative for name.",
			Params: []function.Param{name, path}, Run: s.remove},
		{Name: "alternatives.auto", Doc: "Put name in auto mode: its alternative of highest priority.",
			Params: []function.Param{name}, Run: s.auto},
		{Name: "alternatives.set", Doc: "Make path, a registered alternative, name's (manual mode).",
			Params: []function.Param{name, path}, Run: s.set},
	}
}

// run runs update-alternatives with args: its output, and whether it
// exited 0.
func (s *states) run(ctx context.Context, args ...string) (stdout, stderr string, ok bool) {
	var opts []string
	if s.altdir != "" {
		opts = append(opts, "--altdir", s.altdir)
	}
	if s.admindir != "" {
		opts = append(opts, "--admindir", s.admindir)
	}
	c := exec.CommandContext(ctx, "update-alternatives", append(opts, args...)...)
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	return strings.TrimRight(o.String(), "\n"), strings.TrimRight(e.String(), "\n"), err == nil
}

// display is Salt's alternatives.display: --display's output, or its
// error.
func (s *states) display(ctx context.Context, name string) string {
	out, errOut, ok := s.run(ctx, "--display", name)
	if !ok && errOut != "" {
		return errOut
	}
	return out
}

// exists is Salt's check_exists: a line of --display starts with path.
func (s *states) exists(ctx context.Context, name, path string) bool {
	out, errOut, ok := s.run(ctx, "--display", name)
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

// current is Salt's show_current: where the name's link in the
// alternatives directory points, "" when there is none.
func (s *states) current(name string) string {
	dir := s.altdir
	if dir == "" {
		dir = "/etc/alternatives"
	}
	p, err := os.Readlink(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return p
}

func (s *states) install(ctx context.Context, in *function.Input) (any, error) {
	name, link, path, prio := in.String("name"), in.String("link"), in.String("path"), in.Int("priority")
	if s.exists(ctx, name, path) {
		return state.Succeeded(name, fmt.Sprintf("Alternative %s for %s is already registered", path, name), nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Alternative will be set for %s to %s with priority %d", name, path, prio), nil), nil
	}
	out, errOut, ok := s.run(ctx, "--install", link, name, path, fmt.Sprint(prio))
	if !ok && errOut != "" {
		out = errOut
	}
	if !s.exists(ctx, name, path) {
		return state.Failed(name, "Alternative for %s not installed: %s", name, out), nil
	}
	comment := fmt.Sprintf("Alternative %s for %s registered with priority %d and not set to default", path, name, prio)
	if s.current(name) == path {
		comment = fmt.Sprintf("Alternative for %s set to path %s with priority %d", name, path, prio)
	}
	return state.Succeeded(name, comment, map[string]any{"name": name, "link": link, "path": path, "priority": prio}), nil
}

func (s *states) remove(ctx context.Context, in *function.Input) (any, error) {
	name, path := in.String("name"), in.String("path")
	if s.exists(ctx, name, path) {
		if state.From(ctx).Test {
			return state.Pending(name, fmt.Sprintf("Alternative for %s will be removed", name), nil), nil
		}
		s.run(ctx, "--remove", name, path)
		if cur := s.current(name); cur != "" {
			return state.Succeeded(name, fmt.Sprintf("Alternative for %s removed. Falling back to path %s", name, cur), map[string]any{"path": cur}), nil
		}
		return state.Succeeded(name, fmt.Sprintf("Alternative for %s removed", name), nil), nil
	}
	if cur := s.current(name); cur != "" {
		return state.Succeeded(name, fmt.Sprintf("Alternative for %s is set to it's default path %s", name, cur), nil), nil
	}
	return state.Failed(name, "Alternative for %s doesn't exist", name), nil
}

func (s *states) auto(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	first, _, _ := strings.Cut(s.display(ctx, name), "\n")
	if strings.HasSuffix(first, " auto mode") {
		return state.Succeeded(name, fmt.Sprintf("%s already in auto mode", name), nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("%s will be put in auto mode", name), nil), nil
	}
	out, errOut, ok := s.run(ctx, "--auto", name)
	if !ok {
		out = errOut
	}
	return state.Succeeded(name, "", map[string]any{"result": out}), nil
}

func (s *states) set(ctx context.Context, in *function.Input) (any, error) {
	name, path := in.String("name"), in.String("path")
	if s.current(name) == path {
		return state.Succeeded(name, fmt.Sprintf("Alternative for %s already set to %s", name, path), nil), nil
	}
	registered := false
	for l := range strings.SplitSeq(s.display(ctx, name), "\n") {
		registered = registered || strings.HasPrefix(l, path)
	}
	if !registered {
		return state.Failed(name, "Alternative %s for %s doesn't exist", path, name), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Alternative for %s will be set to path %s", name, path), nil), nil
	}
	s.run(ctx, "--set", name, path)
	if cur := s.current(name); cur == path {
		return state.Succeeded(name, fmt.Sprintf("Alternative for %s set to path %s", name, cur), map[string]any{"path": cur}), nil
	}
	return state.Succeeded(name, fmt.Sprintf("Alternative for %s not updated", name), nil), nil
}
