package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReport(t *testing.T) {
	r := New("x")
	r.Results = []int{1}
	r.Check("a", "events_per_sec", ">=", 100, 150)
	r.Check("a", "p99_ms", "<=", 2, 1.5)
	path := filepath.Join(t.TempDir(), "sub", "x.json")
	if err := r.Write(path); err != nil {
		t.Fatal(err)
	}
	var got Report
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &got); err != nil || !got.Pass || len(got.Targets) != 2 || got.Benchmark != "x" {
		t.Fatalf("written %s, %v", b, err)
	}
	r.Check("a", "lost", "<=", 0, 1)
	if r.Write(path); r.Pass {
		t.Error("a missed target still passes")
	}
	r2 := New("y")
	r2.Fail("3 events lost")
	if r2.Write(path); r2.Pass || r2.Notes[0] != "FAIL: 3 events lost" {
		t.Errorf("Fail not recorded: %+v", r2)
	}
}

func TestPercentile(t *testing.T) {
	v := Millis([]time.Duration{5 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond})
	cases := map[float64]float64{0.5: 3, 0.99: 5, 0.2: 1, 1: 5}
	for p, want := range cases {
		if got := Percentile(v, p); got != want {
			t.Errorf("Percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if Percentile(nil, 0.5) != 0 {
		t.Error("empty")
	}
}

func TestLoadAvg(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Fatalf("this test runs on Linux, which has /proc/loadavg: %v", err)
	}
	if got := LoadAvg(); len(strings.Fields(got)) < 3 {
		t.Errorf("LoadAvg() = %q, want the 1, 5 and 15 minute figures", got)
	}
	if New("x").LoadAvg == "" {
		t.Error("New does not record the load average")
	}
}

func TestPrint(t *testing.T) {
	r := New("x")
	r.Check("a", "lost", "<=", 0, 0)
	path := filepath.Join(t.TempDir(), "x.json")
	if err := r.Write(path); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.Print(&buf); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(buf.Bytes(), b) {
		t.Errorf("printed %s, wrote %s", buf.Bytes(), b)
	}
}

// TestFinish: the report is written and printed whether or not it passed,
// and a missed target is the run's error.
func TestFinish(t *testing.T) {
	for _, tc := range []struct {
		got     float64
		wantErr bool
	}{{got: 1}, {got: 3, wantErr: true}} {
		r := New("x")
		r.Check("a", "p99_ms", "<=", 2, tc.got)
		path := filepath.Join(t.TempDir(), "x.json")
		var out bytes.Buffer
		err := r.Finish(path, &out)
		written, _ := os.ReadFile(path)
		if (err != nil) != tc.wantErr || len(written) == 0 || !bytes.Equal(written, out.Bytes()) {
			t.Errorf("got %g: err %v (want one: %v), written %d bytes, printed %d", tc.got, err, tc.wantErr, len(written), out.Len())
		}
	}
}

func TestStartCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.out")
	stop, err := StartCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("no profile written: %v", err)
	}
	stop, err = StartCPUProfile("")
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if _, err := StartCPUProfile(filepath.Join(t.TempDir(), "missing", "cpu.out")); err == nil {
		t.Error("an unwritable path was accepted")
	}
}

func TestProbeFsync(t *testing.T) {
	dir := t.TempDir()
	got, err := ProbeFsync(dir, 20)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "20 × (append 4 KiB + fsync) in "+dir+": p50 ") || !strings.Contains(got, " ms, p99 ") {
		t.Errorf("ProbeFsync = %q", got)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("probe file left behind: %v", left)
	}
	if _, err := ProbeFsync(filepath.Join(dir, "missing"), 1); err == nil {
		t.Error("probing a missing directory succeeded")
	}
}

func TestFSType(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"/proc", "proc"},
		{"/nonexistent-brine-dir", "filesystem unknown: no such file or directory"},
	} {
		if got := FSType(tc.dir); got != tc.want {
			t.Errorf("FSType(%s) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}
