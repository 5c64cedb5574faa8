package aliases

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

const orig = "# See man 5 aliases for format\npostmaster:    root\nroot: admin@example.com  # the admin\n\n" +
	"webmaster : root, ops\nabuse:root\nlists: x, y\nnocolon here\n  indented: z\n"

// setup writes the aliases file Salt 3006.6 was run on (aliases.file set
// to a copy); no newaliases is on PATH.
func setup(t *testing.T) (*function.Registry, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "aliases")
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{Opts: func() map[string]any { return map[string]any{"aliases.file": path} }})); err != nil {
		t.Fatal(err)
	}
	return reg, path
}

// TestFunctions holds the aliases functions to Salt's returns on the same
// file: list_aliases with Salt's parse of every line, has_target with a
// list, an empty target refused, and no newaliases on PATH (the file is
// still written, as Salt's).
func TestFunctions(t *testing.T) {
	reg, path := setup(t)
	call := func(fun string, kw map[string]any) (any, error) {
		return reg.Call(context.Background(), fun, nil, kw, nil)
	}
	got, err := call("aliases.list_aliases", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantList := map[string]any{"postmaster": "root", "root": "admin@example.com", "\n": "", "webmaster ": "root, ops",
		"abuse": "root", "lists": "x, y", "nocolon here\n": "", "  indented": "z"}
	if !reflect.DeepEqual(got, wantList) {
		t.Errorf("list_aliases = %#v\nwant %#v", got, wantList)
	}
	cases := []struct {
		fun  string
		kw   map[string]any
		want any
		err  string
	}{
		{"aliases.get_target", map[string]any{"alias": "root"}, "admin@example.com", ""},
		{"aliases.get_target", map[string]any{"alias": "webmaster"}, "", ""},
		{"aliases.has_target", map[string]any{"alias": "lists", "target": []any{"x", "y"}}, true, ""},
		{"aliases.has_target", map[string]any{"alias": "lists", "target": "x"}, false, ""},
		{"aliases.has_target", map[string]any{"alias": "lists", "target": ""}, nil, "target can not be an empty string"},
		{"aliases.set_target", map[string]any{"alias": "", "target": "x"}, nil, "alias can not be an empty string"},
		{"aliases.set_target", map[string]any{"alias": "new", "target": "me"}, true, ""},
		{"aliases.rm_alias", map[string]any{"alias": "abuse"}, true, ""},
		{"aliases.rm_alias", map[string]any{"alias": "nothere"}, true, ""},
		{"aliases.get_target", map[string]any{"alias": "new"}, "me", ""},
	}
	t.Setenv("PATH", t.TempDir())
	for _, c := range cases {
		out, err := call(c.fun, c.kw)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %v: error %v, want %q", c.fun, c.kw, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(out, c.want) {
			t.Errorf("%s %v = %#v, %v; want %#v", c.fun, c.kw, out, err, c.want)
		}
	}
	b, _ := os.ReadFile(path)
	wantFile := "# See man 5 aliases for format\npostmaster: root\nroot: admin@example.com  # the admin\n\n" +
		"webmaster : root, ops\nlists: x, y\n\n  indented: z\nnew: me\n"
	if string(b) != wantFile {
		t.Errorf("file %q\nwant %q", b, wantFile)
	}
}
