package file

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/state"
)

// accumulatedFunc declares file.accumulated: text gathered for a file
// that a file.managed template (its accumulator variable) or a
// file.blockreplace (lines of its block) required by it uses.
func (s *states) accumulatedFunc() function.Func {
	return function.Func{
		Name: "file.accumulated", Doc: "Gather text for filename, which the file.managed or file.blockreplace state it is " +
			"require_in/watch_in of uses (a template's accumulator[name], or lines of the block).",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true},
			{Name: "filename", Kind: function.String, Required: true}, {Name: "text", Kind: function.Any, Required: true}},
		VarKwargs: true,
		Run:       func(ctx context.Context, in *function.Input) (any, error) { return s.accumulatedState(ctx, in), nil },
	}
}

// accumulators hold what file.accumulated states gave, per file and
// accumulator name, as Salt's accumulator file in its cachedir. Salt
// empties that file when a state run ends; brine's state functions do
// not see runs end, so each state's text replaces what the same state
// (by id) gave before instead: a run sees what its own accumulated
// states gave, and an accumulated state removed from the SLS keeps its
// last text until the agent restarts.
type accumulators struct {
	mu      sync.Mutex
	entries []accEntry
}

type accEntry struct {
	file, name, id string
	chunks         []any
	deps           []string // the state ids it is required by
}

func (a *accumulators) set(e accEntry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, old := range a.entries {
		if old.file == e.file && old.name == e.name && old.id == e.id {
			a.entries[i] = e
			return
		}
	}
	a.entries = append(a.entries, e)
}

// forFile is Salt's accum_data[filename]: accumulator name to its text
// chunks (nil when none names the file).
func (a *accumulators) forFile(file string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out map[string]any
	for _, e := range a.entries {
		if e.file != file {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		l, _ := out[e.name].([]any)
		for _, c := range e.chunks {
			if !slices.ContainsFunc(l, func(x any) bool { return py.Equal(x, c) }) {
				l = append(l, c)
			}
		}
		out[e.name] = l
	}
	return out
}

// deps is Salt's accum_deps[filename]: accumulator name to the ids of
// the states that require it.
func (a *accumulators) deps(file string) map[string][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]string{}
	for _, e := range a.entries {
		if e.file == file {
			out[e.name] = append(out[e.name], e.deps...)
		}
	}
	return out
}

// names are the accumulator names of file in the order first given.
func (a *accumulators) names(file string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, e := range a.entries {
		if e.file == file && !slices.Contains(out, e.name) {
			out = append(out, e.name)
		}
	}
	return out
}

func (s *states) accumulatedState(ctx context.Context, in *function.Input) state.Result {
	name := in.String("name")
	if name == "" {
		return state.Failed(name, "Must provide name to file.accumulated")
	}
	text := in.Value("text")
	if text == nil {
		return state.Failed(name, "No text supplied for accumulator")
	}
	run := state.From(ctx)
	var deps []any
	for _, k := range []string{"require_in", "watch_in"} {
		switch v := run.Low[k].(type) {
		case []any:
			deps = append(deps, v...)
		case nil:
		default:
			deps = append(deps, v)
		}
	}
	orphan := true
	var ids []string
	for _, d := range deps {
		switch t := d.(type) {
		case map[string]any:
			if _, ok := t["file"]; ok {
				orphan = false
			}
			for _, v := range t {
				ids = append(ids, py.Str(v))
			}
		case string:
			if strings.Contains(t, "file") {
				orphan = false
			}
			ids = append(ids, t)
		}
	}
	if orphan {
		return state.Failed(name, "Orphaned accumulator %s in %s:%s", name, run.SLS, run.ID)
	}
	chunks, ok := text.([]any)
	if !ok {
		chunks = []any{text}
	}
	filename := in.String("filename")
	before := s.acc.forFile(filename)[name]
	s.acc.set(accEntry{file: filename, name: name, id: run.ID, chunks: chunks, deps: ids})
	old, _ := before.([]any)
	for _, c := range chunks {
		if !slices.ContainsFunc(old, func(x any) bool { return py.Equal(x, c) }) {
			return state.Succeeded(name, fmt.Sprintf("Accumulator %s for file %s was charged by text", name, filename), nil)
		}
	}
	return state.Succeeded(name, "", nil)
}

// accumulatedLines are the lines file.accumulated states gave for the
// file a file.blockreplace edits: those of the accumulators that name
// this state among the states they are required by, else all.
func (s *states) accumulatedLines(ctx context.Context, name string) []string {
	data := s.acc.forFile(name)
	if data == nil {
		return nil
	}
	id := state.From(ctx).ID
	deps := s.acc.deps(name)
	var use []string
	for _, acc := range s.acc.names(name) {
		if slices.Contains(deps[acc], id) {
			use = append(use, acc)
		}
	}
	if len(use) == 0 {
		use = s.acc.names(name)
	}
	var lines []string
	for _, acc := range use {
		l, _ := data[acc].([]any)
		for _, c := range l {
			lines = append(lines, py.Str(c))
		}
	}
	return lines
}
