package alias

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/aliases"
	"github.com/brinehq/brine/state"
)

const orig = "# See man 5 aliases for format\npostmaster:    root\nroot: admin@example.com  # the admin\n\n" +
	"webmaster : root, ops\nabuse:root\nlists: x, y\nnocolon here\n  indented: z\n"

// setup writes the aliases file Salt 3006.6 was run on (aliases.file set
// to a copy) and puts a newaliases on PATH that counts its runs.
func setup(t *testing.T) (*function.Registry, string, func() int) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "aliases")
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	bin, marker := filepath.Join(dir, "bin"), filepath.Join(dir, "newaliases.runs")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho run >> " + marker + "\n"
	if err := os.WriteFile(filepath.Join(bin, "newaliases"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	env := &modules.Env{Opts: func() map[string]any { return map[string]any{"aliases.file": path} }}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	if err := reg.RegisterAll(aliases.Module(env)); err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		b, _ := os.ReadFile(marker)
		return strings.Count(string(b), "run")
	}
	return reg, path, runs
}

type want struct {
	result  any
	comment string
	changes map[string]any
}

// TestAlias runs the SLS Salt 3006.6 was run on three times, test mode
// first, and holds Salt's returns, the file it left and how often
// newaliases ran (once per change).
func TestAlias(t *testing.T) {
	reg, path, runs := setup(t)
	sls := []struct {
		id, fun string
		kwargs  map[string]any
	}{
		{"already", "alias.present", map[string]any{"name": "root", "target": "admin@example.com"}},
		{"list", "alias.present", map[string]any{"name": "info", "target": []any{"a@example.com", "b@example.com"}}},
		{"replace", "alias.present", map[string]any{"name": "postmaster", "target": "ops"}},
		{"spaced", "alias.absent", map[string]any{"name": "webmaster"}},
		{"gone", "alias.absent", map[string]any{"name": "nothere"}},
		{"removed", "alias.absent", map[string]any{"name": "abuse"}},
		{"listsame", "alias.present", map[string]any{"name": "lists", "target": []any{"x", "y"}}},
	}
	after := "# See man 5 aliases for format\npostmaster: ops\nroot: admin@example.com  # the admin\n\n" +
		"webmaster : root, ops\nlists: x, y\n\n  indented: z\ninfo: a@example.com, b@example.com\n"
	alias := func(n string) map[string]any { return map[string]any{"alias": n} }
	runsWant := []struct {
		test     bool
		wants    []want
		file     string
		newalias int
	}{
		{true, []want{
			{true, "Alias root already present", nil},
			{nil, "Alias info -> ['a@example.com', 'b@example.com'] is set to be added", nil},
			{nil, "Alias postmaster -> ops is set to be added", nil},
			{true, "Alias webmaster already absent", nil},
			{true, "Alias nothere already absent", nil},
			{nil, "Alias abuse is set to be removed", nil},
			{true, "Alias lists already present", nil},
		}, orig, 0},
		{false, []want{
			{true, "Alias root already present", nil},
			{true, "Set email alias info -> ['a@example.com', 'b@example.com']", alias("info")},
			{true, "Set email alias postmaster -> ops", alias("postmaster")},
			{true, "Alias webmaster already absent", nil},
			{true, "Alias nothere already absent", nil},
			{true, "Removed alias abuse", alias("abuse")},
			{true, "Alias lists already present", nil},
		}, after, 3},
		{false, []want{
			{true, "Alias root already present", nil},
			{true, "Alias info already present", nil},
			{true, "Alias postmaster already present", nil},
			{true, "Alias webmaster already absent", nil},
			{true, "Alias nothere already absent", nil},
			{true, "Alias abuse already absent", nil},
			{true, "Alias lists already present", nil},
		}, after, 3},
	}
	for n, run := range runsWant {
		for i, c := range sls {
			ctx := state.With(context.Background(), &state.Running{Test: run.test, ID: c.id})
			out, err := reg.Call(ctx, c.fun, nil, c.kwargs, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, w := out.(state.Result), run.wants[i]
			if state.Value(r.Result) != w.result || r.Comment != w.comment ||
				!(reflect.DeepEqual(r.Changes, w.changes) || len(r.Changes) == 0 && len(w.changes) == 0) {
				t.Errorf("run %d, %s: got %v %q %#v\nwant %v %q %#v", n+1, c.id, state.Value(r.Result), r.Comment, r.Changes,
					w.result, w.comment, w.changes)
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != run.file {
			t.Errorf("run %d: file\n%q\nwant\n%q", n+1, b, run.file)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
			t.Errorf("run %d: mode %v, want the file's 0640 kept", n+1, st.Mode())
		}
		if got := runs(); got != run.newalias {
			t.Errorf("run %d: newaliases ran %d times, want %d", n+1, got, run.newalias)
		}
	}
}
