package group

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/modules"
)

func TestGroups(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	root := map[string]any{"root": "testdata"}
	cases := []struct {
		fun    string
		args   []any
		kwargs map[string]any
		want   any
		err    string
	}{
		{fun: "group.info", args: []any{"adm"}, kwargs: root,
			want: map[string]any{"name": "adm", "passwd": "x", "gid": 4, "members": []any{"syslog", "alice"}}},
		{fun: "group.info", args: []any{"users", "testdata"},
			want: map[string]any{"name": "users", "passwd": "x", "gid": 100, "members": []any{}}},
		{fun: "group.info", args: []any{"nope"}, kwargs: root, want: map[string]any{}},
		{fun: "group.info", args: []any{"broken"}, kwargs: root, want: map[string]any{}},
		{fun: "group.info", args: []any{"root"}, want: map[string]any{"name": "root", "passwd": "x", "gid": 0, "members": []any{}}},
		{fun: "group.info", args: []any{"root"}, kwargs: map[string]any{"root": "/nonexistent"}, err: "no such file or directory"},
		{fun: "group.info", err: "missing argument"},
		{fun: "group.getent", kwargs: root, want: []any{
			map[string]any{"name": "root", "passwd": "x", "gid": 0, "members": []any{}},
			map[string]any{"name": "adm", "passwd": "x", "gid": 4, "members": []any{"syslog", "alice"}},
			map[string]any{"name": "staff", "passwd": "x", "gid": 50, "members": []any{"alice"}},
			map[string]any{"name": "users", "passwd": "x", "gid": 100, "members": []any{}},
			map[string]any{"name": "alice", "passwd": "x", "gid": 1000, "members": []any{}},
			map[string]any{"name": "dup", "passwd": "x", "gid": 1000, "members": []any{}},
		}},
	}
	for _, tc := range cases {
		got, err := reg.Call(context.Background(), tc.fun, tc.args, tc.kwargs, nil)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: err = %v, want %q", tc.fun, tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v %v = %#v, %v\nwant %#v", tc.fun, tc.args, tc.kwargs, got, err, tc.want)
		}
	}
}
