package dnsmasq

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestWriteIfChangedAtomicUnderConcurrentReader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dhcp-hosts")
	// Two contents of different sizes, large enough that a torn read
	// (a reader seeing part of a write) would show.
	a := bytes.Repeat([]byte("00:50:56:aa:bb:01,10.0.0.1,web1\n"), 20000)
	b := bytes.Repeat([]byte("00:50:56:aa:bb:02,10.0.0.2,web2,infinite\n"), 15000)
	if _, err := writeIfChanged(path, a); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var reads, torn atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				got, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("reader: %v", err) // the file must never be missing
					return
				}
				reads.Add(1)
				if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
					torn.Add(1)
				}
			}
		}()
	}
	writes := 0
	for i := range 100 {
		content := a
		if i%2 == 0 {
			content = b
		}
		wrote, err := writeIfChanged(path, content)
		if err != nil {
			t.Fatal(err)
		}
		if !wrote {
			t.Fatalf("write %d of a different content reported unchanged", i)
		}
		writes++
	}
	stop.Store(true)
	wg.Wait()
	if torn.Load() > 0 {
		t.Fatalf("%d of %d reads saw a partial file", torn.Load(), reads.Load())
	}
	if reads.Load() == 0 {
		t.Fatal("the readers never read")
	}
	t.Logf("%d writes, %d concurrent reads, none partial", writes, reads.Load())

	// Unchanged content is not written again (same inode, same mtime).
	before, _ := os.Stat(path)
	if wrote, err := writeIfChanged(path, a); err != nil || wrote {
		t.Fatalf("rewriting the same content: wrote=%v err=%v", wrote, err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) {
		t.Fatal("unchanged content was written")
	}
	if before.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 (dnsmasq reads as nobody)", before.Mode().Perm())
	}
	// A mode the operator chose is kept.
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := writeIfChanged(path, b); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after a write, want the operator's 0640", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file (temporary files left behind?)", len(entries))
	}
}

func TestWriteIfChangedErrors(t *testing.T) {
	dir := t.TempDir()
	// The target is a directory: reading it fails, nothing is replaced.
	if _, err := writeIfChanged(dir, []byte("x")); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	gone := filepath.Join(dir, "gone", "f")
	if _, err := writeIfChanged(gone, []byte("x")); err == nil || !strings.Contains(err.Error(), gone) {
		t.Fatalf("write into a missing directory: %v, want an error naming the file", err)
	}
}

func TestReloadErrors(t *testing.T) {
	dir := t.TempDir()
	pid := filepath.Join(dir, "pid")
	for _, tc := range []struct {
		pidfile string
		content string
		want    string
	}{
		{filepath.Join(dir, "missing"), "", "not running"},
		{pid, "abc\n", `"abc" is not a process id`},
		{pid, "1\n", `"1" is not a process id`},
		{pid, strconv.Itoa(os.Getpid()) + "\n", "not dnsmasq"}, // this test binary
	} {
		if tc.content != "" {
			if err := os.WriteFile(tc.pidfile, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		how, err := reload(context.Background(), &Config{PidFile: tc.pidfile})
		if how != "sighup" || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("pidfile %q: %s, %v; want an error containing %q", tc.content, how, err, tc.want)
		}
	}
	if _, err := reload(context.Background(), &Config{ReloadCommand: []string{"/bin/sh", "-c", "echo nope >&2; exit 3"}}); err == nil ||
		!strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failing reload_command: %v, want its status and output", err)
	}
}
