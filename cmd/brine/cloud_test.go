package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brinehq/brine/cloud"
)

func TestProgressRedrawsInPlaceOnATerminal(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, tty: true, byName: map[string]*vmLine{}}
	p.Step("web1", "creating")
	p.Step("web2", "creating")
	p.Step("web1", "waiting for ip")
	p.draw(false)
	first := b.String()
	if !strings.Contains(first, "web1") || !strings.Contains(first, "waiting for ip") || !strings.Contains(first, "0/2 done, 0 failed") || strings.Contains(first, "\x1b[") {
		t.Errorf("first frame %q", first)
	}
	b.Reset()
	p.Done(cloud.Result{Name: "web1", Status: cloud.Created})
	p.Done(cloud.Result{Name: "web2", Status: cloud.Failed, Step: "requesting", Error: "boom"})
	p.draw(false)
	second := b.String()
	// Back over the 3 lines drawn, then the finished lines, then the summary.
	if !strings.HasPrefix(second, "\x1b[3A\r\x1b[J") || !strings.Contains(second, "web1: created") ||
		!strings.Contains(second, "web2: failed at requesting: boom") || !strings.HasSuffix(second, "2/2 done, 1 failed\n") {
		t.Errorf("second frame %q", second)
	}
	b.Reset()
	p.draw(true)
	if b.String() != "\x1b[1A\r\x1b[J" {
		t.Errorf("final frame %q: should only clear the summary", b.String())
	}

	var plain bytes.Buffer
	q := newProgress(&plain) // a buffer is not a terminal: plain lines
	q.Step("db1", "requesting")
	q.Done(cloud.Result{Name: "db1", Status: cloud.Exists})
	// The created step is the outcome, said once, by the Done line.
	q.Step("db2", "deploying")
	q.Step("db2", "created")
	q.Done(cloud.Result{Name: "db2", Status: cloud.Created})
	if want := "db1: requesting (0s)\ndb1: exists (0s)\ndb2: deploying (0s)\ndb2: created (0s)\n"; plain.String() != want {
		t.Errorf("plain %q, want %q", plain.String(), want)
	}

	// On a terminal, finished lines colour their status unless NO_COLOR.
	for _, tc := range []struct {
		pal  palette
		want string
	}{
		{palette{on: true}, "db3: \x1b[32mcreated\x1b[0m (0s)\ndb4: \x1b[31mfailed\x1b[0m at deploying: refused\n"},
		{palette{}, "db3: created (0s)\ndb4: failed at deploying: refused\n"},
	} {
		var b bytes.Buffer
		p := &progress{w: &b, tty: true, pal: tc.pal, byName: map[string]*vmLine{}}
		p.Done(cloud.Result{Name: "db3", Status: cloud.Created})
		p.Done(cloud.Result{Name: "db4", Status: cloud.Failed, Step: "deploying", Error: "refused"})
		p.draw(true)
		if b.String() != tc.want {
			t.Errorf("finished lines %q, want %q", b.String(), tc.want)
		}
	}
}
