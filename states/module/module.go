// Package module is Salt's module state module (salt/states/module.py):
// module.run calls execution functions from an SLS, for what no state
// function covers, and module.wait does it only when a watched state
// changed. Both of Salt's syntaxes are read:
//
//   - the legacy one, `name: test.echo` with the function's arguments as the
//     state's own (m_name, m_fun, m_names, m_state and m_saltenv for the
//     names the state system keeps; args and kwargs for *args and
//     **kwargs), changes {"ret": <return>};
//   - the new one, each function a key (`- test.echo: [text: hi]`, a list
//     whose mappings are keywords and whose other items are positional),
//     changes {"test.echo": <return>}.
//
// The functions run through the agent's registry, so their arguments are
// checked as they are for a job.
package module

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// Module declares the module state functions.
func Module(env *modules.Env) []function.Func {
	name := function.Param{Name: "name", Kind: function.String}
	run := func(ctx context.Context, in *function.Input) (any, error) { return runState(ctx, env, in), nil }
	wait := func(_ context.Context, in *function.Input) (any, error) {
		return state.Succeeded(in.String("name"), "", nil), nil
	}
	return []function.Func{
		{
			Name: "module.run", Doc: "Run execution functions: name (legacy syntax) or one key per function (new syntax).",
			Params: []function.Param{name}, VarKwargs: true, Run: run,
		},
		{
			Name: "module.wait", Doc: "Run the function only when a watched state changed (through module.mod_watch).",
			Params: []function.Param{name}, VarKwargs: true, Run: wait,
		},
		{
			Name: "module.watch", Doc: "Salt's alias of module.wait.",
			Params: []function.Param{name}, VarKwargs: true, Run: wait,
		},
		{
			Name: "module.mod_watch", Doc: "What a watch requisite runs: module.run with the state's arguments.",
			Params: []function.Param{name}, VarKwargs: true, Run: run,
		},
	}
}

// stateKeys are what the state system adds to a call, not function names.
var stateKeys = []string{"name", "__reqs__", "sfun"}

// runState tells the two syntaxes apart as Salt does: any keyword without
// a dot, or none at all, is the legacy syntax.
func runState(ctx context.Context, env *modules.Env, in *function.Input) state.Result {
	kwargs := maps.Clone(in.ExtraKwargs)
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	for _, k := range stateKeys {
		delete(kwargs, k)
	}
	legacy := len(kwargs) == 0
	for k := range kwargs {
		if !strings.Contains(k, ".") {
			legacy = true
		}
	}
	if legacy {
		return legacyRun(ctx, env, in.String("name"), kwargs)
	}
	return newRun(ctx, env, in.String("name"), kwargs)
}

// newRun runs each function named by a key (a ":suffix" lets one function
// run twice), in the order the SLS wrote them (sorted when that is not
// known, as for state.single).
func newRun(ctx context.Context, env *modules.Env, name string, kwargs map[string]any) state.Result {
	var funcs []string
	for _, k := range state.From(ctx).ArgOrder {
		if _, ok := kwargs[k]; ok && !slices.Contains(funcs, k) {
			funcs = append(funcs, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(kwargs)) {
		if !slices.Contains(funcs, k) {
			funcs = append(funcs, k)
		}
	}
	var missing, tests []string
	for _, f := range funcs {
		fun, _, _ := strings.Cut(f, ":")
		if _, ok := env.Functions.Lookup(fun); !ok {
			missing = append(missing, fun)
		} else if state.From(ctx).Test {
			tests = append(tests, fun)
		}
	}
	if len(missing) > 0 || len(tests) > 0 {
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, fmt.Sprintf("Unavailable function%s: %s.", plural(missing), strings.Join(missing, ", ")))
		}
		if len(tests) > 0 {
			parts = append(parts, fmt.Sprintf("Function%s %s to be executed.", plural(tests), strings.Join(tests, ", ")))
		}
		r := state.Result{Name: name, Comment: strings.Join(parts, " ")}
		if len(missing) > 0 {
			r.Result = state.Bool(false)
		}
		return r
	}
	changes := map[string]any{}
	var failures, successes []string
	for _, f := range funcs {
		fun, _, _ := strings.Cut(f, ":")
		args, kw := splitArgs(kwargs[f])
		ret, err := env.Functions.Call(ctx, fun, args, kw, nil)
		switch {
		case err != nil:
			failures = append(failures, fmt.Sprintf("'%s' failed: %s", f, callError(err)))
		case !succeeded(ret):
			if m, ok := ret.(map[string]any); ok {
				c, has := m["comment"]
				if !has {
					c = "(error message N/A)"
				}
				failures = append(failures, fmt.Sprintf("'%s' failed: %s", f, py.Str(c)))
			} else {
				failures = append(failures, fmt.Sprintf("'%s': %s", f, py.Str(ret)))
			}
		default:
			var shown any = ret
			if m, ok := ret.(map[string]any); ok {
				shown = "Success"
				if c, has := m["comment"]; has {
					shown = c
				}
			}
			successes = append(successes, fmt.Sprintf("%s: %s", f, py.Str(shown)))
			changes[f] = ret
		}
	}
	return state.Result{Name: name, Changes: changes, Result: state.Bool(len(failures) == 0),
		Comment: strings.Join(append(failures, successes...), ", ")}
}

// plural is what Salt's message puts after "Function": its
// `len(x) > 1 or ""`, which prints True for several.
func plural(fs []string) string {
	if len(fs) > 1 {
		return "True"
	}
	return ""
}

// splitArgs reads a new-syntax argument list: mappings are keywords, other
// items positional arguments; a single value is one positional argument.
func splitArgs(v any) ([]any, map[string]any) {
	var items []any
	switch t := v.(type) {
	case nil:
	case []any:
		items = t
	default:
		items = []any{t}
	}
	var args []any
	kwargs := map[string]any{}
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			maps.Copy(kwargs, m)
		} else {
			args = append(args, it)
		}
	}
	return args, kwargs
}

// callError words an argument error as Salt does where it has its own
// words.
func callError(err error) string {
	var ae *function.ArgError
	if errors.As(err, &ae) && errors.Is(err, function.ErrMissingArgument) {
		return "Missing arguments: " + ae.Arg
	}
	return err.Error()
}

// hidden are the parameter names the state system keeps for itself: a
// legacy call gives them to the function as m_<name>.
var hidden = []string{"name", "fun", "names", "state", "saltenv"}

// legacyRun calls the function name with the state's keywords bound to its
// parameters, as Salt's _legacy_run.
func legacyRun(ctx context.Context, env *modules.Env, name string, kwargs map[string]any) state.Result {
	f, ok := env.Functions.Lookup(name)
	if !ok {
		return state.Failed(name, "Module function %s is not available", name)
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Module function %s is set to execute", name), nil)
	}
	call := map[string]any{}
	var missing []string
	for _, p := range f.Params {
		key := p.Name
		if slices.Contains(hidden, p.Name) {
			key = "m_" + p.Name
		}
		if v, given := kwargs[key]; given {
			call[p.Name] = v
		} else if p.Required {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		return state.Failed(name, "The following arguments are missing: %s", strings.Join(missing, " "))
	}
	var args []any
	if f.VarArgs {
		if v, ok := kwargs["args"]; ok {
			l, isList := v.([]any)
			if !isList {
				return state.Failed(name, "'args' must be a list.")
			}
			// Extra positional arguments come after every parameter,
			// so the parameters are given by position up to the last
			// one that has a value.
			var pos []any
			for _, p := range f.Params {
				v, has := call[p.Name]
				if !has {
					v, has = p.Default, p.Default != nil
				}
				if !has {
					break
				}
				pos = append(pos, v)
				delete(call, p.Name)
			}
			args = append(pos, l...)
		}
	}
	if f.VarKwargs {
		if v, ok := kwargs["kwargs"]; ok {
			m, isMap := v.(map[string]any)
			if !isMap {
				return state.Failed(name, "'kwargs' must be a dict.")
			}
			for k, x := range m {
				if _, taken := call[k]; !taken {
					call[k] = x
				}
			}
		}
	}
	ret, err := env.Functions.Call(ctx, name, args, call, nil)
	if err != nil {
		return state.Failed(name, "Module function %s threw an exception. Exception: %v", name, err)
	}
	return state.Result{Name: name, Changes: map[string]any{"ret": ret}, Result: state.Bool(succeeded(ret)),
		Comment: fmt.Sprintf("Module function %s executed", name)}
}

// succeeded is Salt's _get_result: a mapping with a non-zero retcode
// fails, a boolean is the result, a mapping's result key (at any depth)
// set to False fails.
func succeeded(ret any) bool {
	switch t := ret.(type) {
	case bool:
		return t
	case map[string]any:
		if rc, ok := t["retcode"]; ok && !isZero(rc) {
			return false
		}
		if r, ok := t["result"].(bool); ok {
			return r
		}
		return !falseResult(t)
	}
	return true
}

func isZero(v any) bool {
	switch n := v.(type) {
	case int64:
		return n == 0
	case int:
		return n == 0
	case float64:
		return n == 0
	case nil:
		return false
	}
	return false
}

// falseResult reports a result key set to False anywhere in m.
func falseResult(m map[string]any) bool {
	for k, v := range m {
		if k == "result" && v == false {
			return true
		}
		if sub, ok := v.(map[string]any); ok && falseResult(sub) {
			return true
		}
	}
	return false
}
