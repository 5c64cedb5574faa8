package file

import (
	"context"
	"testing"

	"github.com/brinehq/brine/state"
)

// TestAccumulated holds what Salt 3006.6 did with accumulators feeding a
// file.managed template and a file.blockreplace (salt-call --local).
func TestAccumulated(t *testing.T) {
	h := newHarness(t)
	managed, block := h.path("managed"), h.path("block")
	h.write(block, "head\n#-- start managed zone --\n#-- end managed zone --\n", 0o644)
	h.files.Tree["base"]["acc/tmpl"] = "animals: {{ accumulator }}\n"
	run := func(id, fun string, kwargs map[string]any, low map[string]any) state.Result {
		t.Helper()
		ctx := state.With(context.Background(), &state.Running{ID: id, SLS: "acc", Saltenv: "base",
			Template: accRender, Low: low})
		out, err := h.reg.Call(ctx, fun, nil, kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return out.(state.Result)
	}
	requireIn := func(id string) map[string]any {
		return map[string]any{"require_in": []any{map[string]any{"file": id}}}
	}
	for _, c := range []struct {
		id, fun string
		kwargs  map[string]any
		low     map[string]any
		result  any
		comment string
		changes map[string]any
	}{
		{"fox", "file.accumulated", map[string]any{"name": "animals", "filename": managed, "text": "fox"}, requireIn("managed"),
			true, "Accumulator animals for file " + managed + " was charged by text", nil},
		{"dog", "file.accumulated", map[string]any{"name": "animals", "filename": managed, "text": []any{"dog", "fox"}},
			requireIn("managed"), true, "Accumulator animals for file " + managed + " was charged by text", nil},
		{"managed", "file.managed", map[string]any{"name": managed, "source": "salt://acc/tmpl", "template": "jinja"}, nil,
			true, "File " + managed + " updated", map[string]any{"diff": "New file", "mode": "0644"}},
		{"line1", "file.accumulated", map[string]any{"name": "line1", "filename": block, "text": "line one"}, requireIn("block"),
			true, "Accumulator line1 for file " + block + " was charged by text", nil},
		{"block", "file.blockreplace", map[string]any{"name": block, "content": "first"}, nil, true, "Changes were made",
			map[string]any{"diff": "--- \n+++ \n@@ -1,3 +1,5 @@\n head\n #-- start managed zone --\n+first\n+line one\n #-- end managed zone --\n"}},
		{"orphan", "file.accumulated", map[string]any{"name": "orphan", "filename": h.path("x"), "text": "t"}, nil, false,
			"Orphaned accumulator orphan in acc:orphan", nil},
		{"line1 again", "file.accumulated", map[string]any{"name": "line1", "filename": block, "text": "line one"},
			requireIn("block"), true, "", nil},
	} {
		r := run(c.id, c.fun, c.kwargs, c.low)
		if state.Value(r.Result) != c.result || r.Comment != c.comment || !changesMatch(r.Changes, c.changes) {
			t.Errorf("%s: got %v %q %#v, want %v %q %#v", c.id, state.Value(r.Result), r.Comment, r.Changes, c.result, c.comment, c.changes)
		}
	}
	if msg := fileIs(managed, "animals: fox dog\n", "")(h); msg != "" {
		t.Error(msg)
	}
	if msg := fileIs(block, "head\n#-- start managed zone --\nfirst\nline one\n#-- end managed zone --\n", "")(h); msg != "" {
		t.Error(msg)
	}
}

// accRender stands in for Jinja's {% for a in accumulator["animals"] %}
// {{ a }}{% endfor %}: the animals accumulator's items, space separated.
func accRender(_ context.Context, _, _ string, src []byte, c map[string]any) ([]byte, error) {
	acc, _ := c["accumulator"].(map[string]any)
	l, _ := acc["animals"].([]any)
	s := ""
	for i, x := range l {
		if i > 0 {
			s += " "
		}
		s += x.(string)
	}
	return []byte(string(src[:len("animals: ")]) + s + "\n"), nil
}
