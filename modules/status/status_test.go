package status

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// now is when the fixtures' machine is asked: up 1 day 2:03:04.57.
var now = time.Date(2025, 3, 4, 5, 6, 7, 890123000, time.UTC)

func registry(t *testing.T, root string) *function.Registry {
	t.Helper()
	reg, err := modules.Registry(&modules.Env{}, Reader{Root: root, Now: func() time.Time { return now }}.Module)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestFunctions(t *testing.T) {
	reg := registry(t, "testdata")
	cases := []struct {
		fun  string
		args []any
		want any
	}{
		{"status.uptime", nil, map[string]any{"seconds": int64(93784), "since_iso": "2025-03-03T03:03:03.890123",
			"since_t": now.Unix() - 93784, "days": int64(1), "time": "2:3"}},
		{"status.loadavg", nil, map[string]any{"1-min": 0.52, "5-min": 0.41, "15-min": 0.30}},
		{"status.meminfo", nil, map[string]any{
			"MemTotal":        map[string]any{"value": "2035060", "unit": "kB"},
			"MemFree":         map[string]any{"value": "160500", "unit": "kB"},
			"MemAvailable":    map[string]any{"value": "1480104", "unit": "kB"},
			"HugePages_Total": map[string]any{"value": "0"},
			"Hugepagesize":    map[string]any{"value": "2048", "unit": "kB"},
		}},
		{"status.cpuinfo", nil, map[string]any{"processor": "1", "vendor_id": "GenuineIntel",
			"model name": "Intel(R) Xeon(R) CPU @ 2.20GHz", "cpu MHz": "2199.998",
			"flags": []any{"fpu", "vme", "de", "pse", "sse"}, "bogomips": "4400.00", "power management": ""}},
		{"status.cpustats", nil, map[string]any{
			"cpu": map[string]any{"user": int64(1000), "nice": int64(20), "system": int64(300), "idle": int64(40000),
				"iowait": int64(50), "irq": int64(0), "softirq": int64(6), "steal": int64(7)},
			"cpu0":          int64(500),
			"intr":          map[string]any{"total": int64(12345), "irqs": []any{int64(10), int64(0), int64(9)}},
			"softirq":       map[string]any{"total": int64(555), "softirqs": []any{int64(1), int64(2), int64(3)}},
			"ctxt":          int64(987654),
			"btime":         int64(1700000000),
			"processes":     int64(4321),
			"procs_running": int64(2),
		}},
		{"status.vmstats", nil, map[string]any{"nr_free_pages": int64(40125), "nr_zone_inactive_anon": int64(1234)}},
		{"status.version", nil, "Linux version 6.1.0-test (builder@example) #1 SMP"},
	}
	for _, tc := range cases {
		got, err := reg.Call(context.Background(), tc.fun, tc.args, nil, nil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %#v, %v\nwant %#v", tc.fun, got, err, tc.want)
		}
	}
}

func TestWithoutProc(t *testing.T) {
	reg := registry(t, t.TempDir())
	for _, fun := range []string{"status.meminfo", "status.cpuinfo", "status.cpustats", "status.vmstats", "status.version", "status.diskusage"} {
		if got, err := reg.Call(context.Background(), fun, nil, nil, nil); err != nil || !reflect.DeepEqual(got, map[string]any{}) {
			t.Errorf("%s without /proc = %#v, %v; want {}", fun, got, err)
		}
	}
	for fun, want := range map[string]string{"status.uptime": "File /proc/uptime was not found", "status.loadavg": "status.loadavg is not available"} {
		if _, err := reg.Call(context.Background(), fun, nil, nil, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s without /proc: %v, want %q", fun, err, want)
		}
	}
}

// utmpRecord is a utmp entry of type typ for user.
func utmpRecord(typ int16, user string) []byte {
	rec := make([]byte, utmpSize)
	binary.NativeEndian.PutUint16(rec, uint16(typ))
	copy(rec[utmpUserOff:], user)
	return rec
}

func TestUptimeCountsUsers(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"proc", "run"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "proc/uptime"), []byte("59.99 1.00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var utmp []byte
	for _, r := range [][]byte{utmpRecord(2, "reboot"), utmpRecord(7, "alice"), utmpRecord(8, "gone"),
		utmpRecord(7, "bob"), utmpRecord(7, ""), utmpRecord(6, "LOGIN")} {
		utmp = append(utmp, r...)
	}
	if err := os.WriteFile(filepath.Join(root, "run/utmp"), utmp, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := registry(t, root).Call(context.Background(), "status.uptime", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"seconds": int64(59), "since_iso": "2025-03-04T05:05:08.890123", "since_t": now.Unix() - 59,
		"days": int64(0), "time": "0:0", "users": 2}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("status.uptime = %#v, want %#v", got, want)
	}
	if err := os.WriteFile(filepath.Join(root, "proc/uptime"), []byte("soon"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := registry(t, root).Call(context.Background(), "status.uptime", nil, nil, nil); err == nil {
		t.Error("status.uptime of a bad /proc/uptime succeeded")
	}
}

func TestDiskusage(t *testing.T) {
	reg := registry(t, "testdata")
	var st unix.Statfs_t
	if err := unix.Statfs("/", &st); err != nil {
		t.Fatal(err)
	}
	total := st.Blocks * uint64(st.Bsize)
	check := func(args []any, mounts ...string) {
		t.Helper()
		got, err := reg.Call(context.Background(), "status.diskusage", args, nil, nil)
		if err != nil {
			t.Fatalf("status.diskusage %v: %v", args, err)
		}
		m := got.(map[string]any)
		if len(m) != len(mounts) {
			t.Errorf("status.diskusage %v = %v, want %v", args, m, mounts)
		}
		for _, mnt := range mounts {
			u, ok := m[mnt].(map[string]any)
			if !ok {
				t.Errorf("status.diskusage %v: no %s in %v", args, mnt, m)
				continue
			}
			if mnt == "/" && (u["total"] != total || u["available"].(uint64) > total) {
				t.Errorf("status.diskusage /: %v, want total %d", u, total)
			}
		}
	}
	// Every type: / and /proc; /nonexistent/x cannot be measured.
	check(nil, "/", "/proc")
	check([]any{"ext?"}, "/")
	check([]any{"proc", "/tmp"}, "/proc", "/tmp")
	check([]any{"xfs"})
	if _, err := reg.Call(context.Background(), "status.diskusage", []any{"/nonexistent"}, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "statvfs /nonexistent") {
		t.Errorf("status.diskusage /nonexistent: %v", err)
	}
}

func TestThisMachine(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	for _, fun := range []string{"status.uptime", "status.loadavg", "status.meminfo", "status.cpuinfo", "status.diskusage"} {
		got, err := reg.Call(context.Background(), fun, nil, nil, nil)
		if m, ok := got.(map[string]any); err != nil || !ok || len(m) == 0 {
			t.Errorf("%s on this machine = %v, %v", fun, got, err)
		}
	}
}

// TestRefusedOffLinux: without /proc, every status function says so
// instead of answering empty mappings.
func TestRefusedOffLinux(t *testing.T) {
	defer func(g string) { goos = g }(goos)
	goos = "windows"
	for _, f := range (Reader{}).Module(nil) {
		_, err := f.Run(context.Background(), &function.Input{})
		if err == nil || !strings.Contains(err.Error(), f.Name+" is not available on windows") {
			t.Errorf("%s off Linux: %v", f.Name, err)
		}
	}
	// A Reader given a root reads it wherever it runs.
	for _, f := range (Reader{Root: "testdata"}).Module(nil) {
		if f.Name != "status.loadavg" {
			continue
		}
		if got, err := f.Run(context.Background(), &function.Input{}); err != nil || len(got.(map[string]any)) != 3 {
			t.Fatalf("status.loadavg of testdata off Linux: %v, %v", got, err)
		}
	}
}
