package percent

import (
	"strings"
	"testing"
)

func TestThreshold(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want float64
		err  string
	}{
		{"63%", 63, ""}, {"63.5 %", 63.5, ""}, {"0%", 0, ""}, {"100", 100, ""}, {int64(90), 90, ""},
		{uint64(5), 5, ""}, {12.5, 12.5, ""}, {7, 7, ""},
		{"101%", 0, "from 0 to 100"}, {-1.0, 0, "from 0 to 100"}, {"NaN", 0, "from 0 to 100"},
		{"ninety%", 0, `such as 63%, got "ninety%"`}, {true, 0, "such as 63%, got true"}, {nil, 0, "such as 63%"},
	} {
		got, err := Threshold(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("Threshold(%#v) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Threshold(%#v) = %v, %v; want error %q", tc.in, got, err, tc.err)
		}
	}
}

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		part, total uint64
		want        float64
	}{
		{0, 0, 0}, {1, 3, 33.3}, {2, 3, 66.7}, {1, 1, 100}, {5, 8, 62.5}, {1, 16, 6.2}, {3, 16, 18.8},
	} {
		if got := Of(tc.part, tc.total); got != tc.want {
			t.Errorf("Of(%d, %d) = %v, want %v", tc.part, tc.total, got, tc.want)
		}
	}
}
