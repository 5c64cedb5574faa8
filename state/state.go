// Package state is Salt's state system: SLS files rendered (Jinja, then
// YAML) into high data, top files deciding which SLS an agent applies,
// include/extend/exclude, requisites and ordering, and the state return
// Salt's tools read. The agent uses it for state.apply and its kin; the
// master uses the same engine for orchestration, so one SLS means one
// thing wherever it runs.
//
// State modules (Salt's salt/states) have the same shape as execution
// modules: a modules.Module declaring function.Funcs named
// `<module>.<function>` ("file.managed"), one subpackage of states/ each,
// listed one line each by their user. A state function's handler returns a
// Result; what it needs of the running state (test mode, its id, the
// Jinja renderer for `template: jinja`) it reads with From(ctx).
package state

import (
	"context"
	"fmt"
	"strings"
)

// Result is what one state function returns: Salt's name, changes,
// result and comment.
type Result struct {
	// Name is the state's name argument.
	Name string
	// Changes says what the state changed (or, in test mode, would
	// change): empty when nothing did.
	Changes map[string]any
	// Result is true (done or nothing to do), false (failed) or nil
	// (Salt's None: test mode and a change is pending).
	Result *bool
	// Comment tells a person what happened.
	Comment string
	// Warnings are shown with the result (Salt's `warnings`).
	Warnings []string
}

// Bool returns a pointer to b, for Result.Result.
func Bool(b bool) *bool { return &b }

// Value is a Result.Result as Salt's return holds it: nil (None), true or
// false (py.Str prints it as Salt's outputters do).
func Value(r *bool) any {
	if r == nil {
		return nil
	}
	return *r
}

// Succeeded is a successful result for name with comment.
func Succeeded(name, comment string, changes map[string]any) Result {
	return Result{Name: name, Result: Bool(true), Comment: comment, Changes: changes}
}

// Failed is a failed result for name whose comment is fmt.Sprintf(format,
// args...).
func Failed(name string, format string, args ...any) Result {
	return Result{Name: name, Result: Bool(false), Comment: fmt.Sprintf(format, args...)}
}

// Pending is test mode's answer when a change would be made: result None,
// the changes that would be made, and the comment saying so.
func Pending(name, comment string, changes map[string]any) Result {
	return Result{Name: name, Comment: comment, Changes: changes}
}

// Running is what a state function may know of the state it runs for.
type Running struct {
	// Test is test mode (test=True): report what would change, change
	// nothing, and answer Pending where a change is due.
	Test bool
	// ID is the state's id (Salt's __id__), SLS the SLS it came from
	// (__sls__), Saltenv its environment (__env__).
	ID, SLS, Saltenv string
	// Low is the whole low chunk (Salt's __low__): every argument the
	// state was given, requisites included.
	Low map[string]any
	// ArgOrder is the order the SLS wrote the arguments in (keyword
	// arguments reach a function as a map): module.run's new syntax runs
	// its functions in that order.
	ArgOrder []string
	// Template renders src (a file.managed source or contents) with the
	// named template engine ("jinja"), the state system's context
	// (grains, pillar, salt, opts, saltenv) and the extra context given.
	// name is where src came from, for errors.
	Template func(ctx context.Context, engine, name string, src []byte, context map[string]any) ([]byte, error)
	// Watched holds, for a mod_watch call, the results of the states that
	// triggered it, by their state key.
	Watched map[string]map[string]any
}

type runningKey struct{}

// With returns ctx carrying r, for the state function it is passed to.
func With(ctx context.Context, r *Running) context.Context {
	return context.WithValue(ctx, runningKey{}, r)
}

// From returns the running state of ctx; outside a state run it is an
// empty Running (not test mode) whose Template refuses every template.
func From(ctx context.Context) *Running {
	if r, ok := ctx.Value(runningKey{}).(*Running); ok {
		return r
	}
	return &Running{Template: noTemplate}
}

func noTemplate(context.Context, string, string, []byte, map[string]any) ([]byte, error) {
	return nil, fmt.Errorf("templates are rendered only while a state runs")
}

// Mods reads SLS names as Salt's state functions take them: "a,b", a
// list (whose items may hold commas too), or nothing.
func Mods(v any) []string {
	var items []any
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		items = v
	default:
		items = []any{v}
	}
	var out []string
	for _, x := range items {
		for _, p := range strings.Split(fmt.Sprint(x), ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// Flag reads an on/off option such as test=: a boolean, or a string
// "true", "yes", "on" or "1" (any case), as a command line may give it.
func Flag(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		switch strings.ToLower(v) {
		case "true", "yes", "1", "on":
			return true
		}
	case int64:
		return v != 0
	}
	return false
}
