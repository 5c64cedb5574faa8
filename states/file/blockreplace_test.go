package file

import "testing"

// TestBlockreplace holds the returns and files Salt 3006.6's
// file.blockreplace gave on the same inputs (salt-call --local).
func TestBlockreplace(t *testing.T) {
	h := newHarness(t)
	zone := "line1\n#-- start managed zone --\nold\n#-- end managed zone --\nline3\n"
	f1, f2, f3, f4, f5, f6, f7 := h.path("f1"), h.path("f2"), h.path("f3"), h.path("f4"), h.path("f5"), h.path("f6"), h.path("f7")
	h.write(f1, zone, 0o640)
	h.write(f2, "a\nb\n", 0o644)
	h.write(f3, "a\nb\n", 0o644)
	h.write(f4, "x\nmatch here\ny\n", 0o644)
	h.write(f5, "no newline", 0o644)
	h.write(f6, "x\n#-- start managed zone --\nunterminated\n", 0o644)
	h.write(f7, zone, 0o644)
	replaced := "--- \n+++ \n@@ -1,5 +1,6 @@\n line1\n #-- start managed zone --\n-old\n+new1\n+new2\n #-- end managed zone --\n line3\n"
	newZone := "line1\n#-- start managed zone --\nnew1\nnew2\n#-- end managed zone --\nline3\n"
	appended := "--- \n+++ \n@@ -1,2 +1,5 @@\n a\n b\n+#-- start managed zone --\n+hello\n+#-- end managed zone --\n"
	prepended := "--- \n+++ \n@@ -1,2 +1,5 @@\n+# BEGIN\n+hello\n+# END\n a\n b\n"
	inserted := "--- \n+++ \n@@ -1,3 +1,6 @@\n x\n match here\n+#-- start managed zone --\n+ins\n+#-- end managed zone --\n y\n"
	noNewline := "--- \n+++ \n@@ -1 +1,3 @@\n-no newline+no newline\n+#-- start managed zone --\n+c#-- end managed zone --\n"
	replace := map[string]any{"name": f1, "content": "new1\nnew2\n"}
	appendArgs := map[string]any{"name": f2, "content": "hello", "append_if_not_found": true}
	h.steps([]step{
		{"replace, test mode", "file.blockreplace", true, replace, nil, "Changes would be made",
			map[string]any{"diff": replaced}, fileIs(f1, zone, "0640")},
		{"replace", "file.blockreplace", false, replace, true, "Changes were made", map[string]any{"diff": replaced},
			func(h *harness) string {
				if msg := fileIs(f1+".bak", zone, "0640")(h); msg != "" {
					return msg
				}
				return fileIs(f1, newZone, "0640")(h)
			}},
		{"replace, second run", "file.blockreplace", false, replace, true, "No changes needed to be made", nil, nil},
		{"replace, second run, test mode", "file.blockreplace", true, replace, true, "No changes needed to be made", nil, nil},
		{"append", "file.blockreplace", false, appendArgs, true, "Changes were made", map[string]any{"diff": appended},
			fileIs(f2, "a\nb\n#-- start managed zone --\nhello\n#-- end managed zone --\n", "")},
		{"append, second run", "file.blockreplace", false, appendArgs, true, "No changes needed to be made", nil, nil},
		{"prepend, own markers, no backup", "file.blockreplace", false, map[string]any{"name": f3, "marker_start": "# BEGIN",
			"marker_end": "# END", "content": "hello", "prepend_if_not_found": true, "backup": false}, true, "Changes were made",
			map[string]any{"diff": prepended}, func(h *harness) string {
				if msg := absent(f3 + ".bak")(h); msg != "" {
					return msg
				}
				return fileIs(f3, "# BEGIN\nhello\n# END\na\nb\n", "")(h)
			}},
		{"insert after match", "file.blockreplace", false, map[string]any{"name": f4, "content": "ins",
			"insert_after_match": "^match"}, true, "Changes were made", map[string]any{"diff": inserted},
			fileIs(f4, "x\nmatch here\n#-- start managed zone --\nins\n#-- end managed zone --\ny\n", "")},
		{"append_newline False", "file.blockreplace", false, map[string]any{"name": f5, "content": "c",
			"append_if_not_found": true, "append_newline": false}, true, "Changes were made", map[string]any{"diff": noNewline},
			fileIs(f5, "no newline\n#-- start managed zone --\nc#-- end managed zone --\n", "")},
		{"unterminated", "file.blockreplace", false, map[string]any{"name": f6, "content": "c"}, false,
			"Encountered error managing block: Unterminated marked block. End of file reached before marker_end.. See the log for details.",
			nil, nil},
		{"missing file", "file.blockreplace", false, map[string]any{"name": h.path("f2x"), "content": "c"}, false,
			h.path("f2x") + ": file not found", nil, nil},
		{"markers not found", "file.blockreplace", false, map[string]any{"name": f4, "marker_start": "#S", "marker_end": "#E",
			"content": "c"}, false,
			"Encountered error managing block: Cannot edit marked block. Markers were not found in file.. See the log for details.",
			nil, nil},
		{"show_changes False, test mode", "file.blockreplace", true, map[string]any{"name": f7, "content": "z", "show_changes": false},
			nil, "Changes would be made", map[string]any{"diff": true}, fileIs(f7, zone, "")},
		{"show_changes False", "file.blockreplace", false, map[string]any{"name": f7, "content": "z", "show_changes": false},
			true, "Changes were made", map[string]any{"diff": true},
			fileIs(f7, "line1\n#-- start managed zone --\nz\n#-- end managed zone --\nline3\n", "")},
		{"two of append/prepend/insert", "file.blockreplace", false, map[string]any{"name": f7, "content": "z",
			"append_if_not_found": true, "insert_before_match": "x"}, false,
			"Encountered error managing block: Only one of append_if_not_found, prepend_if_not_found, insert_before_match, " +
				"and insert_after_match is permitted. See the log for details.", nil, nil},
	})
}

// TestBlockreplaceSources holds what Salt 3006.6 made of a block from
// rendered sources (salt-call --local).
func TestBlockreplaceSources(t *testing.T) {
	h := newHarness(t)
	h.files.Tree["base"]["blk/part1"] = "from {{ who }}\n"
	h.files.Tree["base"]["blk/part2"] = "second {{ x }}"
	f, g := h.path("f"), h.path("g")
	h.write(f, "a\n", 0o644)
	h.write(g, "b\n", 0o644)
	h.steps([]step{
		{"source with defaults", "file.blockreplace", false, map[string]any{"name": f, "source": "salt://blk/part1",
			"defaults": map[string]any{"who": "me"}, "append_if_not_found": true}, true, "Changes were made",
			map[string]any{"diff": "--- \n+++ \n@@ -1 +1,4 @@\n a\n+#-- start managed zone --\n+from me\n+#-- end managed zone --\n"},
			fileIs(f, "a\n#-- start managed zone --\nfrom me\n#-- end managed zone --\n", "")},
		{"sources after content", "file.blockreplace", false, map[string]any{"name": g,
			"sources": []any{"salt://blk/part1", "salt://blk/part2"}, "context": map[string]any{"who": "ctx", "x": int64(2)},
			"content": "first\n", "prepend_if_not_found": true}, true, "Changes were made",
			map[string]any{"diff": "--- \n+++ \n@@ -1 +1,6 @@\n+#-- start managed zone --\n+first\n+from ctx\n+second 2\n+#-- end managed zone --\n b\n"},
			fileIs(g, "#-- start managed zone --\nfirst\nfrom ctx\nsecond 2\n#-- end managed zone --\nb\n", "")},
		{"missing source", "file.blockreplace", false, map[string]any{"name": g, "source": "salt://blk/nope"}, false,
			"Failed to load template file salt://blk/nope", nil, nil},
	})
}

// TestBlockreplaceLines holds what Salt 3006.6 did with CRLF files,
// markers inside lines, insert_before_match and empty content
// (salt-call --local).
func TestBlockreplaceLines(t *testing.T) {
	h := newHarness(t)
	crlf, crlf2, before, inline, empty := h.path("crlf"), h.path("crlf2"), h.path("before"), h.path("inline"), h.path("empty")
	h.write(crlf, "x\r\nmatch here\r\ny\r\n", 0o644)
	h.write(crlf2, "h\r\n#-- start managed zone --\r\nold\r\n#-- end managed zone -- tail\r\n", 0o644)
	h.write(before, "x\nmatch here\ny\n", 0o644)
	h.write(inline, "pre # BEGIN post\nold\n  # END trailing\nafter\n", 0o644)
	h.write(empty, "e\n", 0o644)
	h.steps([]step{
		{"CRLF file, block appended", "file.blockreplace", false, map[string]any{"name": crlf, "content": "a\nb",
			"append_if_not_found": true}, true, "Changes were made", map[string]any{"diff": "--- \n+++ \n@@ -1,3 +1,7 @@\n x\r\n match here\r\n" +
			" y\r\n+#-- start managed zone --\r\n+a\r\n+b\r\n+#-- end managed zone --\r\n"},
			fileIs(crlf, "x\r\nmatch here\r\ny\r\n#-- start managed zone --\r\na\r\nb\r\n#-- end managed zone --\r\n", "")},
		{"CRLF file, block replaced, end marker line kept", "file.blockreplace", false, map[string]any{"name": crlf2, "content": "new"},
			true, "Changes were made", map[string]any{"diff": "--- \n+++ \n@@ -1,4 +1,4 @@\n h\r\n #-- start managed zone --\r\n-old\r\n+new\r\n" +
				" #-- end managed zone -- tail\r\n"},
			fileIs(crlf2, "h\r\n#-- start managed zone --\r\nnew\r\n#-- end managed zone -- tail\r\n", "")},
		{"insert before match", "file.blockreplace", false, map[string]any{"name": before, "content": "ins",
			"insert_before_match": "^match", "backup": false}, true, "Changes were made",
			map[string]any{"diff": "--- \n+++ \n@@ -1,3 +1,6 @@\n x\n+#-- start managed zone --\n+ins\n+#-- end managed zone --\n match here\n y\n"},
			fileIs(before, "x\n#-- start managed zone --\nins\n#-- end managed zone --\nmatch here\ny\n", "")},
		{"markers inside lines", "file.blockreplace", false, map[string]any{"name": inline, "marker_start": "# BEGIN",
			"marker_end": "# END", "content": "x\n"}, true, "Changes were made",
			map[string]any{"diff": "--- \n+++ \n@@ -1,4 +1,4 @@\n pre # BEGIN post\n-old\n-  # END trailing\n+x\n+# END trailing\n after\n"},
			fileIs(inline, "pre # BEGIN post\nx\n# END trailing\nafter\n", "")},
		{"no content", "file.blockreplace", false, map[string]any{"name": empty, "append_if_not_found": true}, true,
			"Changes were made", map[string]any{"diff": "--- \n+++ \n@@ -1 +1,4 @@\n e\n+#-- start managed zone --\n+\n+#-- end managed zone --\n"},
			fileIs(empty, "e\n#-- start managed zone --\n\n#-- end managed zone --\n", "")},
	})
}
