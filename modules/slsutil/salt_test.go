package slsutil

import (
	"context"
	"encoding/json"
	"strings"
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

// TestSerializeAsSalt: slsutil.serialize and deserialize give the text and
// data Salt 3006.6's give for the same arguments (keys written in sorted
// order, the one order a mapping that reached brine's functions keeps).
func TestSerializeAsSalt(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"a": "s", "b": []any{int64(1), map[string]any{"x": "é"}}, "c": map[string]any{}}
	for _, tc := range []struct {
		name    string
		args    []any
		kwargs  map[string]any
		want    any
		wantErr string
	}{
		{"yaml, unicode", []any{"yaml", obj}, map[string]any{"default_flow_style": false, "allow_unicode": true, "__pub_jid": "1"},
			"a: s\nb:\n- 1\n- x: é\nc: {}", ""},
		{"yaml, escaped", []any{"yaml", obj}, map[string]any{"default_flow_style": false},
			"a: s\nb:\n- 1\n- x: \"\\xE9\"\nc: {}", ""},
		{"yaml, flow style", []any{"yaml", obj}, nil, nil, "default_flow_style=False"},
		{"json", []any{"json", obj}, nil, `{"a": "s", "b": [1, {"x": "é"}], "c": {}}`, ""},
		{"json, indent", []any{"json", obj}, map[string]any{"indent": int64(2)},
			"{\n  \"a\": \"s\",\n  \"b\": [\n    1,\n    {\n      \"x\": \"é\"\n    }\n  ],\n  \"c\": {}\n}", ""},
		{"no such serializer", []any{"toml", obj}, nil, nil, "serializer 'toml' is not available"},
	} {
		got, err := reg.Call(context.Background(), "slsutil.serialize", tc.args, tc.kwargs, nil)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, %v; want an error saying %q", tc.name, got, err, tc.wantErr)
			}
		case err != nil || got != tc.want:
			t.Errorf("%s: %q, %v; Salt returns %q", tc.name, got, err, tc.want)
		}
	}
	got, err := reg.Call(context.Background(), "slsutil.deserialize", []any{"yaml", "a: 1\nb: [x, 2.5]\n"}, nil, nil)
	if g, _ := json.Marshal(got); err != nil || string(g) != `{"a":1,"b":["x",2.5]}` {
		t.Errorf("deserialize yaml = %s, %v", g, err)
	}
}
