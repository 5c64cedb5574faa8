package log

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/beacons"
)

// hit is an expected event: the tag and the line.
type hit struct{ tag, raw string }

func hits(evs []beacons.Event) []hit {
	var out []hit
	for _, e := range evs {
		if e.Data["match"] != "yes" || e.Data["error"] != "" || len(e.Data) != 3 {
			panic(fmt.Sprintf("payload %v is not Salt's", e.Data))
		}
		out = append(out, hit{e.Tag, e.Data["raw"].(string)})
	}
	return out
}

func start(t *testing.T, cfg beacons.Config) *Beacon {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%v): %v", cfg, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b.(*Beacon)
}

// collect checks b each time it is ready (the beacon's inotify watch must
// say so: no timer) until n events have come.
func collect(t *testing.T, b *Beacon, n int) []hit {
	t.Helper()
	var got []hit
	deadline := time.After(5 * time.Second)
	for len(got) < n {
		select {
		case <-b.Ready():
		case <-deadline:
			t.Fatalf("want %d events, got %v", n, got)
		}
		evs, err := b.Check(context.Background())
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		got = append(got, hits(evs)...)
	}
	// Nothing more.
	evs, err := b.Check(context.Background())
	if err != nil || len(evs) > 0 {
		t.Fatalf("after %v: Check = %v, %v; want nothing", got, evs, err)
	}
	return got
}

func appendTo(t *testing.T, f *os.File, s string) {
	t.Helper()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, path string, flag int) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, flag|os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

var tags = map[string]any{
	"err":       map[string]any{"regex": "error"},        // at the start, as re.match
	"any/error": map[string]any{"regex": ".*error.*"},    // anywhere
	"ssh":       map[string]any{"regex": `sshd\[\d+\]:`}, // Go's syntax
}

// TestFollow appends lines, matching and not, rotates the file as
// logrotate does (rename, the writer still writing to the old file, a new
// file), truncates it as copytruncate does, and checks the events.
func TestFollow(t *testing.T) {
	for _, tc := range []struct {
		name string
		act  func(t *testing.T, path string, w *os.File) // w: the writer's open file
		want []hit
	}{{
		name: "appended lines, matching and not",
		act: func(t *testing.T, path string, w *os.File) {
			appendTo(t, w, "disk error on sda\nall fine\nerror: disk full\r\nsshd[42]: accepted\n")
		},
		want: []hit{
			{"any/error", "disk error on sda"},
			{"any/error", "error: disk full"}, {"err", "error: disk full"},
			{"ssh", "sshd[42]: accepted"},
		},
	}, {
		name: "a line is reported once its newline is written",
		act: func(t *testing.T, path string, w *os.File) {
			appendTo(t, w, "error: par")
			time.Sleep(50 * time.Millisecond)
			appendTo(t, w, "tial\n")
		},
		want: []hit{{"any/error", "error: partial"}, {"err", "error: partial"}},
	}, {
		name: "rotation: the rest of the old file, then the new one from its start",
		act: func(t *testing.T, path string, w *os.File) {
			appendTo(t, w, "error 1\n")
			if err := os.Rename(path, path+".1"); err != nil {
				t.Fatal(err)
			}
			appendTo(t, w, "error 2 (rotated file)\n")
			appendTo(t, open(t, path, os.O_EXCL), "error 3 (new file)\n")
		},
		want: []hit{
			{"any/error", "error 1"}, {"err", "error 1"},
			{"any/error", "error 2 (rotated file)"}, {"err", "error 2 (rotated file)"},
			{"any/error", "error 3 (new file)"}, {"err", "error 3 (new file)"},
		},
	}, {
		name: "truncation",
		act: func(t *testing.T, path string, w *os.File) {
			if err := w.Truncate(0); err != nil {
				t.Fatal(err)
			}
			appendTo(t, w, "error after truncation\n")
		},
		want: []hit{{"any/error", "error after truncation"}, {"err", "error after truncation"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			path := t.TempDir() + "/app.log"
			w := open(t, path, 0)
			// Lines there before the start are not reported.
			appendTo(t, w, strings.Repeat("error: old, long enough to be longer than what follows a truncation\n", 4))
			b := start(t, beacons.Config{"file": path, "tags": tags})
			if evs, err := b.Check(context.Background()); err != nil || len(evs) > 0 {
				t.Fatalf("first Check = %v, %v; want nothing", evs, err)
			}
			tc.act(t, path, w)
			if got := collect(t, b, len(tc.want)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("events:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestFileAppears follows a file created after the start from its start.
func TestFileAppears(t *testing.T) {
	path := t.TempDir() + "/later.log"
	b := start(t, beacons.Config{"file": path, "tags": tags})
	if evs, err := b.Check(context.Background()); err != nil || len(evs) > 0 {
		t.Fatalf("Check = %v, %v; want nothing", evs, err)
	}
	appendTo(t, open(t, path, 0), "first\nerror: second\n")
	want := []hit{{"any/error", "error: second"}, {"err", "error: second"}}
	if got := collect(t, b, 2); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestBigBurst appends more than one check reads: the rest comes with the
// next checks, Ready firing again.
func TestBigBurst(t *testing.T) {
	path := t.TempDir() + "/big.log"
	w := open(t, path, 0)
	b := start(t, beacons.Config{"file": path, "tags": map[string]any{"e": map[string]any{"regex": "error"}}})
	line := "error " + strings.Repeat("x", 1000) + "\n"
	n := 3 * maxRead / len(line)
	appendTo(t, w, strings.Repeat(line, n))
	got := collect(t, b, n)
	if len(got) != n {
		t.Errorf("%d events, want %d", len(got), n)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	ok := map[string]any{"e": map[string]any{"regex": "x"}}
	for _, tc := range []struct {
		cfg  beacons.Config
		want string
	}{
		{beacons.Config{"tags": ok}, "file: missing"},
		{beacons.Config{"file": int64(3), "tags": ok}, "file: want a path"},
		{beacons.Config{"file": "var/log/x", "tags": ok}, "file: var/log/x: want an absolute path"},
		{beacons.Config{"file": dir + "/nodir/x.log", "tags": ok}, "no directory"},
		{beacons.Config{"file": dir + "/x.log"}, "tags: missing"},
		{beacons.Config{"file": dir + "/x.log", "tags": map[string]any{}}, "tags: empty"},
		{beacons.Config{"file": dir + "/x.log", "tags": []any{"e"}}, "tags: want a mapping"},
		{beacons.Config{"file": dir + "/x.log", "tags": map[string]any{"e": "x"}}, "tags: e: want {regex: …}"},
		{beacons.Config{"file": dir + "/x.log", "tags": map[string]any{"e": map[string]any{}}}, "tags: e: regex: want a regular expression"},
		{beacons.Config{"file": dir + "/x.log", "tags": map[string]any{"e": map[string]any{"regex": "("}}}, "tags: e: regex: error parsing regexp"},
		{beacons.Config{"file": dir + "/x.log", "tags": map[string]any{"e": map[string]any{"regex": "x", "flags": "i"}}}, "tags: e: flags: unknown option"},
		{beacons.Config{"file": dir + "/x.log", "tags": ok, "regex": "x"}, "regex: unknown option"},
	} {
		b, err := New(tc.cfg)
		if err == nil {
			_ = b.Close()
			t.Errorf("New(%v): no error, want %q", tc.cfg, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %q, want %q", tc.cfg, err, tc.want)
		}
	}
}
