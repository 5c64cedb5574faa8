package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

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
