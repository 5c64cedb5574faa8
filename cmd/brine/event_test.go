package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
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
		got, err := parseEventData(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseEventData(%q) error = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseEventData(%q) = %#v, %v\nwant %#v", tc.args, got, err, tc.want)
		}
	}
}

func TestPrintEventSaltFormat(t *testing.T) {
	ev := &bus.Event{ID: "01936f3c-0000-7000-8000-000000000000", Tag: "salt/cloud/web1/created", Time: time.Date(2026, 11, 21, 22, 48, 14, 123456000, time.UTC),
		Data: json.RawMessage(`{"name":"web1","_stamp":"2026-11-21T22:48:14.123456","ips":["10.0.0.1"]}`)}
	var b bytes.Buffer
	if err := printEvent(&b, ev, false, false); err != nil {
		t.Fatal(err)
	}
	want := "salt/cloud/web1/created\t{\"name\": \"web1\", \"_stamp\": \"2026-11-21T22:48:14.123456\", \"ips\": [\"10.0.0.1\"]}\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
	b.Reset()
	if err := printEvent(&b, ev, true, false); err != nil {
		t.Fatal(err)
	}
	want = "salt/cloud/web1/created\t{\n    \"_stamp\": \"2026-11-21T22:48:14.123456\",\n    \"ips\": [\n        \"10.0.0.1\"\n    ],\n    \"name\": \"web1\"\n}\n"
	if b.String() != want {
		t.Errorf("pretty: got  %q\nwant %q", b.String(), want)
	}
	b.Reset()
	if err := printEvent(&b, ev, false, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"time":"2026-11-21T22:48:14.123456Z"`) || !strings.HasSuffix(b.String(), "}\n") {
		t.Errorf("json: %s", b.String())
	}
}
