package file

import "testing"

// TestSerialize holds what Salt 3006.6's file.serialize wrote and
// returned on the same data sets (salt-call --local).
func TestSerialize(t *testing.T) {
	h := newHarness(t)
	yml, js, merge, mergeJSON := h.path("out.yml"), h.path("out.json"), h.path("merge.yml"), h.path("merge.json")
	h.write(merge, "a: 1\nz:\n  old: true\n", 0o644)
	h.write(mergeJSON, `{"a": 1}`, 0o644)
	dataset := map[string]any{"zeta": int64(1), "alpha": "yes",
		"mid":   []any{"a", map[string]any{"b": int64(2), "c": []any{int64(1), int64(2)}}, "012"},
		"empty": map[string]any{}, "emptyl": []any{}, "none": nil, "text": "multi\nline", "float": 1.5,
		"str_num": "1.0", "colon": "a: b"}
	wantYAML := "alpha: 'yes'\ncolon: 'a: b'\nempty: {}\nemptyl: []\nfloat: 1.5\nmid:\n- a\n- b: 2\n  c:\n  - 1\n  - 2\n- '012'\n" +
		"none: null\nstr_num: '1.0'\ntext: 'multi\n\n  line'\nzeta: 1\n"
	jsonData := map[string]any{"zeta": int64(1), "alpha": "yes", "mid": []any{"a", map[string]any{"b": int64(2)}},
		"none": nil, "uni": "é", "float": 1.5}
	wantJSON := "{\n  \"alpha\": \"yes\",\n  \"float\": 1.5,\n  \"mid\": [\n    \"a\",\n    {\n      \"b\": 2\n    }\n  ],\n" +
		"  \"none\": null,\n  \"uni\": \"é\",\n  \"zeta\": 1\n}\n"
	mergeDiff := map[string]any{"z": map[string]any{"new": map[string]any{"new": int64(1), "old": "<_null_>"}},
		"b": map[string]any{"new": int64(2), "old": "<_null_>"}}
	mergeArgs := map[string]any{"name": merge, "merge_if_exists": true,
		"dataset": map[string]any{"b": int64(2), "z": map[string]any{"new": int64(1)}}}
	h.steps([]step{
		{"yaml, test mode", "file.serialize", true, map[string]any{"name": yml, "dataset": dataset}, nil,
			"Dataset will be serialized and stored into " + yml, map[string]any{"newfile": yml}, absent(yml)},
		{"yaml", "file.serialize", false, map[string]any{"name": yml, "dataset": dataset}, true,
			"File " + yml + " updated", map[string]any{"diff": "New file"}, fileIs(yml, wantYAML, "0644")},
		{"yaml, second run", "file.serialize", false, map[string]any{"name": yml, "dataset": dataset}, true,
			"File " + yml + " is in the correct state", nil, nil},
		{"yaml, second run, test mode", "file.serialize", true, map[string]any{"name": yml, "dataset": dataset}, true,
			"The file " + yml + " is in the correct state", nil, nil},
		{"json", "file.serialize", false, map[string]any{"name": js, "serializer": "json", "dataset": jsonData}, true,
			"File " + js + " updated", map[string]any{"diff": "New file"}, fileIs(js, wantJSON, "")},
		{"merge, test mode", "file.serialize", true, mergeArgs, nil, "Dataset will be serialized and stored into " + merge,
			map[string]any{"diff": mergeDiff}, fileIs(merge, "a: 1\nz:\n  old: true\n", "")},
		{"merge", "file.serialize", false, mergeArgs, true, "File " + merge + " updated", map[string]any{"diff": mergeDiff},
			fileIs(merge, "a: 1\nb: 2\nz:\n  new: 1\n  old: true\n", "")},
		{"merge, nothing new", "file.serialize", false, map[string]any{"name": mergeJSON, "formatter": "json",
			"merge_if_exists": true, "dataset": map[string]any{"a": int64(1)}}, true,
			"The file " + mergeJSON + " is in the correct state", nil, fileIs(mergeJSON, `{"a": 1}`, "")},
		{"serializer and formatter", "file.serialize", false, map[string]any{"name": h.path("x"), "serializer": "json",
			"formatter": "yaml", "dataset": map[string]any{}}, false, "Only one of serializer and formatter are allowed", nil, nil},
		{"unknown serializer", "file.serialize", false, map[string]any{"name": h.path("x"), "serializer": "plain",
			"dataset": map[string]any{}}, false,
			"The plain serializer could not be found. It either does not exist or its prerequisites are not installed.", nil, nil},
		{"no dataset", "file.serialize", false, map[string]any{"name": h.path("x")}, false,
			"Neither 'dataset' nor 'dataset_pillar' was defined", nil, nil},
		{"create False", "file.serialize", false, map[string]any{"name": h.path("x"), "create": false,
			"dataset": map[string]any{"a": int64(1)}}, true, "File " + h.path("x") + " is not present and is not set for creation",
			nil, absent(h.path("x"))},
		{"serializer_opts", "file.serialize", false, map[string]any{"name": h.path("opts.json"), "serializer": "json",
			"serializer_opts": []any{map[string]any{"indent": int64(4)}},
			"dataset":         map[string]any{"b": []any{int64(1), int64(2)}, "a": int64(1)}}, true,
			"File " + h.path("opts.json") + " updated", map[string]any{"diff": "New file"},
			fileIs(h.path("opts.json"), "{\n    \"a\": 1,\n    \"b\": [\n        1,\n        2\n    ]\n}\n", "")},
		{"mode", "file.serialize", false, map[string]any{"name": h.path("mode.yml"), "mode": int64(600),
			"dataset": []any{int64(1), int64(2)}}, true, "File " + h.path("mode.yml") + " updated",
			map[string]any{"diff": "New file"}, fileIs(h.path("mode.yml"), "- 1\n- 2\n", "0600")},
		{"dataset_pillar", "file.serialize", false, map[string]any{"name": h.path("p.json"), "serializer": "json",
			"dataset_pillar": "users"}, true, "File " + h.path("p.json") + " updated", map[string]any{"diff": "New file"},
			fileIs(h.path("p.json"), "{\n  \"key\": \"secret\"\n}\n", "")},
		{"written as serialized, not line by line (U+2028 kept)", "file.serialize", false, map[string]any{"name": h.path("ls.json"),
			"serializer": "json", "dataset": map[string]any{"u": "a\u2028b"}}, true, "File " + h.path("ls.json") + " updated",
			map[string]any{"diff": "New file"}, fileIs(h.path("ls.json"), "{\n  \"u\": \"a\u2028b\"\n}\n", "")},
		{"encoding: YAML keeps non-ASCII", "file.serialize", false, map[string]any{"name": h.path("u.yml"), "encoding": "utf-8",
			"dataset": map[string]any{"unicode": "héllo wörld", "ls": "a\u2028b"}}, true, "File " + h.path("u.yml") + " updated",
			map[string]any{"diff": "New file"}, fileIs(h.path("u.yml"), "ls: 'a\u2028  b'\nunicode: héllo wörld\n", "")},
		{"encoding other than UTF-8", "file.serialize", false, map[string]any{"name": h.path("l.yml"), "encoding": "latin-1",
			"dataset": map[string]any{"a": "b"}}, false, "encoding latin-1 is not supported: brine writes files as UTF-8", nil,
			absent(h.path("l.yml"))},
		{"changed, show_changes False, test mode", "file.serialize", true, map[string]any{"name": yml, "show_changes": false,
			"dataset": map[string]any{"a": int64(1)}}, nil, "Dataset will be serialized and stored into " + yml,
			map[string]any{"diff": "<show_changes=False>"}, fileIs(yml, wantYAML, "")},
	})
}
