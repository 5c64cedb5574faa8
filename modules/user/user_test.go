package user

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/modules"
)

func TestUsers(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	root := map[string]any{"root": "testdata"}
	alice := map[string]any{"name": "alice", "passwd": "x", "uid": 1000, "gid": 1000, "home": "/home/alice", "shell": "/bin/zsh",
		"fullname": "Alice Liddell", "roomnumber": "Room 1", "workphone": "555-1", "homephone": "555-2",
		"other": "likes rabbits, tea", "groups": []any{"adm", "alice", "dup", "staff"}}
	bob := map[string]any{"name": "bob", "passwd": "x", "uid": 1001, "gid": 100, "home": "/home/bob", "shell": "/bin/sh",
		"fullname": "Bob", "roomnumber": "", "workphone": "", "homephone": "", "other": "", "groups": []any{"users"}}
	cases := []struct {
		fun    string
		args   []any
		kwargs map[string]any
		want   any
		err    string
	}{
		{fun: "user.info", args: []any{"alice"}, kwargs: root, want: alice},
		{fun: "user.info", args: []any{"bob", "testdata"}, want: bob},
		{fun: "user.info", args: []any{"nobody-x"}, kwargs: root, want: map[string]any{}},
		{fun: "user.info", args: []any{"bad"}, kwargs: root, want: map[string]any{}},
		{fun: "user.info", args: []any{"root"}, kwargs: map[string]any{"root": "/nonexistent"}, err: "no such file or directory"},
		{fun: "user.info", err: "missing argument"},
		{fun: "user.list_users", kwargs: root, want: []any{"alice", "bob", "root", "syslog"}},
		{fun: "user.list_groups", args: []any{"alice"}, kwargs: root, want: []any{"adm", "alice", "dup", "staff"}},
		{fun: "user.list_groups", args: []any{"syslog"}, kwargs: root, want: []any{"adm"}},
		{fun: "user.list_groups", args: []any{"nobody-x"}, kwargs: root, want: []any{}},
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
	got, err := reg.Call(context.Background(), "user.getent", nil, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := got.([]any); len(l) != 4 || !reflect.DeepEqual(l[2], alice) || !reflect.DeepEqual(l[3], bob) {
		t.Errorf("user.getent = %v", got)
	}
	// This machine's root user.
	got, err = reg.Call(context.Background(), "user.info", []any{"root"}, nil, nil)
	if m, _ := got.(map[string]any); err != nil || m["uid"] != 0 || m["home"] != "/root" {
		t.Errorf("user.info root = %v, %v", got, err)
	}
}
