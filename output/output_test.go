package output

import (
	"strings"
	"testing"
)

func decoded(t *testing.T, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		format, ret, want string
	}{
		{"nested", `true`, "web01:\n    True\n"},
		{"nested", `null`, "web01:\n    None\n"},
		{"nested", `"one\ntwo"`, "web01:\n    one\n    two\n"},
		{"nested", `""`, "web01:\n"},
		{"nested", `{"pid": 12, "stdout": "hi", "list": [1, "a", [2], {"k": false}]}`,
			"web01:\n    ----------\n    list:\n        - 1\n        - a\n        |_\n          - 2\n        |_\n          ----------\n          k:\n              False\n    pid:\n        12\n    stdout:\n        hi\n"},
		{"nested", `{}`, "web01:\n    ----------\n"},
		{"nested", `1.0`, "web01:\n    1.0\n"},
		{"txt", `"a\nb"`, "web01: a\nweb01: b\n"},
		{"txt", `{"x": [1, true, null]}`, "web01: {'x': [1, True, None]}\n"},
		{"raw", `{"x": "it's"}`, "{'web01': {'x': \"it's\"}}\n"},
		{"json", `{"b": 1, "a": [true]}`, "{\n    \"web01\": {\n        \"a\": [\n            true\n        ],\n        \"b\": 1\n    }\n}\n"},
		{"yaml", `{"b": 1, "a": ["x"]}`, "web01:\n  a:\n    - x\n  b: 1\n"},
		{"quiet", `true`, ""},
		{"highstate", `true`, "web01:\n    True\n"},
	} {
		var r Returns
		r.Add("web01", decoded(t, tc.ret))
		var b strings.Builder
		if err := Write(&b, tc.format, r, Options{}); err != nil {
			t.Errorf("%s %s: %v", tc.format, tc.ret, err)
			continue
		}
		if b.String() != tc.want {
			t.Errorf("%s %s:\n%q\nwant\n%q", tc.format, tc.ret, b.String(), tc.want)
		}
	}
}

func TestWriteKeepsOrderAndColours(t *testing.T) {
	var r Returns
	r.Add("b", true)
	r.Add("a", "x")
	r.Add("b", false) // a second return for an id replaces the first, in place
	var b strings.Builder
	if err := Write(&b, "nested", r, Options{}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "b:\n    False\na:\n    x\n" {
		t.Errorf("order: %q", b.String())
	}
	b.Reset()
	if err := Write(&b, "nested", r, Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), cyan+"b"+endColor+":") || !strings.Contains(b.String(), green+"x"+endColor) {
		t.Errorf("colours: %q", b.String())
	}
	if err := Write(&b, "bogus", r, Options{}); err == nil || !strings.Contains(err.Error(), "nested, json") {
		t.Errorf("unknown outputter: %v", err)
	}
}

func TestRepr(t *testing.T) {
	for v, want := range map[any]string{
		"a'b\"c": `'a\'b"c'`, "tab\t": `'tab\t'`, 2.5: "2.5", 3.0: "3.0", int64(-4): "-4", "é": "'é'",
	} {
		if got := Repr(v); got != want {
			t.Errorf("Repr(%v) = %s, want %s", v, got, want)
		}
	}
}

// A runner's return that names its outputter (state.orchestrate's) is
// recognised with its retcode; other returns are not.
func TestRunnerReturn(t *testing.T) {
	r, ok := RunnerReturn(map[string]any{"data": map[string]any{"b_master": 1, "a_master": 2}, "outputter": "highstate", "retcode": int64(1)})
	if !ok || r.Format != "highstate" || r.Retcode != 1 || strings.Join(r.Returns.IDs, ",") != "a_master,b_master" {
		t.Errorf("RunnerReturn = %+v, %v", r, ok)
	}
	if r, _ := RunnerReturn(map[string]any{"data": map[string]any{}, "outputter": "nosuch"}); r.Format != "nested" {
		t.Errorf("an unknown outputter: %q", r.Format)
	}
	for _, v := range []any{"text", map[string]any{"data": map[string]any{}}, map[string]any{"outputter": "txt", "data": "x"}} {
		if _, ok := RunnerReturn(v); ok {
			t.Errorf("%v taken for a runner's return", v)
		}
	}
}

func TestWriteRunner(t *testing.T) {
	for _, c := range []struct {
		name, raw, want string
		retcode         int
	}{
		{"named outputter", `{"outputter": "txt", "data": {"m1": "done"}, "retcode": 2}`, "m1: done\n", 2},
		{"yaml keeps order and integers", `{"zeta": 1, "alpha": [10000000000, 1.5]}`, "zeta: 1\nalpha:\n- 10000000000\n- 1.5\n", 0},
		{"nothing", ``, "null\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			rc, err := WriteRunner(&b, []byte(c.raw), Options{})
			if err != nil || rc != c.retcode || b.String() != c.want {
				t.Errorf("WriteRunner = %d, %v:\n%s\nwant %d:\n%s", rc, err, b.String(), c.retcode, c.want)
			}
		})
	}
	if _, err := WriteRunner(&strings.Builder{}, []byte(`{"a":`), Options{}); err == nil {
		t.Error("a truncated return printed without an error")
	}
}
