package agentcmd

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseEventData(t *testing.T) {
	cases := []struct {
		args []string
		want map[string]any
		err  string
	}{
		{nil, map[string]any{}, ""},
		{[]string{"app=web", "version=42", "ratio=0.5", "canary=yes", "off=off", "none=~", "empty=", "list=[1, 2]", "url=http://x/?a=b"},
			map[string]any{"app": "web", "version": int64(42), "ratio": 0.5, "canary": true, "off": false, "none": nil, "empty": nil,
				"list": []any{uint64(1), uint64(2)}, "url": "http://x/?a=b"}, ""},
		{[]string{`{"app": "web", "n": 1}`}, map[string]any{"app": "web", "n": uint64(1)}, ""},
		{[]string{`{foo: Foo}`}, map[string]any{"foo": "Foo"}, ""},
		{[]string{`{"app": "web"}`, "app=db", "x=1"}, map[string]any{"app": "web", "x": int64(1)}, ""},
		{[]string{"[1, 2]"}, nil, "neither"},
		{[]string{"justtext"}, nil, "neither"},
		{[]string{`{"a":1}`, `{"b":2}`}, nil, "more than one"},
	}
	for _, tc := range cases {
		got, err := ParseEventData(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseEventData(%q) error = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseEventData(%q) = %#v, %v\nwant %#v", tc.args, got, err, tc.want)
		}
	}
}

// FUN ARG… KEY=VALUE…: positional arguments stay in order, pairs become
// keyword arguments.
func TestParseCall(t *testing.T) {
	c, err := ParseCall([]string{"cmd.run", "ls /", "cwd=/tmp", "2"})
	if err != nil {
		t.Fatal(err)
	}
	want := Call{Fun: "cmd.run", Args: []any{"ls /", int64(2)}, Kwargs: map[string]any{"cwd": "/tmp"}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("ParseCall = %#v, want %#v", c, want)
	}
}
