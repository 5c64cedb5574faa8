package py

import (
	"math"
	"reflect"
	"testing"
)

func TestReprs(t *testing.T) {
	for in, want := range map[string]string{
		"sleep":     "'sleep'",
		"it's":      `"it's"`,
		`a'b"c`:     `'a\'b"c'`,
		"tab\there": `'tab\there'`,
		`back\`:     `'back\\'`,
		"\x01":      `'\x01'`,
		"héllo":     "'héllo'",
	} {
		if got := Repr(in); got != want {
			t.Errorf("Repr(%q) = %s, want %s", in, got, want)
		}
	}
	if got := ReprList([]string{"sleep", "5"}); got != "['sleep', '5']" {
		t.Errorf("ReprList = %s", got)
	}
	for in, want := range map[float64]string{5: "5.0", 0.5: "0.5", 1e16: "1e+16", 1e-5: "1e-05", 123456.25: "123456.25", 0: "0.0"} {
		if got := Float(in); got != want {
			t.Errorf("Float(%v) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[any]string{true: "True", false: "False", nil: "None", int64(3): "3", 7: "7", "x": "x", 2.5: "2.5"} {
		if got := Str(in); got != want {
			t.Errorf("Str(%v) = %s, want %s", in, got, want)
		}
	}
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want float64
		ok   bool
	}{
		{7, 7, true},
		{int64(-3), -3, true},
		{uint64(1 << 63), 1 << 63, true},
		{2.5, 2.5, true},
		{true, 0, false},
		{"5", 0, false},
		{nil, 0, false},
		{int32(4), 0, false},
	} {
		if got, ok := Number(tc.v); got != tc.want || ok != tc.ok {
			t.Errorf("Number(%#v) = %v, %v, want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTruth(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{{nil, false}, {false, false}, {true, true}, {int64(0), false}, {int64(2), true}, {0.0, false}, {"", false},
		{"0", true}, {[]any{}, false}, {[]any{1}, true}, {map[string]any{}, false}, {map[string]any{"a": 1}, true}} {
		if got := Truth(tc.v); got != tc.want {
			t.Errorf("Truth(%#v) = %v", tc.v, got)
		}
	}
}

func TestFinite(t *testing.T) {
	in := map[string]any{"a": []any{math.Inf(1), math.Inf(-1), math.NaN(), 1.5, "x"}, "b": map[string]any{"c": math.NaN()}}
	got := Finite(in)
	want := map[string]any{"a": []any{"inf", "-inf", "nan", 1.5, "x"}, "b": map[string]any{"c": "nan"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Finite = %#v, want %#v", got, want)
	}
}

func TestEqual(t *testing.T) {
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{int64(1), 1.0, true},
		{true, int64(1), true},
		{false, 0.0, true},
		{true, "True", false},
		{"a", "a", true},
		{nil, nil, true},
		{nil, "", false},
		{[]any{int64(1), "x"}, []any{1.0, "x"}, true},
		{[]any{int64(1)}, []any{int64(1), int64(2)}, false},
		{map[string]any{"a": []any{true}}, map[string]any{"a": []any{int64(1)}}, true},
		{map[string]any{"a": nil}, map[string]any{"b": nil}, false},
		{map[string]any{}, []any{}, false},
	} {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestStrs(t *testing.T) {
	got := Strs([]any{"a", int64(2), 1.5, true, nil})
	want := []string{"a", "2", "1.5", "True", "None"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Strs = %q, want %q", got, want)
	}
	if got := Strs(nil); got == nil || len(got) != 0 {
		t.Errorf("Strs(nil) = %#v, want an empty list", got)
	}
}

func TestPathJoin(t *testing.T) {
	for _, c := range []struct {
		parts []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"/etc", "salt", "minion"}, "/etc/salt/minion"},
		{[]string{"/etc/", "salt"}, "/etc/salt"},
		{[]string{"/etc", "/srv", "x"}, "/srv/x"},
		{[]string{"", "a"}, "a"},
		{[]string{"a", ""}, "a/"},
	} {
		if got := PathJoin(c.parts...); got != c.want {
			t.Errorf("PathJoin(%q) = %q, want %q", c.parts, got, c.want)
		}
	}
}
