package modules

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
)

func TestEnvMapping(t *testing.T) {
	reg := function.New()
	answers := map[string]any{"some": map[string]any{"gid": int64(5)}, "none": map[string]any{}, "odd": "text"}
	if err := reg.Register(function.Func{Name: "group.info",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true}},
		Run: func(_ context.Context, in *function.Input) (any, error) {
			return answers[in.String("name")], nil
		}}); err != nil {
		t.Fatal(err)
	}
	env := &Env{Functions: reg}
	for _, c := range []struct {
		env  *Env
		name string
		want map[string]any
		err  string
	}{
		{env, "some", map[string]any{"gid": int64(5)}, ""},
		{env, "none", nil, ""},
		{env, "odd", nil, ""},
		{&Env{}, "some", nil, "group.info: the agent's execution functions are not available"},
		{nil, "some", nil, "group.info: the agent's execution functions are not available"},
	} {
		got, err := c.env.Mapping(context.Background(), "group.info", c.name)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
