// Package function is brine's registry of named functions: what a reaction's
// `runner.<mod.fun>` and `brine run` call. Functions take Salt-style arguments
// (positional args then keyword args, bound to declared parameters like a
// Python signature), and the registry checks them before a call, so a wrong
// or missing argument is reported with the function and argument names
// instead of failing somewhere inside an integration.
//
// Integrations register their own functions; this package ships the test.*
// functions and event.send.
package function

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
)

// Errors reported by the registry; test them with errors.Is.
var (
	// ErrUnknownFunction: no function of that name is registered.
	ErrUnknownFunction = errors.New("unknown function")
	// ErrMissingArgument: a required parameter got no value.
	ErrMissingArgument = errors.New("missing argument")
	// ErrUnexpectedArgument: a keyword the function does not take, a
	// positional argument beyond its parameters, or a parameter given twice.
	ErrUnexpectedArgument = errors.New("unexpected argument")
	// ErrArgumentType: a value of the wrong type.
	ErrArgumentType = errors.New("wrong argument type")
	// ErrNoEvents: the function fires events but its caller gave it no way to.
	ErrNoEvents = errors.New("no event publisher")
)

// ArgError names the function and argument a call got wrong.
type ArgError struct {
	Func string
	Arg  string
	Err  error // one of the Err* sentinels, possibly wrapped with detail
}

// Error names the function and argument: "ddns.add_host: argument \"ttl\": …".
func (e *ArgError) Error() string {
	if e.Arg == "" {
		return fmt.Sprintf("%s: %v", e.Func, e.Err)
	}
	return fmt.Sprintf("%s: argument %q: %v", e.Func, e.Arg, e.Err)
}

// Unwrap exposes the sentinel for errors.Is.
func (e *ArgError) Unwrap() error { return e.Err }

// Handler runs a function. ctx ends when the caller gives up; in holds the
// checked arguments and the way to fire events caused by this call.
type Handler func(ctx context.Context, in *Input) (any, error)

// Func declares a function: its name, parameters and handler.
type Func struct {
	// Name is Salt's `module.function`, e.g. "ddns.add_host".
	Name string
	// Doc is a one-line description shown by listings.
	Doc    string
	Params []Param
	// VarArgs accepts positional arguments beyond Params (Python's *args);
	// they are in Input.Extra.
	VarArgs bool
	// VarKwargs accepts keywords that are not parameters (Python's
	// **kwargs); they are in Input.ExtraKwargs.
	VarKwargs bool
	// ReadOnly marks a function without side effects, which reaction files
	// may call while they render (salt['mine.get'](...)).
	ReadOnly bool
	// Wheel marks one of Salt's wheel functions (master management: keys),
	// which `wheel.<fun>` reactions may call as well as `runner.<fun>`.
	Wheel bool
	// Out names the outputter Salt prints this function's returns with
	// (a job return's `out`: "highstate" for state functions, "txt" for
	// cmd.run_all's siblings that set it); empty means nested.
	Out string
	Run Handler
}

// Param is one declared parameter.
type Param struct {
	Name     string
	Kind     Kind
	Required bool
	// Default is the value when the argument is absent (nil: absent).
	Default any
	// Aliases are other accepted keyword names, e.g. exec-module spellings
	// of a runner argument.
	Aliases []string
}

// FireFunc fires an event caused by the current call. It is a plain func type
// so that callers can provide one without importing this package.
type FireFunc = func(ctx context.Context, tag string, data map[string]any) error

// Registry holds functions by name. It is safe for concurrent use;
// integrations register while callers call.
type Registry struct {
	mu    sync.RWMutex
	funcs map[string]*Func
}

// New returns an empty registry.
func New() *Registry { return &Registry{funcs: map[string]*Func{}} }

// Register adds f. A name registered twice is an error: two integrations
// claiming one function is a wiring bug to catch at start-up.
func (r *Registry) Register(f Func) error {
	if f.Name == "" || f.Run == nil {
		return fmt.Errorf("register %q: name and handler are required", f.Name)
	}
	seen := map[string]bool{}
	for _, p := range f.Params {
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			if n == "" || seen[n] {
				return fmt.Errorf("register %s: parameter %q empty or declared twice", f.Name, n)
			}
			seen[n] = true
		}
		if p.Kind < Any || p.Kind > Map {
			return fmt.Errorf("register %s: parameter %q has no kind", f.Name, p.Name)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.funcs[f.Name]; ok {
		return fmt.Errorf("register %s: already registered", f.Name)
	}
	r.funcs[f.Name] = &f
	return nil
}

// RegisterAll adds every function of fs, stopping at the first error. Parts
// of brine that provide functions declare them as a list (a Funcs method),
// so that the master registers them to run and `brine reactor test` by
// their signatures only, from the same declarations.
func (r *Registry) RegisterAll(fs []Func) error {
	for _, f := range fs {
		if err := r.Register(f); err != nil {
			return err
		}
	}
	return nil
}

// Lookup returns the function registered under name.
func (r *Registry) Lookup(name string) (*Func, bool) {
	r.mu.RLock()
	f, ok := r.funcs[name]
	r.mu.RUnlock()
	return f, ok
}

// Names lists the registered functions, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.funcs))
	for n := range r.funcs {
		names = append(names, n)
	}
	r.mu.RUnlock()
	sort.Strings(names)
	return names
}

// ReadOnly reports whether name is registered and free of side effects.
func (r *Registry) ReadOnly(name string) bool {
	f, ok := r.Lookup(name)
	return ok && f.ReadOnly
}

// Wheel reports whether name is registered as a wheel function.
func (r *Registry) Wheel(name string) bool {
	f, ok := r.Lookup(name)
	return ok && f.Wheel
}

// Accepts reports whether name declares the parameter param (by name or
// alias; **kwargs do not count), which is how Salt decides to pass `name`.
func (r *Registry) Accepts(name, param string) bool {
	f, ok := r.Lookup(name)
	return ok && f.param(param) != nil
}

// Check binds args and kwargs to name's parameters without calling it, so a
// reaction can be rejected when its file is compiled rather than when it runs.
func (r *Registry) Check(name string, args []any, kwargs map[string]any) error {
	f, ok := r.Lookup(name)
	if !ok {
		return &ArgError{Func: name, Err: ErrUnknownFunction}
	}
	_, err := f.bind(args, kwargs)
	return err
}

// Call checks the arguments and runs the function. fire, when not nil, is
// how the function fires events: the caller decides their cause.
func (r *Registry) Call(ctx context.Context, name string, args []any, kwargs map[string]any, fire FireFunc) (any, error) {
	f, ok := r.Lookup(name)
	if !ok {
		return nil, &ArgError{Func: name, Err: ErrUnknownFunction}
	}
	in, err := f.bind(args, kwargs)
	if err != nil {
		return nil, err
	}
	in.fire = fire
	return f.Run(ctx, in)
}

// bind matches arguments to parameters the way Python binds a call.
func (f *Func) bind(args []any, kwargs map[string]any) (*Input, error) {
	in := &Input{Func: f.Name, args: make(map[string]any, len(f.Params))}
	for i, a := range args {
		if i >= len(f.Params) {
			if !f.VarArgs {
				return nil, &ArgError{Func: f.Name, Err: fmt.Errorf("%w: takes %d positional arguments, got %d",
					ErrUnexpectedArgument, len(f.Params), len(args))}
			}
			in.Extra = append(in.Extra, normalize(a))
			continue
		}
		p := f.Params[i]
		if absentNone(p, a) {
			continue
		}
		in.keepOrder(p.Name, a)
		v, err := p.Kind.convert(normalize(a))
		if err != nil {
			return nil, &ArgError{Func: f.Name, Arg: p.Name, Err: err}
		}
		in.args[p.Name] = v
	}
	keys := slices.Sorted(maps.Keys(kwargs)) // deterministic errors
	for _, k := range keys {
		if k == TemplateCall {
			in.template = kwargs[k] == true
			continue
		}
		p := f.param(k)
		if p == nil {
			if !f.VarKwargs {
				return nil, &ArgError{Func: f.Name, Arg: k, Err: ErrUnexpectedArgument}
			}
			if in.ExtraKwargs == nil {
				in.ExtraKwargs = map[string]any{}
			}
			in.ExtraKwargs[k] = normalize(kwargs[k])
			continue
		}
		if _, dup := in.args[p.Name]; dup {
			return nil, &ArgError{Func: f.Name, Arg: p.Name, Err: fmt.Errorf("%w: given more than once", ErrUnexpectedArgument)}
		}
		if absentNone(*p, kwargs[k]) {
			continue
		}
		in.keepOrder(p.Name, kwargs[k])
		v, err := p.Kind.convert(normalize(kwargs[k]))
		if err != nil {
			return nil, &ArgError{Func: f.Name, Arg: p.Name, Err: err}
		}
		in.args[p.Name] = v
	}
	for _, p := range f.Params {
		if _, ok := in.args[p.Name]; ok {
			continue
		}
		switch {
		case p.Required:
			return nil, &ArgError{Func: f.Name, Arg: p.Name, Err: ErrMissingArgument}
		case p.Default != nil:
			in.args[p.Name] = p.Default
		}
	}
	return in, nil
}

// keepOrder keeps argument name's value as given when it holds ordered
// mappings, for Order and Ordered.
func (in *Input) keepOrder(name string, v any) {
	if !hasOrder(v) {
		return
	}
	if in.ordered == nil {
		in.ordered = map[string]any{}
	}
	in.ordered[name] = v
}

// absentNone says whether v, given for p, counts as not given: None
// (YAML null, `{{ x|json }}` of an undefined setting) for an optional
// parameter of a typed kind. Salt's functions default such parameters to
// None and test `is not None`, so formulas pass None to mean "leave it";
// a parameter of kind Any still sees the null.
func absentNone(p Param, v any) bool {
	return v == nil && !p.Required && p.Kind != Any
}

func (f *Func) param(name string) *Param {
	for i := range f.Params {
		if f.Params[i].Name == name || slices.Contains(f.Params[i].Aliases, name) {
			return &f.Params[i]
		}
	}
	return nil
}
