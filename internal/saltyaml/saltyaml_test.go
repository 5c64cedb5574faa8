package saltyaml

import (
	"math"
	"reflect"
	"strings"
	"testing"

	goyaml "github.com/goccy/go-yaml"
)

// TestScalarsAsSalt: each value is what Salt 3006.6's loader
// (salt.utils.yaml.safe_load) returned for the same text.
func TestScalarsAsSalt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"0644", uint64(644)}, // Salt: a leading zero is not octal
		{"010", uint64(10)},
		{"00", uint64(0)},
		{"-0644", int64(-420)}, // only a value starting with 0 is read so
		{"+0644", uint64(420)},
		{"08", "08"},
		{"0x1f", uint64(31)},
		{"0b101", uint64(5)},
		{"1_000", uint64(1000)},
		{"1:30", uint64(90)},
		{"+1", uint64(1)},
		{"-2", int64(-2)},
		{"12345678901234567890", uint64(12345678901234567890)},
		{"123456789012345678901234", "123456789012345678901234"},
		{"yes", true}, {"Yes", true}, {"no", false}, {"on", true}, {"OFF", false}, {"True", true},
		{"y", "y"}, {"n", "n"}, {"yEs", "yEs"},
		{"1e3", "1e3"}, {"1.0e3", "1.0e3"}, {"1.0e+3", 1000.0}, {".5", 0.5}, {"1.", 1.0}, {"1:30.5", 90.5},
		{"0o17", "0o17"},
		{"~", nil}, {"null", nil}, {"Null", nil}, {"", nil},
		{"2024-01-02", "2024-01-02"},
		{"2024-01-02 10:00:00", "2024-01-02 10:00:00"},
		{"'0644'", "0644"}, {`"yes"`, "yes"}, {"!!str 0644", "0644"}, {"!!int '0644'", uint64(644)},
		{"!!float '1'", 1.0},
		{"=", "="},
		{"<<", "<<"},
		{"|\n  a\n  b\n", "a\nb\n"},
	} {
		got, err := Unmarshal([]byte("k: " + tc.in))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		v := got.(goyaml.MapSlice)[0].Value
		if !reflect.DeepEqual(v, tc.want) {
			t.Errorf("%q = %#v, want %#v", tc.in, v, tc.want)
		}
	}
	for in, want := range map[string]float64{".inf": math.Inf(1), "-.Inf": math.Inf(-1)} {
		got, err := Unmarshal([]byte("k: " + in))
		if err != nil || got.(goyaml.MapSlice)[0].Value != want {
			t.Errorf("%q = %v, %v", in, got, err)
		}
	}
	if got, _ := Unmarshal([]byte("k: .NaN")); !math.IsNaN(got.(goyaml.MapSlice)[0].Value.(float64)) {
		t.Errorf(".NaN = %v", got)
	}
}

// TestStructuresAsSalt: order kept, keys typed, merges as PyYAML's.
func TestStructuresAsSalt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"b: 1\na: 2\n", goyaml.MapSlice{{Key: "b", Value: uint64(1)}, {Key: "a", Value: uint64(2)}}},
		{"1: a\ntrue: b\n~: c\n", nil}, // 1 and True are one key in Python: an error, below
		{"- 1\n- [a, yes]\n- {x: ~}\n", []any{uint64(1), []any{"a", true}, goyaml.MapSlice{{Key: "x", Value: nil}}}},
		{"base: &b {a: 1, b: 2}\nder:\n  <<: *b\n  b: 3\n  c: 4\n", goyaml.MapSlice{
			{Key: "base", Value: goyaml.MapSlice{{Key: "a", Value: uint64(1)}, {Key: "b", Value: uint64(2)}}},
			{Key: "der", Value: goyaml.MapSlice{{Key: "a", Value: uint64(1)}, {Key: "b", Value: uint64(3)}, {Key: "c", Value: uint64(4)}}},
		}},
		{"x: &x {a: 1}\ny: &y {b: 2}\nz:\n  <<: [*x, *y]\n", goyaml.MapSlice{
			{Key: "x", Value: goyaml.MapSlice{{Key: "a", Value: uint64(1)}}},
			{Key: "y", Value: goyaml.MapSlice{{Key: "b", Value: uint64(2)}}},
			{Key: "z", Value: goyaml.MapSlice{{Key: "b", Value: uint64(2)}, {Key: "a", Value: uint64(1)}}},
		}},
		{"", nil},
		{"# only a comment\n", nil},
	} {
		got, err := Unmarshal([]byte(tc.in))
		if tc.in == "1: a\ntrue: b\n~: c\n" {
			if err == nil || !strings.Contains(err.Error(), "conflicting ID") {
				t.Errorf("%q: %v, %v; want a conflicting ID", tc.in, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q = %#v, %v\nwant %#v", tc.in, got, err, tc.want)
		}
	}
}

// TestRefusedAsSalt: what Salt's loader refuses, brine refuses, at the
// line.
func TestRefusedAsSalt(t *testing.T) {
	for in, want := range map[string]string{
		"a: 1\na: 2\n":                       "line 2, column 1: while constructing a mapping: found conflicting ID 'a'",
		"a: !!python/name:os.system\n":       "could not determine a constructor for the tag 'tag:yaml.org,2002:python/name:os.system'",
		"a: !!python/object/apply:os.system": "could not determine a constructor",
		"a: !custom x\n":                     "could not determine a constructor for the tag '!custom'",
		"a: 1\n---\nb: 2\n":                  "expected a single document",
		"a: [1, 2\n":                         "line 1, column 4: sequence end token ']' not found",
		"a:\n  test.nop:\n    - name: x\n   bad: indentation\n": "line 4, column 4:",
		"x:\n  <<: 5\n": "expected a mapping or list of mappings for merging",
		"? [a]\n: 1\n":  "found unacceptable key",
	} {
		_, err := Unmarshal([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{"a: 0644\n", "- [a, {b: yes}]\n", "x: &x {a: 1}\ny:\n  <<: *x\n", "a: 1\na: 2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Unmarshal(b)
	})
}

// TestAliasBombRefused: nested aliases that would expand to a billion
// values are refused, not built.
func TestAliasBombRefused(t *testing.T) {
	doc := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := range 9 {
		name := string(rune('b' + i))
		doc += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	if _, err := Unmarshal([]byte(doc)); err == nil || !strings.Contains(err.Error(), "too many values") {
		t.Fatalf("alias bomb: %v", err)
	}
}
