package event

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	eventmod "github.com/brinehq/brine/modules/event"
	"github.com/brinehq/brine/state"
)

type sent struct {
	tag  string
	data map[string]any
}

// setup returns the agent's execution functions (env.Functions) and, apart
// as the agent keeps them, the state functions.
func setup(t *testing.T, fail error) (*function.Registry, *[]sent) {
	t.Helper()
	var got []sent
	env := &modules.Env{ID: "web01", Grains: func() map[string]any { return map[string]any{"os": "Debian", "id": "web01"} },
		FireMaster: func(_ context.Context, tag string, data map[string]any) error {
			if fail != nil {
				return fail
			}
			got = append(got, sent{tag, data})
			return nil
		}}
	if _, err := modules.Registry(env, eventmod.Module); err != nil {
		t.Fatal(err)
	}
	states := function.New()
	if err := states.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	return states, &got
}

func run(t *testing.T, states *function.Registry, test bool, fun string, kwargs map[string]any) state.Result {
	t.Helper()
	ctx := state.With(context.Background(), &state.Running{Test: test})
	out, err := states.Call(ctx, fun, nil, kwargs, nil)
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	return out.(state.Result)
}

func TestSend(t *testing.T) {
	data := map[string]any{"status": "half-way"}
	cases := []struct {
		name    string
		fun     string
		test    bool
		kwargs  map[string]any
		result  any
		comment string
		changes map[string]any
		sent    []sent
	}{
		{"send", "event.send", false, map[string]any{"name": "app/status", "data": data, "extra": "x"}, true, "Event fired",
			map[string]any{"tag": "app/status", "data": data},
			[]sent{{"app/status", map[string]any{"status": "half-way", "extra": "x"}}}},
		{"grains", "event.send", false, map[string]any{"name": "app/g", "with_grains": []any{"os"}}, true, "Event fired",
			map[string]any{"tag": "app/g", "data": nil},
			[]sent{{"app/g", map[string]any{"grains": map[string]any{"os": "Debian"}}}}},
		{"hidden changes", "event.send", false, map[string]any{"name": "app/q", "show_changed": false}, true, "Event fired", nil,
			[]sent{{"app/q", map[string]any{}}}},
		{"test mode", "event.send", true, map[string]any{"name": "app/status", "data": data}, nil, "Event would have been fired",
			map[string]any{"tag": "app/status", "data": data}, nil},
		{"alias", "event.fire_master", false, map[string]any{"name": "app/a"}, true, "Event fired",
			map[string]any{"tag": "app/a", "data": nil}, []sent{{"app/a", map[string]any{}}}},
		{"wait", "event.wait", false, map[string]any{"name": "app/w", "data": data}, true, "", nil, nil},
		{"wait test mode", "event.wait", true, map[string]any{"name": "app/w"}, true, "", nil, nil},
		{"mod_watch", "event.mod_watch", false, map[string]any{"name": "app/w", "data": data, "sfun": "wait"}, true, "Event fired",
			map[string]any{"tag": "app/w", "data": data}, []sent{{"app/w", map[string]any{"status": "half-way"}}}},
		{"bad data", "event.send", false, map[string]any{"name": "app/bad", "data": "text"}, false,
			`event.send: data must be a mapping, got the string "text" (quote JSON as one argument: '{"key": "value"}')`,
			map[string]any{"tag": "app/bad", "data": "text"}, nil},
	}
	for _, c := range cases {
		env, got := setup(t, nil)
		r := run(t, env, c.test, c.fun, c.kwargs)
		var result any
		if r.Result != nil {
			result = *r.Result
		}
		if result != c.result || r.Comment != c.comment || !reflect.DeepEqual(r.Changes, c.changes) || !reflect.DeepEqual(*got, c.sent) {
			t.Errorf("%s: got %v %q %v, sent %v; want %v %q %v, sent %v", c.name, result, r.Comment, r.Changes, *got,
				c.result, c.comment, c.changes, c.sent)
		}
	}
}

func TestSendFails(t *testing.T) {
	env, _ := setup(t, errors.New("outbox full"))
	r := run(t, env, false, "event.send", map[string]any{"name": "app/x"})
	if r.Result == nil || *r.Result || r.Comment != "outbox full" {
		t.Errorf("got %+v", r)
	}
}
