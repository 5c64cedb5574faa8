package main

import (
	"reflect"
	"testing"
)

// TestYAMLScalar checks command-line arguments are typed as Salt types
// them (yamlify_arg), without losing digits or quotes' meaning.
func TestYAMLScalar(t *testing.T) {
	for in, want := range map[string]any{
		"42": int64(42), "1.5": 1.5, "yes": true, "False": false, "~": nil, "web01": "web01",
		"20261124101010123456": "20261124101010123456", // a jid: beyond int64, kept as text
		`"1.10"`:               "1.10",
		`'007'`:                "007",
		`"unterminated`:        `"unterminated`,
		`{"a": 1}`:             map[string]any{"a": uint64(1)},
		"nan":                  "nan",
	} {
		if got := yamlScalar(in); !reflect.DeepEqual(got, want) {
			t.Errorf("yamlScalar(%q) = %#v, want %#v", in, got, want)
		}
	}
}
