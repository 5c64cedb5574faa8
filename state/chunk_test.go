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
