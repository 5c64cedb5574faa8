package file

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestEditFunctions holds what Salt 3006.6's file.replace, file.search,
// file.sed and file.blockreplace returned and did on the same files
// (salt-call --local).
func TestEditFunctions(t *testing.T) {
	reg := registry(t)
	dir := t.TempDir()
	a := write(t, filepath.Join(dir, "a"), "port = 80\nhost = x\n", 0o640)
	b := write(t, filepath.Join(dir, "b"), "a\nb\n", 0o644)
	c := write(t, filepath.Join(dir, "c"), "hello world\nfoo\n", 0o644)
	nope := filepath.Join(dir, "nope")
	cases := []struct {
		name   string
		fun    string
		args   []any
		kwargs map[string]any
		want   any
		err    string
		file   string
		body   string
	}{
		{"replace", "file.replace", []any{a, "^port = .*$", "port = 8080"}, nil,
			"--- \n+++ \n@@ -1,2 +1,2 @@\n-port = 80\n+port = 8080\n host = x\n", "", a, "port = 8080\nhost = x\n"},
		{"replace made a backup", "file.read", []any{a + ".bak"}, nil, "port = 80\nhost = x\n", "", "", ""},
		{"replace, no match", "file.replace", []any{a, "nomatch", "x"}, map[string]any{"show_changes": false}, false, "", a,
			"port = 8080\nhost = x\n"},
		{"replace, dry run", "file.replace", []any{a, "port", "PORT"}, map[string]any{"dry_run": true, "show_changes": false},
			true, "", a, "port = 8080\nhost = x\n"},
		{"replace, search_only", "file.replace", []any{a, "^host", ""}, map[string]any{"search_only": true}, true, "", "", ""},
		{"replace, missing", "file.replace", []any{nope, "a", "b"}, nil, nil, "File not found: " + nope, "", ""},
		{"replace, missing ignored", "file.replace", []any{nope, "a", "b"}, map[string]any{"ignore_if_missing": true}, false, "", "", ""},
		{"replace, both of append and prepend", "file.replace", []any{a, "a", "b"},
			map[string]any{"append_if_not_found": true, "prepend_if_not_found": true}, nil,
			"Only one of append and prepend_if_not_found is permitted", "", ""},
		{"replace, bad group reference where nothing matches", "file.replace", []any{a, "^debug.*", `debug = \1`}, nil, nil,
			"invalid group reference 1 at position 9", "", ""},
		{"search", "file.search", []any{a, "^host"}, nil, true, "", "", ""},
		{"search, case", "file.search", []any{a, "^HOST"}, nil, false, "", "", ""},
		{"search, flags name replaces MULTILINE", "file.search", []any{a, "^HOST"}, map[string]any{"flags": "IGNORECASE"},
			false, "", "", ""},
		{"search, flags list", "file.search", []any{a, "^HOST"}, map[string]any{"flags": []any{"IGNORECASE", "MULTILINE"}},
			true, "", "", ""},
		{"search, bad flag", "file.search", []any{a, "x"}, map[string]any{"flags": []any{"NOPE"}}, nil,
			"Invalid re flag given: NOPE", "", ""},
		{"search, missing ignored", "file.search", []any{nope, "x"}, map[string]any{"ignore_if_missing": true}, false, "", "", ""},
		{"search, missing", "file.search", []any{nope, "x"}, nil, nil, "File not found: " + nope, "", ""},
		{"sed, missing", "file.sed", []any{nope, "a", "b"}, nil, false, "", "", ""},
		{"blockreplace, append", "file.blockreplace", []any{b}, map[string]any{"content": "hi", "append_if_not_found": true},
			"--- \n+++ \n@@ -1,2 +1,4 @@\n a\n b\n+#-- start managed zone --\n+hi#-- end managed zone --\n", "", b,
			"a\nb\n#-- start managed zone --\nhi#-- end managed zone --\n"},
		{"blockreplace, no show", "file.blockreplace", []any{b}, map[string]any{"content": "bye", "show_changes": false},
			true, "", b, "a\nb\n#-- start managed zone --\nbye#-- end managed zone --\n"},
		{"blockreplace, no change", "file.blockreplace", []any{b}, map[string]any{"content": "bye", "show_changes": false},
			false, "", "", ""},
		{"blockreplace, markers missing", "file.blockreplace", []any{c}, map[string]any{"content": "x"}, nil,
			"Cannot edit marked block. Markers were not found in file.", "", ""},
	}
	for _, tc := range cases {
		got, err := reg.Call(context.Background(), tc.fun, tc.args, tc.kwargs, nil)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: got %v, %v; want error %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, %v; want %#v", tc.name, got, err, tc.want)
			continue
		}
		if tc.file != "" {
			if body, _ := os.ReadFile(tc.file); string(body) != tc.body {
				t.Errorf("%s: %s holds %q, want %q", tc.name, tc.file, body, tc.body)
			}
		}
	}
	st, err := Stats(a, "", false)
	if err != nil || st["mode"] != "0640" {
		t.Errorf("file.replace changed %s's mode: %v %v", a, st["mode"], err)
	}
	out, err := reg.Call(context.Background(), "file.sed", []any{c, "wor", "WOR"}, nil, nil)
	m, _ := out.(map[string]any)
	if err != nil || m["retcode"] != int64(0) || m["stdout"] != "" || m["stderr"] != "" {
		t.Fatalf("file.sed: %#v, %v", out, err)
	}
	for p, want := range map[string]string{c: "hello WORld\nfoo\n", c + ".bak": "hello world\nfoo\n"} {
		if body, _ := os.ReadFile(p); string(body) != want {
			t.Errorf("file.sed: %s holds %q, want %q", p, body, want)
		}
	}
}
