package test

import (
	"context"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

func call(t *testing.T, test bool, fun string, kwargs map[string]any) state.Result {
	t.Helper()
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	ctx := state.With(context.Background(), &state.Running{Test: test, Watched: map[string]map[string]any{
		"file_|-conf_|-/etc/x_|-managed": {"changes": map[string]any{"diff": "New file"}},
		"cmd_|-quiet_|-true_|-run":       {"changes": map[string]any{}},
	}})
	out, err := reg.Call(ctx, fun, nil, kwargs, nil)
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	return out.(state.Result)
}

func res(b bool) *bool { return &b }

func TestStates(t *testing.T) {
	pretend := map[string]any{"testing": map[string]any{"old": "Unchanged", "new": "Something pretended to change"}}
	cases := []struct {
		fun     string
		test    bool
		kwargs  map[string]any
		result  *bool
		comment string
		changes map[string]any
	}{
		{"test.nop", false, map[string]any{"foo": "bar"}, res(true), "Success!", nil},
		{"test.nop", true, nil, res(true), "Success!", nil},
		{"test.succeed_without_changes", false, map[string]any{"comment": "fine"}, res(true), "fine", nil},
		{"test.succeed_without_changes", true, nil, res(true), "Success!", nil},
		{"test.fail_without_changes", false, nil, res(false), "Failure!", nil},
		{"test.fail_without_changes", true, nil, res(false), "If we weren't testing, this would be a failure!", nil},
		{"test.succeed_with_changes", false, nil, res(true), "Success!", pretend},
		{"test.succeed_with_changes", true, nil, nil, "If we weren't testing, this would be successful with changes", pretend},
		{"test.fail_with_changes", false, map[string]any{"comment": "boom"}, res(false), "boom", pretend},
		{"test.fail_with_changes", true, nil, nil, "If we weren't testing, this would be failed with changes", pretend},
		{"test.configurable_test_state", false, nil, res(true), "", pretend},
		{"test.configurable_test_state", false, map[string]any{"changes": false, "result": false, "comment": "c"}, res(false), "c", nil},
		{"test.configurable_test_state", true, nil, nil, "This is a test", pretend},
		{"test.configurable_test_state", true, map[string]any{"changes": false}, res(true), "This is a test", nil},
		{"test.configurable_test_state", false, map[string]any{"changes": "maybe"}, res(false),
			"You have specified the state option 'changes' with invalid arguments. It must be either True, False, or 'Random'", nil},
		{"test.configurable_test_state", false, map[string]any{"result": "maybe"}, res(false),
			"You have specified the state option 'result' with invalid arguments. It must be either True, False, or 'Random'", nil},
		{"test.show_notification", false, map[string]any{"text": "hello"}, res(true), "hello", nil},
		{"test.show_notification", false, nil, res(false), "Missing required argument text.", nil},
		{"test.mod_watch", false, map[string]any{"sfun": "succeed_without_changes"}, res(true), "Watch statement fired.",
			map[string]any{"Requisites with changes": []any{"file: conf"}}},
		{"test.mod_watch", false, map[string]any{"sfun": "nop", "comment": "custom", "result": false, "changes": map[string]any{}},
			res(false), "custom", map[string]any{}},
	}
	for _, c := range cases {
		kw := map[string]any{"name": "n"}
		for k, v := range c.kwargs {
			kw[k] = v
		}
		r := call(t, c.test, c.fun, kw)
		if r.Name != "n" || !reflect.DeepEqual(r.Result, c.result) || r.Comment != c.comment ||
			(len(r.Changes) > 0 || len(c.changes) > 0) && !reflect.DeepEqual(r.Changes, c.changes) {
			t.Errorf("%s test=%v %v: got %+v (result %v), want result %v comment %q changes %v",
				c.fun, c.test, c.kwargs, r, show(r.Result), show(c.result), c.comment, c.changes)
		}
	}
}

func show(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func TestConfigurableRandomAndWarnings(t *testing.T) {
	seen := map[bool]bool{}
	for range 64 {
		r := call(t, false, "test.configurable_test_state", map[string]any{"name": "n", "changes": "Random", "result": "RANDOM",
			"warnings": "careful"})
		seen[*r.Result] = true
		if !reflect.DeepEqual(r.Warnings, []string{"careful"}) {
			t.Fatalf("warnings %v", r.Warnings)
		}
	}
	if !seen[true] || !seen[false] {
		t.Errorf("Random results seen: %v", seen)
	}
	r := call(t, false, "test.configurable_test_state", map[string]any{"name": "n", "warnings": []any{"a", "b"}})
	if !reflect.DeepEqual(r.Warnings, []string{"a", "b"}) {
		t.Errorf("warnings %v", r.Warnings)
	}
	reg, _ := modules.Registry(&modules.Env{}, Module)
	if _, err := reg.Call(context.Background(), "test.succeed_without_changes", nil, nil, nil); err == nil {
		t.Error("no error without name")
	} else if ae, ok := err.(*function.ArgError); !ok || ae.Arg != "name" {
		t.Errorf("error %v", err)
	}
}
