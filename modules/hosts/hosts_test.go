package hosts

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// TestFunctions runs the calls Salt 3006.6 was given (salt-call --local,
// hosts.file set to a copy of the same file), in the same order, and
// holds its returns and the file it left.
func TestFunctions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte("127.0.0.1\tlocalhost\n# c\n10.0.0.5 a b # note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{Opts: func() map[string]any { return map[string]any{"hosts.file": path} }})); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fun    string
		args   []any
		kwargs map[string]any
		want   any
	}{
		{"hosts.list_hosts", nil, nil, map[string]any{"127.0.0.1": map[string]any{"aliases": []any{"localhost"}},
			"comment-0": []any{"# c"}, "10.0.0.5": map[string]any{"aliases": []any{"a", "b"}, "comment": "note"}}},
		{"hosts.get_ip", []any{"b"}, nil, "10.0.0.5"},
		{"hosts.get_ip", []any{"zz"}, nil, ""},
		{"hosts.get_alias", []any{"10.0.0.5"}, nil, []any{"a", "b"}},
		{"hosts.get_alias", []any{"1.1.1.1"}, nil, []any{}},
		{"hosts.has_pair", []any{"10.0.0.5", "a"}, nil, true},
		{"hosts.has_pair", []any{"10.0.0.5", []any{"a", "b"}}, nil, true},
		{"hosts.has_pair", []any{"10.0.0.5", []any{"a", "x"}}, nil, false},
		{"hosts.set_comment", []any{"1.1.1.1", "x"}, nil, false},
		{"hosts.set_comment", []any{"10.0.0.5", "new"}, nil, true},
		{"hosts.set_host", []any{"10.0.0.9", "x y"}, map[string]any{"comment": "cc"}, true},
		{"hosts.rm_host", []any{"10.0.0.5", "a"}, nil, true},
		{"hosts.add_host", []any{"10.0.0.5", "z"}, nil, true},
	} {
		got, err := reg.Call(context.Background(), c.fun, c.args, c.kwargs, nil)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %v: got %#v, %v; want %#v", c.fun, c.args, got, err, c.want)
		}
	}
	want := "127.0.0.1\t\tlocalhost\n# c\n10.0.0.5\t\tb z\t\t# new\n10.0.0.9\t\tx y\t\t# cc\n"
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Errorf("hosts file holds %q (%v), want %q", b, err, want)
	}
}
