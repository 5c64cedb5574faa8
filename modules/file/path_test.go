package file

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
		{"file.basename", `["/a/b/"]`, `{}`, `""`},
		{"file.dirname", `["/a/b/"]`, `{}`, `"/a/b"`},
		{"file.basename", `["/a/b"]`, `{}`, `"b"`},
		{"file.dirname", `["/a/b"]`, `{}`, `"/a"`},
		{"file.basename", `["a"]`, `{}`, `"a"`},
		{"file.dirname", `["a"]`, `{}`, `""`},
		{"file.basename", `["/"]`, `{}`, `""`},
		{"file.dirname", `["/"]`, `{}`, `"/"`},
		{"file.basename", `["a/b/c.txt"]`, `{}`, `"c.txt"`},
		{"file.dirname", `["a/b/c.txt"]`, `{}`, `"a/b"`},
		{"file.basename", `[""]`, `{}`, `""`},
		{"file.dirname", `[""]`, `{}`, `""`},
		{"file.join", `["/a", "b", "c"]`, `{}`, `"/a/b/c"`},
		{"file.join", `["a", "/b", "c/"]`, `{}`, `"/b/c/"`},
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
