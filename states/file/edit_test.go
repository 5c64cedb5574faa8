package file

import (
	"reflect"
	"testing"
)

func TestAppend(t *testing.T) {
	h := newHarness(t)
	f := h.path("hosts")
	h.write(f, "one\n", 0o640)
	oneTwo := "--- \n\n+++ \n\n@@ -1 +1,2 @@\n\n one\n+two"
	h.steps([]step{
		{"test mode", "file.append", true, map[string]any{"name": f, "text": []any{"two", "one"}}, nil,
			"File " + f + " is set to be updated", map[string]any{"diff": oneTwo}, fileIs(f, "one\n", "0640")},
		{"append", "file.append", false, map[string]any{"name": f, "text": []any{"two", "one"}}, true, "Appended 1 lines",
			map[string]any{"diff": oneTwo}, fileIs(f, "one\ntwo\n", "0640")},
		{"second run", "file.append", false, map[string]any{"name": f, "text": []any{"two", "one"}}, true,
			"File " + f + " is in correct state", nil, nil},
		{"second run, test mode", "file.append", true, map[string]any{"name": f, "text": []any{"two", "one"}}, true,
			"File " + f + " is in correct state", nil, nil},
		{"whitespace ignored", "file.append", false, map[string]any{"name": f, "text": "  two   "}, true,
			"File " + f + " is in correct state", nil, nil},
		{"several lines", "file.append", false, map[string]any{"name": f, "text": "three\nfour"}, true, "Appended 2 lines",
			map[string]any{"diff": "--- \n\n+++ \n\n@@ -1,2 +1,4 @@\n\n one\n two\n+three\n+four"},
			fileIs(f, "one\ntwo\nthree\nfour\n", "")},
		{"missing file, test mode", "file.append", true, map[string]any{"name": h.path("new"), "text": "x"}, nil,
			"File " + h.path("new") + " is set to be created", map[string]any{"new": h.path("new")}, absent(h.path("new"))},
		{"missing file", "file.append", false, map[string]any{"name": h.path("new"), "text": "x"}, true, "Appended 1 lines",
			map[string]any{"diff": "--- \n\n+++ \n\n@@ -0,0 +1 @@\n\n+x"}, fileIs(h.path("new"), "x\n", "")},
		{"makedirs", "file.append", false, map[string]any{"name": h.path("a", "b"), "text": "x", "makedirs": true}, true,
			"Appended 1 lines", map[string]any{"diff": anything}, fileIs(h.path("a", "b"), "x\n", "")},
		{"source", "file.append", false, map[string]any{"name": f, "source": "salt://conf/app.conf"}, true, "Appended 1 lines",
			map[string]any{"diff": anything}, fileIs(f, "one\ntwo\nthree\nfour\nport = 80\n", "")},
		{"no text", "file.append", false, map[string]any{"name": f}, false, "No text found to append. Nothing appended", nil, nil},
	})
}

func TestReplace(t *testing.T) {
	h := newHarness(t)
	f := h.path("app.conf")
	h.write(f, "port = 80\nhost = x\n", 0o600)
	portDiff := "--- \n+++ \n@@ -1,2 +1,2 @@\n-port = 80\n+port = 8080\n host = x\n"
	args := map[string]any{"name": f, "pattern": "^port = .*$", "repl": "port = 8080"}
	h.steps([]step{
		{"test mode", "file.replace", true, args, nil, "Changes would have been made", map[string]any{"diff": portDiff},
			fileIs(f, "port = 80\nhost = x\n", "")},
		{"replace", "file.replace", false, args, true, "Changes were made", map[string]any{"diff": portDiff},
			func(h *harness) string {
				if msg := fileIs(f+".bak", "port = 80\nhost = x\n", "")(h); msg != "" {
					return msg
				}
				return fileIs(f, "port = 8080\nhost = x\n", "0600")(h)
			}},
		{"second run", "file.replace", false, args, true, "No changes needed to be made", nil, nil},
		{"second run, test mode", "file.replace", true, args, true, "No changes needed to be made", nil, nil},
		{"groups", "file.replace", false, map[string]any{"name": f, "pattern": `^(host) = (\w+)$`, "repl": `\1 = \g<2>.example`,
			"backup": false}, true, "Changes were made", map[string]any{"diff": anything},
			fileIs(f, "port = 8080\nhost = x.example\n", "")},
		{"append if not found", "file.replace", false, map[string]any{"name": f, "pattern": "^debug = .*$", "repl": "debug = true",
			"append_if_not_found": true}, true, "Changes were made",
			map[string]any{"diff": "--- \n+++ \n@@ -1,2 +1,3 @@\n port = 8080\n host = x.example\n+debug = true\n"},
			fileIs(f, "port = 8080\nhost = x.example\ndebug = true\n", "")},
		{"append, second run", "file.replace", false, map[string]any{"name": f, "pattern": "^debug = .*$", "repl": "debug = true",
			"append_if_not_found": true}, true, "No changes needed to be made", nil, nil},
		{"prepend", "file.replace", false, map[string]any{"name": f, "pattern": "^# managed$", "repl": "# managed",
			"prepend_if_not_found": true, "show_changes": false}, true, "Changes were made", map[string]any{"diff": true},
			fileIs(f, "# managed\nport = 8080\nhost = x.example\ndebug = true\n", "")},
		{"flags", "file.replace", false, map[string]any{"name": f, "pattern": "^DEBUG = TRUE$", "repl": "debug = false",
			"flags": []any{"IGNORECASE", "MULTILINE"}}, true, "Changes were made", map[string]any{"diff": anything},
			fileIs(f, "# managed\nport = 8080\nhost = x.example\ndebug = false\n", "")},
		{"count", "file.replace", false, map[string]any{"name": f, "pattern": "e", "repl": "E", "count": int64(1)}, true,
			"Changes were made", map[string]any{"diff": anything}, fileIs(f, "# managEd\nport = 8080\nhost = x.example\ndebug = false\n", "")},
		{"missing", "file.replace", false, map[string]any{"name": h.path("nope"), "pattern": "a", "repl": "b"}, false,
			h.path("nope") + ": file not found", nil, nil},
		{"missing ignored", "file.replace", false, map[string]any{"name": h.path("nope"), "pattern": "a", "repl": "b",
			"ignore_if_missing": true}, true, "No changes needed to be made", nil, nil},
		{"bad repl", "file.replace", false, map[string]any{"name": f, "pattern": "port", "repl": `\q`}, false, `bad escape \q at position 0`, nil, nil},
	})
}

func TestLine(t *testing.T) {
	h := newHarness(t)
	f := h.path("list")
	h.write(f, "a\nb\nc\n", 0o644)
	h.steps([]step{
		{"ensure after, test mode", "file.line", true, map[string]any{"name": f, "mode": "ensure", "after": "b", "content": "new"}, nil,
			"Changes would be made", map[string]any{"diff": "--- \n+++ \n@@ -1,3 +1,4 @@\n a\n b\n+new\n c\n"}, fileIs(f, "a\nb\nc\n", "")},
		{"ensure after", "file.line", false, map[string]any{"name": f, "mode": "ensure", "after": "b", "content": "new"}, true,
			"Changes were made", map[string]any{"diff": "--- \n+++ \n@@ -1,3 +1,4 @@\n a\n b\n+new\n c\n"}, fileIs(f, "a\nb\nnew\nc\n", "")},
		{"ensure second run", "file.line", false, map[string]any{"name": f, "mode": "ensure", "after": "b", "content": "new"}, true,
			"No changes needed to be made", nil, nil},
		{"ensure before", "file.line", false, map[string]any{"name": f, "mode": "ensure", "before": "^a$", "content": "top"}, true,
			"Changes were made", map[string]any{"diff": anything}, fileIs(f, "top\na\nb\nnew\nc\n", "")},
		{"replace", "file.line", false, map[string]any{"name": f, "mode": "replace", "match": "^c$", "content": "C"}, true,
			"Changes were made", map[string]any{"diff": "--- \n+++ \n@@ -2,4 +2,4 @@\n a\n b\n new\n-c\n+C\n"},
			fileIs(f, "top\na\nb\nnew\nC\n", "")},
		{"replace second run", "file.line", false, map[string]any{"name": f, "mode": "replace", "match": "^C$", "content": "C"}, true,
			"No changes needed to be made", nil, nil},
		{"delete", "file.line", false, map[string]any{"name": f, "mode": "delete", "content": "new"}, true, "Changes were made",
			map[string]any{"diff": anything}, fileIs(f, "top\na\nb\nC\n", "")},
		{"delete second run", "file.line", false, map[string]any{"name": f, "mode": "delete", "content": "new"}, true,
			"No changes needed to be made", nil, nil},
		{"insert at start", "file.line", false, map[string]any{"name": f, "mode": "insert", "location": "start", "content": "first"},
			true, "Changes were made", map[string]any{"diff": anything}, fileIs(f, "first\ntop\na\nb\nC\n", "")},
		{"insert at end", "file.line", false, map[string]any{"name": f, "mode": "insert", "location": "end", "content": "last"},
			true, "Changes were made", map[string]any{"diff": anything}, fileIs(f, "first\ntop\na\nb\nC\nlast\n", "")},
		{"backup", "file.line", false, map[string]any{"name": f, "mode": "replace", "match": "last", "content": "end", "backup": true},
			true, "Changes were made", map[string]any{"diff": anything}, fileIs(f, "first\ntop\na\nb\nC\nend\n", "")},
		{"no mode", "file.line", false, map[string]any{"name": f, "content": "x"}, false,
			"Mode was not defined. How to process the file?", nil, nil},
		{"no content", "file.line", false, map[string]any{"name": f, "mode": "ensure"}, false,
			"Content can only be empty if mode is ['delete']", nil, nil},
		{"nowhere", "file.line", false, map[string]any{"name": f, "mode": "ensure", "content": "x"}, false,
			"Wrong conditions? Unable to ensure line without knowing where to put it before and/or after.", nil, nil},
		{"missing", "file.line", false, map[string]any{"name": h.path("nope"), "mode": "ensure", "content": "x", "after": "a"}, false,
			h.path("nope") + ": file not found", nil, absent(h.path("nope"))},
		{"created", "file.line", false, map[string]any{"name": h.path("new"), "mode": "insert", "location": "end", "content": "zzz",
			"create": true, "file_mode": "0600"}, true, "Changes were made", map[string]any{"diff": "--- \n+++ \n@@ -0,0 +1 @@\n+zzz"},
			fileIs(h.path("new"), "zzz", "0600")},
	})
}

func TestUnifiedDiff(t *testing.T) {
	a := splitLines("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", true)
	b := splitLines("1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\neleven\n12\n", true)
	want := "--- \n+++ \n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -9,4 +9,5 @@\n 9\n 10\n 11\n+eleven\n 12\n"
	if got := getDiff(a, b); got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := getDiff(a, a); got != "" {
		t.Errorf("no change: %q", got)
	}
	if got := splitLines("a\r\nb\rc\n\nd", false); !reflect.DeepEqual(got, []string{"a", "b", "c", "", "d"}) {
		t.Errorf("splitLines: %q", got)
	}
}
