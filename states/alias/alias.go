// Package alias is Salt's alias state module: alias.present and
// alias.absent, mail aliases in the aliases file (/etc/aliases, or the
// agent option aliases.file), with Salt's comments and changes. The file
// is read and written by the aliases execution module, as Salt's states
// call it, so a state and a job edit it the same way.
package alias

import (
	"context"
	"fmt"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/aliases"
	"github.com/brinehq/brine/state"
)

// Module declares the alias states.
func Module(env *modules.Env) []function.Func {
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	return []function.Func{
		{Name: "alias.present", Doc: "Ensure the alias name has target (an address or a list), its line replaced if it differs.",
			Params: []function.Param{name, {Name: "target", Kind: function.Any, Required: true}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return present(ctx, aliases.Of(env), in.String("name"), in.Value("target")), nil
			}},
		{Name: "alias.absent", Doc: "Ensure the alias name is not in the aliases file.",
			Params: []function.Param{name},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return absent(ctx, aliases.Of(env), in.String("name")), nil
			}},
	}
}

// show is Python's format() of a target: a list as its repr.
func show(target any) string {
	if _, ok := target.([]any); ok {
		return py.ReprValue(target)
	}
	return py.Str(target)
}

func present(ctx context.Context, f aliases.File, name string, target any) state.Result {
	has, err := f.Has(name, target)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	if has {
		return state.Succeeded(name, fmt.Sprintf("Alias %s already present", name), nil)
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Alias %s -> %s is set to be added", name, show(target)), nil)
	}
	if err := f.Set(ctx, name, target); err != nil {
		return state.Failed(name, "Failed to set alias %s -> %s: %v", name, show(target), err)
	}
	return state.Succeeded(name, fmt.Sprintf("Set email alias %s -> %s", name, show(target)), map[string]any{"alias": name})
}

func absent(ctx context.Context, f aliases.File, name string) state.Result {
	t, err := f.Target(name)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	if t == "" {
		return state.Succeeded(name, fmt.Sprintf("Alias %s already absent", name), nil)
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Alias %s is set to be removed", name), nil)
	}
	if err := f.Remove(ctx, name); err != nil {
		return state.Failed(name, "Failed to remove alias %s: %v", name, err)
	}
	return state.Succeeded(name, fmt.Sprintf("Removed alias %s", name), map[string]any{"alias": name})
}
