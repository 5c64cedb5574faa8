package keyorder

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/goccy/go-yaml"
)

func mapSlice(t *testing.T, text string) yaml.MapSlice {
	t.Helper()
	var m yaml.MapSlice
	if err := yaml.UnmarshalWithOptions([]byte(text), &m, yaml.UseOrderedMap()); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestKeysOf(t *testing.T) {
	tests := []struct {
		name  string
		order *Order
		m     map[string]any
		want  []string
	}{
		{"nil order reads sorted", nil, map[string]any{"b": 1, "a": 2, "c": 3}, []string{"a", "b", "c"}},
		{"written order", &Order{Keys: []string{"c", "a", "b"}}, map[string]any{"b": 1, "a": 2, "c": 3}, []string{"c", "a", "b"}},
		{"unknown keys last, sorted", &Order{Keys: []string{"c"}}, map[string]any{"b": 1, "a": 2, "c": 3}, []string{"c", "a", "b"}},
		{"keys gone are skipped, repeats once", &Order{Keys: []string{"x", "b", "b", "a"}}, map[string]any{"b": 1, "a": 2}, []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.order.KeysOf(tt.m); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("KeysOf = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOfAndAt(t *testing.T) {
	o := Of(mapSlice(t, "z:\n  y: 1\n  x:\n    w: 1\n    v: 2\na: [1, {n: 1, m: 2}]\n"))
	tests := []struct {
		name string
		got  *Order
		want []string
	}{
		{"top", o, []string{"z", "a"}},
		{"nested", o.At("z"), []string{"y", "x"}},
		{"deeper", o.At("z", "x"), []string{"w", "v"}},
		{"list item", o.At("a").Item(1), []string{"n", "m"}},
		{"scalar", o.At("z", "y"), nil},
		{"missing", o.At("q", "r"), nil},
		{"list scalar item", o.At("a").Item(0), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			if tt.got != nil {
				got = tt.got.Keys
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("keys = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMerged: a later pillar SLS merged over an earlier one, as Salt's
// dict update orders it.
func TestMerged(t *testing.T) {
	tests := []struct {
		name, dst, src string
		path           []string
		want           []string
	}{
		{"new keys after", "b: 1\na: 1\n", "c: 1\na: 2\n", nil, []string{"b", "a", "c"}},
		{"mappings merge", "m: {y: 1, x: 1}\n", "m: {w: 1, y: 2}\n", []string{"m"}, []string{"y", "x", "w"}},
		{"a mapping over a scalar replaces", "m: 1\n", "m: {y: 1, x: 1}\n", []string{"m"}, []string{"y", "x"}},
		{"a scalar over a mapping replaces", "m: {y: 1}\n", "m: 2\n", []string{"m"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Merged(Of(mapSlice(t, tt.dst)), Of(mapSlice(t, tt.src))).At(tt.path...)
			var got []string
			if o != nil {
				got = o.Keys
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("keys at %v = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

// TestJSON: the JSON written is the map's value for any reader, with the
// written order for ReadJSON.
func TestJSON(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"flat", "b: 1\na: x\n", `{"b":1,"a":"x"}`},
		{"nested and lists", "z: {y: [2, {d: 1, c: <b>}], x: null}\na: true\n", `{"z":{"y":[2,{"d":1,"c":"\u003cb\u003e"}],"x":null},"a":true}`},
		{"empty", "{}\n", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := mapSlice(t, tt.yaml)
			var m map[string]any
			if err := yaml.Unmarshal([]byte(tt.yaml), &m); err != nil {
				t.Fatal(err)
			}
			b, err := MarshalJSON(m, Of(ms))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("MarshalJSON = %s, want %s", b, tt.want)
			}
			plain, _ := json.Marshal(m)
			var x, y any
			_ = json.Unmarshal(b, &x)
			_ = json.Unmarshal(plain, &y)
			if !reflect.DeepEqual(x, y) {
				t.Errorf("MarshalJSON's value %v differs from json.Marshal's %v", x, y)
			}
			o, err := ReadJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := MarshalJSON(m, o); string(again) != tt.want {
				t.Errorf("with ReadJSON's order = %s, want %s", again, tt.want)
			}
		})
	}
	for _, bad := range []string{`{"a":`, `{} {}`, `[1,`} {
		if _, err := ReadJSON([]byte(bad)); err == nil {
			t.Errorf("ReadJSON(%s) accepted", bad)
		}
	}
}

// TestMapSlices: a value held as plain maps, turned back into the
// ordered mappings it was read from; keys the order does not know last,
// sorted.
func TestMapSlices(t *testing.T) {
	const text = "z:\n  y: 1\n  x: [{n: 1, m: 2}, 3]\na: 1\n"
	var plain map[string]any
	if err := yaml.Unmarshal([]byte(text), &plain); err != nil {
		t.Fatal(err)
	}
	ms := mapSlice(t, text)
	plainWithNew := map[string]any{"new": 1, "a": 1, "c": 2}
	tests := []struct {
		name  string
		v     any
		order *Order
		want  any
	}{
		{"as read", plain, Of(ms), ms},
		{"no order: sorted", map[string]any{"b": 1, "a": map[string]any{"d": 1, "c": 2}},
			nil, yaml.MapSlice{{Key: "a", Value: yaml.MapSlice{{Key: "c", Value: 2}, {Key: "d", Value: 1}}}, {Key: "b", Value: 1}}},
		{"keys not in the order last, sorted", plainWithNew, &Order{Keys: []string{"new"}},
			yaml.MapSlice{{Key: "new", Value: 1}, {Key: "a", Value: 1}, {Key: "c", Value: 2}}},
		{"a scalar as it is", 7, nil, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MapSlices(tt.v, tt.order)
			if g, w := fmtJSON(t, got), fmtJSON(t, tt.want); g != w {
				t.Errorf("MapSlices = %s, want %s", g, w)
			}
		})
	}
}

// fmtJSON is v as JSON with each yaml.MapSlice an object in its order.
func fmtJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.MarshalWithOptions(v, yaml.JSON())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
