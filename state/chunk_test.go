package state

import (
	"slices"
	"testing"
)

// TestChunkIndexCandidates: the index gives a requisite the chunks a scan
// of every chunk would have matched, in the same order.
func TestChunkIndexCandidates(t *testing.T) {
	chunks := []*Chunk{
		{State: "file", ID: "a", Name: "/etc/a", SLS: "web"},
		{State: "pkg", ID: "b", Name: "a", SLS: "web"}, // named like a's id
		{State: "file", ID: "c", Name: "c", SLS: "web.conf"},
		{State: "file", ID: "a2", Name: "/etc/a", SLS: "db"},
		{State: "cmd", ID: "/etc/a", Name: "run", SLS: "db"},
	}
	ix := newChunkIndex(chunks)
	reqs := []req{
		{state: "file", target: "a"}, {state: "pkg", target: "a"}, {state: "file", target: "/etc/a"},
		{state: "cmd", target: "/etc/a"}, {state: "id", target: "a"}, {state: "id", target: "run"},
		{state: "sls", target: "web"}, {state: "sls", target: "web.*"}, {state: "sls", target: "nosuch"},
		{state: "file", target: "a*"}, {state: "file", target: `\a`}, {state: "file", target: "nosuch"},
	}
	for _, r := range reqs {
		var want, got []*Chunk
		for _, c := range chunks {
			if r.matches(c) {
				want = append(want, c)
			}
		}
		for _, c := range ix.candidates(chunks, r) {
			if r.matches(c) {
				got = append(got, c)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the index gives %v, a scan %v", r, ids(got), ids(want))
		}
	}
}

func ids(cs []*Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestScalarStrAndResultTruth(t *testing.T) {
	for _, tc := range []struct {
		v     any
		str   string
		truth bool
	}{
		{nil, "None", false},
		{true, "True", true},
		{false, "False", false},
		{"", "", false},
		{"x", "x", true},
		{uint64(0), "0", false},
		{uint64(3), "3", true},
		{int64(-1), "-1", true},
		{0, "0", false},
		{1.0, "1", true},
		{0.0, "0", false},
		{1e16, "10000000000000000", true},
		{[]any{}, "[]", false},
		{map[string]any{}, "map[]", false},
		{map[string]any{"result": false}, "map[result:false]", false},
		{map[string]any{"result": true, "comment": ""}, "map[comment: result:true]", true},
		{map[string]any{"retcode": 0}, "map[retcode:0]", true},
	} {
		if got := scalarStr(tc.v); got != tc.str {
			t.Errorf("scalarStr(%#v) = %q, want %q", tc.v, got, tc.str)
		}
		if got := resultTruth(tc.v); got != tc.truth {
			t.Errorf("resultTruth(%#v) = %v, want %v", tc.v, got, tc.truth)
		}
	}
}
