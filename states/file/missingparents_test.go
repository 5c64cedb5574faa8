package file

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/brinehq/brine/state"
)

// TestMissingParents holds what Salt 3006.6 did for each file state given
// a path whose parent directories do not exist (salt-call --local, test
// mode then for real): file.managed and file.serialize fail with "Parent
// directory not present" unless makedirs (then the parents are made, with
// dir_mode); file.blockreplace and file.keyvalue fail as for any missing
// file; test mode promises the new file either way.
func TestMissingParents(t *testing.T) {
	h := newHarness(t)
	h.files.Tree["base"]["acc/tmpl"] = "animals:\n"
	note := "\nNote: No changes made, actual changes may\nbe different due to other states."
	cases := []struct {
		name, fun, path string
		kwargs          map[string]any
		testResult      any
		testComment     string
		result          any
		comment         string
		changes         map[string]any
		dirMode         string // of the parents made; "" when none are
	}{
		{"managed", "file.managed", "a/b/f", map[string]any{"contents": "x"},
			nil, "The file %s is set to be changed" + note, false, "Parent directory not present", nil, ""},
		{"managed, makedirs", "file.managed", "c/d/f", map[string]any{"contents": "x", "makedirs": true, "dir_mode": int64(750)},
			nil, "The file %s is set to be changed" + note, true, "File %s updated", map[string]any{"diff": "New file"}, "0750"},
		{"managed, source", "file.managed", "k/f", map[string]any{"source": "salt://acc/tmpl"},
			nil, "The file %s is set to be changed" + note, false, "Parent directory not present", nil, ""},
		{"serialize", "file.serialize", "e/f.json", map[string]any{"dataset": map[string]any{"a": int64(1)}, "serializer": "json"},
			nil, "Dataset will be serialized and stored into %s", false, "Parent directory not present", nil, ""},
		{"serialize, makedirs", "file.serialize", "g/h/f.json", map[string]any{"dataset": map[string]any{"a": int64(1)},
			"serializer": "json", "makedirs": true}, nil, "Dataset will be serialized and stored into %s", true, "File %s updated",
			map[string]any{"diff": "New file"}, "0755"},
		{"blockreplace", "file.blockreplace", "i/f", map[string]any{"content": "x", "append_if_not_found": true},
			false, "%s: file not found", false, "%s: file not found", nil, ""},
		{"keyvalue", "file.keyvalue", "j/f", map[string]any{"key": "a", "value": "b", "append_if_not_found": true},
			false, "unable to open %s", false, "unable to open %s", nil, ""},
	}
	for _, c := range cases {
		p := h.path(c.path)
		kw := map[string]any{"name": p}
		for k, v := range c.kwargs {
			kw[k] = v
		}
		sub := func(s string) string {
			if !strings.Contains(s, "%s") {
				return s
			}
			return fmt.Sprintf(s, p)
		}
		r := h.run(true, c.fun, kw)
		if state.Value(r.Result) != c.testResult || r.Comment != sub(c.testComment) {
			t.Errorf("%s, test mode: got %v %q, want %v %q", c.name, state.Value(r.Result), r.Comment, c.testResult, sub(c.testComment))
		}
		if _, err := os.Stat(h.path(c.path[:1])); err == nil {
			t.Errorf("%s, test mode: made %s", c.name, h.path(c.path[:1]))
		}
		r = h.run(false, c.fun, kw)
		if state.Value(r.Result) != c.result || r.Comment != sub(c.comment) || !changesMatch(r.Changes, c.changes) {
			t.Errorf("%s: got %v %q %#v, want %v %q %#v", c.name, state.Value(r.Result), r.Comment, r.Changes, c.result, sub(c.comment), c.changes)
		}
		top := h.path(c.path[:1])
		if c.dirMode == "" {
			if _, err := os.Stat(top); err == nil {
				t.Errorf("%s: made %s", c.name, top)
			}
			continue
		}
		for _, d := range []string{top, h.path(c.path[:3])} {
			if m := h.mode(d); m != c.dirMode {
				t.Errorf("%s: %s has mode %s, want %s", c.name, d, m, c.dirMode)
			}
		}
	}
}
