//go:build linux

package inotify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/beacons"
)

// ev is an expected event: tag, change and path, relative to the test's
// directory.
type ev struct{ tag, change, path string }

func (e ev) abs(dir string) ev {
	j := func(p string) string {
		if p == "" {
			return dir
		}
		return filepath.Join(dir, p)
	}
	return ev{j(e.tag), e.change, j(e.path)}
}

func (e ev) in(evs []beacons.Event) bool {
	for _, x := range evs {
		if x.Tag == e.tag && x.Data["change"] == e.change && x.Data["path"] == e.path {
			return true
		}
	}
	return false
}

func start(t *testing.T, cfg beacons.Config) *Beacon {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%v): %v", cfg, err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b.(*Beacon)
}

// collect checks b each time it says it is ready (never on a timer: the
// beacon must say so) until every event of want has come, and returns
// all the events.
func collect(t *testing.T, b *Beacon, want ...ev) []beacons.Event {
	t.Helper()
	var got []beacons.Event
	deadline := time.After(5 * time.Second)
	for {
		missing := 0
		for _, w := range want {
			if !w.in(got) {
				missing++
			}
		}
		if missing == 0 {
			return got
		}
		select {
		case <-b.Ready():
		case <-deadline:
			t.Fatalf("events: want %v, got %v", want, got)
		}
		evs, err := b.Check(context.Background())
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		got = append(got, evs...)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestEvents makes real changes in a temporary tree and waits for the
// events Salt's beacon fires, and none of those it must not.
func TestEvents(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		files func(dir string) map[string]any
		act   func(t *testing.T, dir string)
		want  []ev
		// absent must not come before the events of want, which the
		// test's changes make after them.
		absent []ev
	}{{
		name:  "write to a file",
		setup: func(t *testing.T, dir string) { write(t, dir+"/f", "a\n") },
		files: func(dir string) map[string]any { return map[string]any{dir + "/f": map[string]any{}} },
		act:   func(t *testing.T, dir string) { appendTo(t, dir+"/f", "b\n") },
		want:  []ev{{"f", "IN_MODIFY", "f"}},
	}, {
		name:  "create, write and delete in a directory (default mask, no options)",
		files: func(dir string) map[string]any { return map[string]any{dir: nil} },
		act: func(t *testing.T, dir string) {
			write(t, dir+"/a", "x")
			must(t, os.Remove(dir+"/a"))
			must(t, os.Mkdir(dir+"/d", 0o755))
		},
		want: []ev{{"", "IN_CREATE", "a"}, {"", "IN_MODIFY", "a"}, {"", "IN_DELETE", "a"}, {"", "IN_CREATE|IN_ISDIR", "d"}},
	}, {
		name:  "recurse and auto_add",
		setup: func(t *testing.T, dir string) { must(t, os.Mkdir(dir+"/sub", 0o755)) },
		files: func(dir string) map[string]any {
			return map[string]any{dir: map[string]any{"recurse": true, "auto_add": true}}
		},
		act: func(t *testing.T, dir string) {
			write(t, dir+"/sub/x", "x")
			must(t, os.MkdirAll(dir+"/new/deep", 0o755))
			write(t, dir+"/new/deep/y", "y")
			write(t, dir+"/new/z", "z")
		},
		want: []ev{
			{"sub", "IN_CREATE", "sub/x"},
			{"", "IN_CREATE|IN_ISDIR", "new"},
			{"new", "IN_CREATE|IN_ISDIR", "new/deep"},
			{"new/deep", "IN_CREATE", "new/deep/y"},
			{"new", "IN_CREATE", "new/z"},
		},
	}, {
		name:  "recurse without auto_add watches only the directories there at start",
		setup: func(t *testing.T, dir string) { must(t, os.Mkdir(dir+"/sub", 0o755)) },
		files: func(dir string) map[string]any { return map[string]any{dir: map[string]any{"recurse": true}} },
		act: func(t *testing.T, dir string) {
			must(t, os.Mkdir(dir+"/new", 0o755))
			write(t, dir+"/new/x", "x")
			write(t, dir+"/sub/y", "y")
		},
		want:   []ev{{"", "IN_CREATE|IN_ISDIR", "new"}, {"sub", "IN_CREATE", "sub/y"}},
		absent: []ev{{"new", "IN_CREATE", "new/x"}},
	}, {
		name:  "renames",
		setup: func(t *testing.T, dir string) { write(t, dir+"/a", "a") },
		files: func(dir string) map[string]any {
			return map[string]any{dir: map[string]any{"mask": []any{"moved_from", "moved_to"}}}
		},
		act: func(t *testing.T, dir string) {
			write(t, dir+"/c", "c")
			must(t, os.Rename(dir+"/a", dir+"/b"))
		},
		want:   []ev{{"", "IN_MOVED_FROM", "a"}, {"", "IN_MOVED_TO", "b"}},
		absent: []ev{{"", "IN_CREATE", "c"}, {"", "IN_MODIFY", "c"}},
	}, {
		name: "excludes: prefix, glob, regex",
		files: func(dir string) map[string]any {
			return map[string]any{dir: map[string]any{"mask": []any{"create"}, "exclude": []any{
				dir + "/skip", dir + "/*.swp", map[string]any{`\.tmp$`: map[string]any{"regex": true}},
			}}}
		},
		act: func(t *testing.T, dir string) {
			for _, n := range []string{"skip", "skipped", "x.swp", "y.tmp", "keep"} {
				write(t, dir+"/"+n, "")
			}
		},
		want:   []ev{{"", "IN_CREATE", "keep"}},
		absent: []ev{{"", "IN_CREATE", "skip"}, {"", "IN_CREATE", "skipped"}, {"", "IN_CREATE", "x.swp"}, {"", "IN_CREATE", "y.tmp"}},
	}, {
		name:  "a file replaced by rename, as editors save",
		setup: func(t *testing.T, dir string) { write(t, dir+"/f", "old") },
		files: func(dir string) map[string]any { return map[string]any{dir + "/f": map[string]any{}} },
		act: func(t *testing.T, dir string) {
			write(t, dir+"/.f.swp", "new")
			must(t, os.Rename(dir+"/.f.swp", dir+"/f"))
		},
		want: []ev{{"f", "IN_MODIFY", "f"}},
	}, {
		name:  "a replaced file with moved_to in the mask",
		setup: func(t *testing.T, dir string) { write(t, dir+"/f", "old") },
		files: func(dir string) map[string]any {
			return map[string]any{dir + "/f": map[string]any{"mask": []any{"moved_to", "delete_self"}}}
		},
		act: func(t *testing.T, dir string) {
			write(t, dir+"/f.new", "new")
			must(t, os.Rename(dir+"/f.new", dir+"/f"))
		},
		want: []ev{{"f", "IN_MOVED_TO", "f"}, {"f", "IN_DELETE_SELF", "f"}},
	}, {
		name:  "a watched file deleted and created again",
		setup: func(t *testing.T, dir string) { write(t, dir+"/f", "old") },
		files: func(dir string) map[string]any {
			return map[string]any{dir + "/f": map[string]any{"mask": []any{"create", "delete_self", "modify"}}}
		},
		act: func(t *testing.T, dir string) {
			must(t, os.Remove(dir+"/f"))
			write(t, dir+"/f", "new")
		},
		want: []ev{{"f", "IN_DELETE_SELF", "f"}, {"f", "IN_CREATE", "f"}},
	}, {
		name: "ignored and unmount only when asked",
		setup: func(t *testing.T, dir string) {
			write(t, dir+"/f", "")
			write(t, dir+"/g", "")
		},
		files: func(dir string) map[string]any {
			return map[string]any{
				dir + "/f": map[string]any{"mask": []any{"delete_self", "ignored"}},
				dir + "/g": map[string]any{"mask": []any{"delete_self"}},
			}
		},
		act: func(t *testing.T, dir string) {
			must(t, os.Remove(dir+"/g"))
			must(t, os.Remove(dir+"/f"))
		},
		want:   []ev{{"g", "IN_DELETE_SELF", "g"}, {"f", "IN_DELETE_SELF", "f"}, {"f", "IN_IGNORED", "f"}},
		absent: []ev{{"g", "IN_IGNORED", "g"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			b := start(t, beacons.Config{"files": tc.files(dir)})
			tc.act(t, dir)
			var want []ev
			for _, w := range tc.want {
				want = append(want, w.abs(dir))
			}
			got := collect(t, b, want...)
			for _, a := range tc.absent {
				if a := a.abs(dir); a.in(got) {
					t.Errorf("unexpected %v in %v", a, got)
				}
			}
		})
	}
}

// TestPathAppears watches a file whose directory does not exist yet: the
// beacon's Check watches the directory once it is there (as Salt adds
// watches at each run), and the file's creation is then reported at once.
func TestPathAppears(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/later/f"
	b := start(t, beacons.Config{"files": map[string]any{f: nil}})
	must(t, os.Mkdir(dir+"/later", 0o755))
	if evs, err := b.Check(context.Background()); err != nil || len(evs) != 0 {
		t.Fatalf("Check = %v, %v; want nothing", evs, err)
	}
	write(t, f, "x")
	collect(t, b, ev{f, "IN_CREATE", f})
	appendTo(t, f, "y")
	collect(t, b, ev{f, "IN_MODIFY", f})
}

// TestReplacedFileWatchedAgain saves a file as an editor does, twice, and
// writes to it in place: each is reported, the watch follows the new file.
func TestReplacedFileWatchedAgain(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/sshd_config"
	write(t, f, "Port 22\n")
	b := start(t, beacons.Config{"files": map[string]any{f: map[string]any{}}})
	modified := ev{f, "IN_MODIFY", f}
	for i := range 3 {
		if i < 2 {
			write(t, f+".tmp", fmt.Sprintf("Port %d\n", 2200+i))
			must(t, os.Rename(f+".tmp", f))
		} else {
			appendTo(t, f, "PermitRootLogin no\n")
		}
		got := collect(t, b, modified)
		for _, e := range got {
			if e.Data["path"] != f {
				t.Errorf("save %d: unexpected %v", i, e)
			}
		}
	}
	b.mu.Lock()
	n := len(b.watches)
	b.mu.Unlock()
	if n > 2 { // the file and its directory
		t.Errorf("%d watches after the saves, want 2: %v", n, b.watches)
	}
}

// TestBurst writes a file 10,000 times and creates more files than the
// queue holds between two checks: the queue stays bounded, duplicates are
// one event, the rest is one IN_Q_OVERFLOW per configured path.
func TestBurst(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/churn"
	write(t, f, "")
	b := start(t, beacons.Config{"files": map[string]any{dir: map[string]any{"mask": []any{"create", "modify"}}}})

	fh, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	for i := range 10000 {
		if _, err := fmt.Fprintf(fh, "%d\n", i); err != nil {
			t.Fatal(err)
		}
	}
	must(t, fh.Close())
	write(t, dir+"/done", "")
	// One check once the burst is read: wait for its last change in the
	// queue.
	done := ev{dir, "IN_CREATE", dir + "/done"}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b.mu.Lock()
		in := done.in(b.queue)
		b.mu.Unlock()
		if in {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the burst's last change never queued")
		}
	}
	got, err := b.Check(context.Background())
	must(t, err)
	n := 0
	for _, e := range got {
		if e.Data["path"] == f {
			n++
		}
	}
	if n != 1 {
		t.Errorf("10,000 writes between checks: %d events of %s, want 1: %v", n, f, got)
	}

	const files = 3 * maxQueue
	for i := range files {
		write(t, fmt.Sprintf("%s/f%05d", dir, i), "")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		q, over := len(b.queue), b.overflow
		b.mu.Unlock()
		if q > maxQueue {
			t.Fatalf("queue holds %d changes, more than %d", q, maxQueue)
		}
		if over {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no overflow after %d creations: %d queued", files, q)
		}
		time.Sleep(10 * time.Millisecond)
	}
	evs, err := b.Check(context.Background())
	must(t, err)
	if len(evs) != maxQueue+1 || !(ev{dir, "IN_Q_OVERFLOW", dir}).in(evs) {
		t.Errorf("after the flood: %d events (want %d), overflow reported: %v", len(evs), maxQueue+1,
			(ev{dir, "IN_Q_OVERFLOW", dir}).in(evs))
	}
	// The beacon goes on after an overflow.
	write(t, dir+"/after", "")
	collect(t, b, ev{dir, "IN_CREATE", dir + "/after"})
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  beacons.Config
		want string
	}{
		{beacons.Config{}, "files: missing"},
		{beacons.Config{"files": "/etc/x"}, "files: want a mapping of paths to options, got string"},
		{beacons.Config{"files": map[string]any{}}, "files: empty"},
		{beacons.Config{"files": map[string]any{"/etc/x": nil}, "recurse": true}, "recurse: unknown option (want files)"},
		{beacons.Config{"files": map[string]any{"etc/x": nil}}, "files: etc/x: want an absolute path"},
		{beacons.Config{"files": map[string]any{"/etc/x": "modify"}}, "files: /etc/x: want a mapping of options"},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"mask": []any{"modfy"}}}},
			`files: /etc/x: mask: unknown event "modfy" (want one of access, attrib, close_nowrite, close_write, create, delete, delete_self, excl_unlink, ignored, modify, moved_from, moved_to, move_self, oneshot, onlydir, open, unmount)`},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"mask": "modify"}}}, "files: /etc/x: mask: want a list of events"},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"mask": []any{"oneshot"}}}}, "mask: [oneshot] names no event"},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"recurse": "yes"}}}, "files: /etc/x: recurse: want true or false"},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"auto_add": int64(1)}}}, "files: /etc/x: auto_add: want true or false"},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"recursive": true}}}, "files: /etc/x: recursive: unknown option"},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"exclude": "/etc/x/y"}}}, "files: /etc/x: exclude: want a list"},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"exclude": []any{map[string]any{"(": map[string]any{"regex": true}}}}}},
			"files: /etc/x: exclude: item 1: (: bad regular expression"},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"exclude": []any{map[string]any{"a": map[string]any{"regexp": true}}}}}},
			"exclude: item 1: a: regexp: unknown option"},
		{beacons.Config{"files": map[string]any{"/etc/x": map[string]any{"exclude": []any{int64(3)}}}}, "exclude: item 1: want a path"},
		{beacons.Config{"files": map[string]any{"/etc/x": nil, "/etc/x/": nil}}, "the same path as"},
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

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"/a/*.swp", "/a/x.swp", true},
		{"/a/*.swp", "/a/b/x.swp", true}, // fnmatch: * matches /
		{"/a/*.swp", "/a/x.swpx", false},
		{"/a/[a-m]*", "/a/k1", true},
		{"/a/[!a-m]*", "/a/k1", false},
		{"/a/?.*", "/a/x.c", true},
		{"/a/[*", "/a/[x", true},
	} {
		e, err := parseExclude(tc.glob)
		must(t, err)
		if got := e.match(tc.path); got != tc.want {
			t.Errorf("%s matches %s: %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

// TestReadyAtOnce measures a write to Ready: well under the runner's
// 1 s interval (milliseconds), which is what Notifier is for.
func TestReadyAtOnce(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/f"
	write(t, f, "")
	b := start(t, beacons.Config{"files": map[string]any{f: nil}})
	var worst time.Duration
	for i := range 20 {
		t0 := time.Now()
		appendTo(t, f, fmt.Sprintln(i))
		select {
		case <-b.Ready():
		case <-time.After(time.Second):
			t.Fatalf("write %d: no Ready within 1 s", i)
		}
		worst = max(worst, time.Since(t0))
		evs, err := b.Check(context.Background())
		if err != nil || !(ev{f, "IN_MODIFY", f}).in(evs) {
			t.Fatalf("write %d: Check = %v, %v", i, evs, err)
		}
	}
	if worst > 250*time.Millisecond {
		t.Errorf("slowest write to Ready: %v", worst)
	}
	t.Logf("slowest write to Ready: %v", worst)
}

// TestOneshot: with oneshot the kernel drops the watch after one event;
// as Salt, the next check watches the file again.
func TestOneshot(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/f"
	write(t, f, "")
	b := start(t, beacons.Config{"files": map[string]any{f: map[string]any{"mask": []any{"modify", "oneshot"}}}})
	wd := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.roots[0].wd
	}
	for i := range 3 {
		appendTo(t, f, "x")
		select {
		case <-b.Ready():
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: no event", i)
		}
		for deadline := time.Now().Add(5 * time.Second); wd() >= 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the oneshot watch is still there", i)
			}
		}
		evs, err := b.Check(context.Background())
		if err != nil || len(evs) != 1 || !(ev{f, "IN_MODIFY", f}).in(evs) {
			t.Fatalf("round %d: Check = %v, %v; want one IN_MODIFY", i, evs, err)
		}
		if wd() < 0 {
			t.Fatalf("round %d: Check did not watch the file again", i)
		}
	}
}
