package py

import (
	"reflect"
	"testing"
)

func TestMapLeaves(t *testing.T) {
	double := func(x any) any {
		if n, ok := x.(int); ok {
			return 2 * n
		}
		return x
	}
	for _, tc := range []struct {
		in, want any
	}{
		{nil, nil},
		{3, 6},
		{"s", "s"},
		{[]any{1, "a", []any{2}}, []any{2, "a", []any{4}}},
		{map[string]any{"a": 1, "b": map[string]any{"c": 3}}, map[string]any{"a": 2, "b": map[string]any{"c": 6}}},
		{[]string{"not", "walked"}, []string{"not", "walked"}},
	} {
		if got := MapLeaves(tc.in, double); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("MapLeaves(%#v) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
	// The input is copied, not changed.
	in := map[string]any{"l": []any{1}}
	MapLeaves(in, double)
	if in["l"].([]any)[0] != 1 {
		t.Errorf("MapLeaves changed its input: %v", in)
	}
}
