package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/jobs"
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
		if got := jobs.ArgValue(in); !reflect.DeepEqual(got, want) {
			t.Errorf("jobs.ArgValue(%q) = %#v, want %#v", in, got, want)
		}
	}
}

// TestParallelCount: salt-cloud's bare -P (a switch in Salt) means the
// default count, and brine's -P N still sets N, whatever the flag parser
// made of it.
func TestParallelCount(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int
		args string
	}{
		{"cloud -m map -P -y", 10, ""},
		{"cloud -m map -P 3 -y", 3, ""},
		{"cloud -p small -P 7 web1 web2", 7, "web1 web2"},
		{"cloud -p small --parallel 2 web1", 2, "web1"},
		{"cloud -p small -P web1 2", 10, "web1 2"},
		{"cloud -p small -P=4 web1", 4, "web1"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			root := newRootCmd()
			raw := strings.Fields(tc.raw)
			cmd, _, err := root.Find(raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(raw[1:]); err != nil {
				t.Fatal(err)
			}
			f := &cloudFlags{}
			f.parallel, _ = cmd.Flags().GetInt("parallel")
			args := parallelCount(raw[1:], cmd.Flags().Args(), f)
			if f.parallel != tc.want || strings.Join(args, " ") != tc.args {
				t.Errorf("parallel %d, args %q; want %d, %q", f.parallel, args, tc.want, tc.args)
			}
		})
	}
}
