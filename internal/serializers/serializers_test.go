package serializers

import (
	"reflect"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestLoadJSON: the json serializer reads numbers and key order as
// Python's json.loads, which Salt's deserializer calls. Each want is what
// /usr/bin/python3 prints for json.loads of the same text:
// {'z': 1, 'f': 1.0, 'e': 1000.0, 'n': 0, 'a': [{'y': 2, 'b': -2.5}]}.
func TestLoadJSON(t *testing.T) {
	const text = `{"z": 1, "f": 1.0, "e": 1e3, "n": -0, "a": [{"y": 2, "b": -2.5}]}`
	ser, _ := Get("json")
	for _, tc := range []struct {
		name string
		load func([]byte) (any, error)
		want any
	}{
		{"Load: Go maps", ser.Load, map[string]any{"z": int64(1), "f": 1.0, "e": 1000.0, "n": int64(0),
			"a": []any{map[string]any{"y": int64(2), "b": -2.5}}}},
		{"LoadOrdered: the keys as written", ser.LoadOrdered, yaml.MapSlice{{Key: "z", Value: int64(1)}, {Key: "f", Value: 1.0},
			{Key: "e", Value: 1000.0}, {Key: "n", Value: int64(0)},
			{Key: "a", Value: []any{yaml.MapSlice{{Key: "y", Value: int64(2)}, {Key: "b", Value: -2.5}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.load([]byte(text))
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("= %#v, %v\nwant %#v", got, err, tc.want)
			}
		})
	}
	if _, err := ser.Load([]byte(`{"a": 1} x`)); err == nil {
		t.Error("data after the value: no error (json.loads says Extra data)")
	}
}
