// Package sys is Salt's sys execution module: what an agent can run —
// list_functions, list_modules, doc and argspec, and of its states
// list_state_functions, list_state_modules, state_doc and state_argspec —
// read from its registries when called, so that every module registered
// is described, this one included.
package sys

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
)

// errNoRegistry is the failure of a call made before the agent registered
// its functions (env.Functions is set once they all are).
var errNoRegistry = errors.New("the agent's functions are not registered yet")

// Module declares the sys functions: those describing the execution
// functions, the same describing the state functions (Salt's
// list_state_functions, state_doc…), and reload_modules.
func Module(env *modules.Env) []function.Func {
	fs := describe(func() *function.Registry { return env.Functions },
		[4]string{"sys.list_functions", "sys.list_modules", "sys.doc", "sys.argspec"}, "functions")
	fs = append(fs, describe(func() *function.Registry { return env.States },
		[4]string{"sys.list_state_functions", "sys.list_state_modules", "sys.state_doc", "sys.state_argspec"}, "state functions")...)
	return append(fs, function.Func{
		Name: "sys.reload_modules", Doc: "True: an agent's modules are built in, there is nothing to reload.",
		Run: func(context.Context, *function.Input) (any, error) { return true, nil },
	})
}

// describe declares the four functions that describe the functions of
// reg (what names[0..3] call them): list the functions, list the modules,
// their documentation and their argspec; what names the kind in the docs.
func describe(reg func() *function.Registry, names [4]string, what string) []function.Func {
	namesOf := func(fun string) ([]string, error) {
		if reg() == nil {
			return nil, errors.New(fun + ": " + errNoRegistry.Error())
		}
		return reg().Names(), nil
	}
	return []function.Func{
		{
			Name: names[0], VarArgs: true, VarKwargs: true, ReadOnly: true,
			Doc: "The " + what + " of the modules named (globs and full names match functions), of all without " +
				"arguments, sorted.",
			Run: func(_ context.Context, in *function.Input) (any, error) {
				all, err := namesOf(in.Func)
				if err != nil {
					return nil, err
				}
				if len(in.Extra) == 0 {
					return py.List(all), nil
				}
				var out []string
				for _, a := range strs(in.Extra) {
					if strings.ContainsAny(a, "*.") {
						out = append(out, filter(all, a)...)
						continue
					}
					for _, n := range all {
						if strings.HasPrefix(n, a+".") {
							out = append(out, n)
						}
					}
				}
				return py.List(sortedUnique(out)), nil
			},
		},
		{
			Name: names[1], VarArgs: true, ReadOnly: true,
			Doc: "The names of the modules of " + what + " (those matching the globs given), sorted.",
			Run: func(_ context.Context, in *function.Input) (any, error) {
				all, err := namesOf(in.Func)
				if err != nil {
					return nil, err
				}
				var out []string
				if len(in.Extra) == 0 {
					for _, n := range all {
						out = append(out, moduleOf(n))
					}
				}
				for _, a := range strs(in.Extra) {
					if strings.Contains(a, "*") {
						for _, n := range filter(all, a) {
							out = append(out, moduleOf(n))
						}
						continue
					}
					for _, n := range all {
						if moduleOf(n) == a {
							out = append(out, a)
						}
					}
				}
				return py.List(sortedUnique(out)), nil
			},
		},
		{
			Name: names[2], VarArgs: true, ReadOnly: true,
			Doc: "The documentation of the " + what + " named (modules, functions or globs), of all without arguments: {function: doc}.",
			Run: func(_ context.Context, in *function.Input) (any, error) {
				all, err := namesOf(in.Func)
				if err != nil {
					return nil, err
				}
				out := map[string]any{}
				add := func(n string) {
					if f, ok := reg().Lookup(n); ok {
						out[n] = f.Doc
					}
				}
				if len(in.Extra) == 0 {
					for _, n := range all {
						add(n)
					}
				}
				for _, a := range strs(in.Extra) {
					if strings.Contains(a, "*") {
						for _, n := range filter(all, a) {
							add(n)
						}
						continue
					}
					// "sys" and "sys." name the sys module, not sysctl.
					prefix := a
					if a != "" && !strings.HasSuffix(a, ".") {
						prefix = a + "."
					}
					for _, n := range all {
						if n == a || strings.HasPrefix(n, prefix) {
							add(n)
						}
					}
				}
				return out, nil
			},
		},
		{
			Name: names[3], ReadOnly: true,
			Doc: "The arguments of the " + what + " of module (a module name, a function or a glob): " +
				"{function: {args, defaults, varargs, kwargs}} as Python's argspec.",
			Params: []function.Param{{Name: "module", Kind: function.String, Default: ""}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				all, err := namesOf(in.Func)
				if err != nil {
					return nil, err
				}
				module := in.String("module")
				var match []string
				if strings.ContainsAny(module, "*.") {
					match = filter(all, module)
				} else {
					for _, n := range all {
						if strings.HasPrefix(n, module+".") {
							match = append(match, n)
						}
					}
				}
				out := map[string]any{}
				for _, n := range match {
					if f, ok := reg().Lookup(n); ok {
						out[n] = Argspec(f)
					}
				}
				return out, nil
			},
		},
	}
}

// Argspec describes f's parameters as Salt's argspec_report does a
// Python function's: args (names, positional order), defaults (those of
// the trailing optional parameters, None for an optional one without a
// default), varargs and kwargs (True, or None when not taken); an empty
// list is None.
func Argspec(f *function.Func) map[string]any {
	out := map[string]any{"args": nil, "defaults": nil, "varargs": nil, "kwargs": nil}
	if len(f.Params) > 0 {
		args := make([]any, len(f.Params))
		first := len(f.Params)
		for i, p := range f.Params {
			args[i] = p.Name
			if !p.Required && first == len(f.Params) {
				first = i
			}
		}
		out["args"] = args
		if first < len(f.Params) {
			defaults := make([]any, 0, len(f.Params)-first)
			for _, p := range f.Params[first:] {
				defaults = append(defaults, p.Default)
			}
			out["defaults"] = defaults
		}
	}
	if f.VarArgs {
		out["varargs"] = true
	}
	if f.VarKwargs {
		out["kwargs"] = true
	}
	return out
}

// filter returns the names matching the glob pattern (Python's fnmatch).
func filter(names []string, pattern string) []string {
	g := fnmatch.Compile(pattern)
	var out []string
	for _, n := range names {
		if g.Match(n) {
			out = append(out, n)
		}
	}
	return out
}

func moduleOf(name string) string {
	mod, _, _ := strings.Cut(name, ".")
	return mod
}

func strs(args []any) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if s, ok := a.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func sortedUnique(ss []string) []string {
	slices.Sort(ss)
	return slices.Compact(ss)
}
