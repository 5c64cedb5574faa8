package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDoneLog(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

	// An earlier version's markers: one recent, one past keepDone.
	legacy := filepath.Join(dir, "done")
	if err := os.MkdirAll(legacy, 0o700); err != nil {
		t.Fatal(err)
	}
	for jid, age := range map[string]time.Duration{"20261129000000000001": time.Hour, "20261127000000000001": 48 * time.Hour} {
		p := filepath.Join(legacy, jid)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	d, err := loadDoneLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.add("20261129000000000002", now); err != nil {
		t.Fatal(err)
	}
	d.close()
	// A crash tore the last line.
	f, err := os.OpenFile(filepath.Join(dir, doneLogFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("20261129000000000003")
	f.Close()

	d, err = loadDoneLog(dir) // as the next start, before recover
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		jid  string
		want bool
	}{
		{"20261129000000000001", true},  // legacy, recent
		{"20261127000000000001", true},  // legacy, old: forgotten only by compact
		{"20261129000000000002", true},  // appended
		{"20261129000000000003", false}, // torn before its time: skipped
		{"nosuchjid", false},
	} {
		if got := d.has(tc.jid); got != tc.want {
			t.Errorf("before compact: has(%s) = %v, want %v", tc.jid, got, tc.want)
		}
	}

	if err := d.compact(now); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("done/ is still there after compact: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, doneLogFile))
	if want := "20261129000000000001 " + fmt.Sprint(now.Add(-time.Hour).Unix()) + "\n20261129000000000002 " + fmt.Sprint(now.Unix()) + "\n"; string(b) != want {
		t.Errorf("done.log after compact:\n%s\nwant\n%s", b, want)
	}
	if d.has("20261127000000000001") {
		t.Error("compact kept jids older than keepDone")
	}

	// A steady stream of jobs, compactAfter of them within keepDone at
	// any time: without the rewrites the journal would hold every line
	// (4×compactAfter); with them, at most the jids of the last keepDone
	// twice over, plus compactAfter.
	const total = 4 * compactAfter
	step := keepDone / compactAfter
	at := func(i int) time.Time { return now.Add(time.Duration(i) * step) }
	for i := range total {
		if err := d.add(fmt.Sprintf("20261130%012d", i), at(i)); err != nil {
			t.Fatal(err)
		}
	}
	d.close()
	b, _ = os.ReadFile(filepath.Join(dir, doneLogFile))
	if n := strings.Count(string(b), "\n"); n > 3*compactAfter {
		t.Errorf("done.log holds %d lines after %d adds, %d of them within keepDone: want at most %d", n, total, compactAfter, 3*compactAfter)
	}
	d, err = loadDoneLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{total - compactAfter + 1, total - 1} {
		if jid := fmt.Sprintf("20261130%012d", i); !d.has(jid) {
			t.Errorf("%s, within keepDone of the last, was lost across a rewrite", jid)
		}
	}
	if d.has("20261130000000000000") || d.has("20261129000000000002") {
		t.Error("jids older than keepDone were kept")
	}
}
