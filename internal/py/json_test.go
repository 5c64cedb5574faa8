package py

import (
	"math"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestJSONDumps: each want is what Python 3.11's json.dumps printed for
// the same value and arguments.
func TestJSONDumps(t *testing.T) {
	v := map[string]any{"b": []any{int64(1), 2.5, nil, true, "é\u2028", map[string]any{"x": "\U0001F600"}}, "a": math.Inf(1)}
	two, tab := "  ", "\t"
	for _, tc := range []struct {
		name string
		v    any
		o    JSONOptions
		want string
	}{
		{"defaults, ensure_ascii", v, JSONOptions{EnsureASCII: true},
			`{"a": Infinity, "b": [1, 2.5, null, true, "\u00e9\u2028", {"x": "\ud83d\ude00"}]}`},
		{"indent 2", v, JSONOptions{Indent: &two},
			"{\n  \"a\": Infinity,\n  \"b\": [\n    1,\n    2.5,\n    null,\n    true,\n    \"é\u2028\",\n    {\n      \"x\": \"😀\"\n    }\n  ]\n}"},
		{"tab, separators", v, JSONOptions{Indent: &tab, ItemSep: ",", KeySep: ":", EnsureASCII: true},
			"{\n\t\"a\":Infinity,\n\t\"b\":[\n\t\t1,\n\t\t2.5,\n\t\tnull,\n\t\ttrue,\n\t\t\"\\u00e9\\u2028\",\n\t\t{\n\t\t\t\"x\":\"\\ud83d\\ude00\"\n\t\t}\n\t]\n}"},
		{"ordered, other keys", yaml.MapSlice{{Key: int64(1), Value: "a"}, {Key: nil, Value: "b"}, {Key: false, Value: "c"}}, JSONOptions{},
			`{"1": "a", "null": "b", "false": "c"}`},
		{"ordered, sort_keys", yaml.MapSlice{{Key: "z", Value: int64(1)}, {Key: "a", Value: int64(2)}}, JSONOptions{SortKeys: true},
			`{"a": 2, "z": 1}`},
	} {
		got, err := JSONDumps(tc.v, tc.o)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; Python prints %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := JSONDumps(struct{}{}, JSONOptions{}); err == nil {
		t.Error("a value JSON cannot hold: no error")
	}
	if _, err := JSONDumps(yaml.MapSlice{{Key: []any{1}, Value: 1}}, JSONOptions{TypeName: func(any) string { return "list" }}); err == nil ||
		err.Error() != "keys must be str, int, float, bool or None, not list" {
		t.Errorf("a list key: %v", err)
	}
}
