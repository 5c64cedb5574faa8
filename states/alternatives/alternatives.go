// Package alternatives is Salt's alternatives state module:
// alternatives.install, alternatives.remove, alternatives.auto and
// alternatives.set, over the alternatives execution module's Tool
// (modules/alternatives) as Salt's states call that module, with Salt's
// comments and changes.
package alternatives

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	altmod "github.com/brinehq/brine/modules/alternatives"
	"github.com/brinehq/brine/state"
)

type states struct {
	tool func() altmod.Tool
}

// Module declares the alternatives states.
func Module(env *modules.Env) []function.Func { return (&states{tool: altmod.ToolOf(env)}).funcs() }

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

func (s *states) install(ctx context.Context, in *function.Input) (any, error) {
	t := s.tool()
	name, link, path, prio := in.String("name"), in.String("link"), in.String("path"), in.Int("priority")
	if t.Exists(ctx, name, path) {
		return state.Succeeded(name, fmt.Sprintf("Alternative %s for %s is already registered", path, name), nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Alternative will be set for %s to %s with priority %d", name, path, prio), nil), nil
	}
	out := t.Install(ctx, name, link, path, prio)
	if !t.Exists(ctx, name, path) {
		return state.Failed(name, "Alternative for %s not installed: %s", name, out), nil
	}
	comment := fmt.Sprintf("Alternative %s for %s registered with priority %d and not set to default", path, name, prio)
	if cur, _ := t.Current(name); cur == path {
		comment = fmt.Sprintf("Alternative for %s set to path %s with priority %d", name, path, prio)
	}
	return state.Succeeded(name, comment, map[string]any{"name": name, "link": link, "path": path, "priority": prio}), nil
}

func (s *states) remove(ctx context.Context, in *function.Input) (any, error) {
	t := s.tool()
	name, path := in.String("name"), in.String("path")
	if t.Exists(ctx, name, path) {
		if state.From(ctx).Test {
			return state.Pending(name, fmt.Sprintf("Alternative for %s will be removed", name), nil), nil
		}
		t.Remove(ctx, name, path)
		if cur, ok := t.Current(name); ok {
			return state.Succeeded(name, fmt.Sprintf("Alternative for %s removed. Falling back to path %s", name, cur), map[string]any{"path": cur}), nil
		}
		return state.Succeeded(name, fmt.Sprintf("Alternative for %s removed", name), nil), nil
	}
	if cur, ok := t.Current(name); ok {
		return state.Succeeded(name, fmt.Sprintf("Alternative for %s is set to it's default path %s", name, cur), nil), nil
	}
	return state.Failed(name, "Alternative for %s doesn't exist", name), nil
}

func (s *states) auto(ctx context.Context, in *function.Input) (any, error) {
	t := s.tool()
	name := in.String("name")
	first, _, _ := strings.Cut(t.Display(ctx, name), "\n")
	if strings.HasSuffix(first, " auto mode") {
		return state.Succeeded(name, fmt.Sprintf("%s already in auto mode", name), nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("%s will be put in auto mode", name), nil), nil
	}
	return state.Succeeded(name, "", map[string]any{"result": t.Auto(ctx, name)}), nil
}

func (s *states) set(ctx context.Context, in *function.Input) (any, error) {
	t := s.tool()
	name, path := in.String("name"), in.String("path")
	if cur, _ := t.Current(name); cur == path {
		return state.Succeeded(name, fmt.Sprintf("Alternative for %s already set to %s", name, path), nil), nil
	}
	registered := false
	for l := range strings.SplitSeq(t.Display(ctx, name), "\n") {
		registered = registered || strings.HasPrefix(l, path)
	}
	if !registered {
		return state.Failed(name, "Alternative %s for %s doesn't exist", path, name), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Alternative for %s will be set to path %s", name, path), nil), nil
	}
	t.Set(ctx, name, path)
	if cur, _ := t.Current(name); cur == path {
		return state.Succeeded(name, fmt.Sprintf("Alternative for %s set to path %s", name, cur), map[string]any{"path": cur}), nil
	}
	return state.Succeeded(name, fmt.Sprintf("Alternative for %s not updated", name), nil), nil
}
