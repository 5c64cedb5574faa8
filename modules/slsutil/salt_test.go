package slsutil

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/brinehq/brine/modules"
)

// TestSaltReturns: each want is what Salt 3006.6's function returns for
// the same arguments.
func TestSaltReturns(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{Grains: func() map[string]any { return map[string]any{} }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ fun, args, kwargs, want string }{
		{"slsutil.merge", `[{"a": 1, "l": [1, 2], "d": {"x": 1, "y": [1]}}, {"b": 2, "l": [2, 3], "d": {"y": [2], "z": 3}}]`, `{}`, `{"a": 1, "l": [2, 3], "d": {"x": 1, "y": [2], "z": 3}, "b": 2}`},
		{"slsutil.merge", `[{"a": 1, "l": [1, 2], "d": {"x": 1, "y": [1]}}, {"b": 2, "l": [2, 3], "d": {"y": [2], "z": 3}}]`, `{"strategy": "list"}`, `{"a": 1, "l": [[1, 2], [2, 3]], "d": [{"x": 1, "y": [1]}, {"y": [2], "z": 3}]}`},
		{"slsutil.merge", `[{"a": 1, "l": [1, 2], "d": {"x": 1, "y": [1]}}, {"b": 2, "l": [2, 3], "d": {"y": [2], "z": 3}}]`, `{"strategy": "overwrite"}`, `{"a": 1, "l": [2, 3], "d": {"y": [2], "z": 3}, "b": 2}`},
		{"slsutil.merge_all", `[[{"a": 1, "l": [1, 2], "d": {"x": 1, "y": [1]}}, {"b": 2, "l": [2, 3], "d": {"y": [2], "z": 3}}, {"c": 3}]]`, `{}`, `{"a": 1, "l": [2, 3], "d": {"x": 1, "y": [2], "z": 3}, "b": 2, "c": 3}`},
		{"slsutil.update", `[{"a": 1, "l": [1, 2], "d": {"x": 1, "y": [1]}}, {"b": 2, "l": [2, 3], "d": {"y": [2], "z": 3}}]`, `{"merge_lists": true}`, `{"a": 1, "l": [1, 2, 3], "d": {"x": 1, "y": [1, 2], "z": 3}, "b": 2}`},
		{"slsutil.update", `[{"a": 1, "l": [1, 2], "d": {"x": 1, "y": [1]}}, {"b": 2, "l": [2, 3], "d": {"y": [2], "z": 3}}]`, `{"recursive_update": false}`, `{"a": 1, "l": [2, 3], "d": {"y": [2], "z": 3}, "b": 2}`},
	} {
		var args []any
		var kwargs map[string]any
		if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tc.kwargs), &kwargs); err != nil {
			t.Fatal(err)
		}
		got, err := reg.Call(context.Background(), tc.fun, args, kwargs, nil)
		if err != nil {
			t.Errorf("%s%s: %v", tc.fun, tc.args, err)
			continue
		}
		var want any
		_ = json.Unmarshal([]byte(tc.want), &want)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s%s %s = %s; Salt returns %s", tc.fun, tc.args, tc.kwargs, g, w)
		}
	}
}
