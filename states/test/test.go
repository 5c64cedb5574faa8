// Package test is Salt's test state module (salt/states/test.py): states
// that succeed or fail, with or without changes, on demand. SLS authors use
// them to try requisites, failhard and the highstate output without
// touching the machine, so their returns are Salt's to the letter.
package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// pretendChanges is the changes Salt's test states report.
func pretendChanges() map[string]any {
	return map[string]any{"testing": map[string]any{"old": "Unchanged", "new": "Something pretended to change"}}
}

var nameParam = function.Param{Name: "name", Kind: function.String, Required: true}

// Module declares the test state functions.
func Module(*modules.Env) []function.Func {
	return []function.Func{
		{
			Name: "test.nop", Doc: "A state that does nothing and succeeds (any keyword is accepted).",
			Params: []function.Param{nameParam}, VarKwargs: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return state.Succeeded(in.String("name"), "Success!", nil), nil
			},
		},
		{
			Name: "test.succeed_without_changes", Doc: "Succeed without changes (comment: Success! unless given).",
			Params: []function.Param{nameParam}, VarKwargs: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return state.Succeeded(in.String("name"), comment(in, "Success!"), nil), nil
			},
		},
		{
			Name: "test.fail_without_changes", Doc: "Fail without changes (comment: Failure! unless given).",
			Params: []function.Param{nameParam}, VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				c := comment(in, "Failure!")
				if state.From(ctx).Test {
					c = "If we weren't testing, this would be a failure!"
				}
				return state.Failed(in.String("name"), "%s", c), nil
			},
		},
		{
			Name: "test.succeed_with_changes", Doc: "Succeed with pretended changes; None in test mode.",
			Params: []function.Param{nameParam}, VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if state.From(ctx).Test {
					return state.Pending(in.String("name"), "If we weren't testing, this would be successful with changes",
						pretendChanges()), nil
				}
				return state.Succeeded(in.String("name"), comment(in, "Success!"), pretendChanges()), nil
			},
		},
		{
			Name: "test.fail_with_changes", Doc: "Fail with pretended changes; None in test mode.",
			Params: []function.Param{nameParam}, VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if state.From(ctx).Test {
					return state.Pending(in.String("name"), "If we weren't testing, this would be failed with changes",
						pretendChanges()), nil
				}
				r := state.Failed(in.String("name"), "%s", comment(in, "Failure!"))
				r.Changes = pretendChanges()
				return r, nil
			},
		},
		{
			Name: "test.configurable_test_state",
			Doc:  "Return the changes (True, False or 'Random'), result (True, False or 'Random'), comment and warnings asked for.",
			Params: []function.Param{nameParam,
				{Name: "changes", Kind: function.Any, Default: true},
				{Name: "result", Kind: function.Any, Default: true},
				{Name: "comment", Kind: function.String, Default: ""},
				{Name: "warnings", Kind: function.Any}},
			Run: configurable,
		},
		{
			Name: "test.show_notification", Doc: "Succeed with text as the comment.",
			Params: []function.Param{nameParam, {Name: "text", Kind: function.String}}, VarKwargs: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				if in.String("text") == "" {
					return state.Failed(in.String("name"), "Missing required argument text."), nil
				}
				return state.Succeeded(in.String("name"), in.String("text"), nil), nil
			},
		},
		{
			Name: "test.mod_watch", Doc: "What a watch requisite runs: the states watched that changed, or the result, comment and changes given.",
			Params: []function.Param{nameParam, {Name: "sfun", Kind: function.String}}, VarKwargs: true,
			Run: modWatch,
		},
	}
}

// comment is the comment keyword when given (Salt's kwargs.get), else def.
func comment(in *function.Input, def string) string {
	if c, ok := in.ExtraKwargs["comment"]; ok {
		return py.Str(c)
	}
	return def
}

// isRandom is Salt's str(v).lower() == "random".
func isRandom(v any) bool {
	s, ok := v.(string)
	return ok && strings.EqualFold(s, "random")
}

func configurable(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	r := state.Result{Name: name, Comment: in.String("comment")}
	changes := in.Value("changes")
	switch {
	case changes == true:
		r.Changes = pretendChanges()
	case changes == false:
	case isRandom(changes):
		if rand.IntN(2) == 0 {
			r.Changes = pretendChanges()
		}
	default:
		return state.Failed(name, "You have specified the state option 'changes' with invalid arguments. "+
			"It must be either True, False, or 'Random'"), nil
	}
	switch v := in.Value("result").(type) {
	case bool:
		r.Result = state.Bool(v)
	default:
		if !isRandom(v) {
			return state.Failed(name, "You have specified the state option 'result' with invalid arguments. "+
				"It must be either True, False, or 'Random'"), nil
		}
		r.Result = state.Bool(rand.IntN(2) == 0)
	}
	switch w := in.Value("warnings").(type) {
	case nil:
	case string:
		r.Warnings = []string{w}
	case []any:
		for _, x := range w {
			r.Warnings = append(r.Warnings, py.Str(x))
		}
	default:
		return state.Failed(name, "You have specified the state option 'warnings' with invalid arguments. "+
			"It must be a string or a list of strings"), nil
	}
	if state.From(ctx).Test {
		r.Result = nil
		if changes == false {
			r.Result = state.Bool(true)
		}
		if r.Comment == "" {
			r.Comment = "This is a test"
		}
	}
	return r, nil
}

// modWatch lists the watched states that changed ("<state>: <id>"), unless
// the state gives its own result, comment or changes.
func modWatch(ctx context.Context, in *function.Input) (any, error) {
	has := []any{}
	keys := make([]string, 0, len(state.From(ctx).Watched))
	for k := range state.From(ctx).Watched {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ret := state.From(ctx).Watched[k]
		if ch, _ := ret["changes"].(map[string]any); len(ch) == 0 {
			continue
		}
		// A state key is <state>_|-<id>_|-<name>_|-<function>.
		parts := strings.Split(k, "_|-")
		if len(parts) < 2 {
			continue
		}
		has = append(has, fmt.Sprintf("%s: %s", parts[0], parts[1]))
	}
	r := state.Result{Name: in.String("name"), Result: state.Bool(true), Comment: "Watch statement fired.",
		Changes: map[string]any{"Requisites with changes": has}}
	if v, ok := in.ExtraKwargs["result"]; ok {
		if v == nil {
			r.Result = nil
		} else {
			r.Result = state.Bool(py.Truth(v))
		}
	}
	if v, ok := in.ExtraKwargs["comment"]; ok {
		r.Comment = py.Str(v)
	}
	if v, ok := in.ExtraKwargs["changes"]; ok {
		m, isMap := v.(map[string]any)
		if !isMap && v != nil {
			return nil, fmt.Errorf("test.mod_watch: changes must be a mapping, got %s", py.Str(v))
		}
		r.Changes = m
	}
	return r, nil
}
