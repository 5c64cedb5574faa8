package memusage

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/brinehq/brine/beacons"
)

func meminfoRoot(t *testing.T, meminfo string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc", "meminfo"), []byte(meminfo), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestUsage checks psutil's share on written /proc/meminfo files.
func TestUsage(t *testing.T) {
	cases := []struct {
		name, meminfo string
		want          float64
	}{
		{"MemAvailable", "MemTotal: 2035060 kB\nMemFree: 160500 kB\nMemAvailable: 1480104 kB\nCached: 900000 kB\n", 27.3},
		{"without MemAvailable: free + cached", "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 400 kB\n", 50},
		{"available above total: free", "MemTotal: 1000 kB\nMemFree: 250 kB\nMemAvailable: 2000 kB\n", 75},
	}
	for _, tc := range cases {
		b, err := newBeacon(beacons.Config{"percent": "50%"}, meminfoRoot(t, tc.meminfo))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := b.Usage(); err != nil || got != tc.want {
			t.Errorf("%s: Usage = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	b, err := newBeacon(beacons.Config{"percent": "50%"}, meminfoRoot(t, "MemFree: 100 kB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "no MemTotal") {
		t.Errorf("Check without MemTotal: %v, want an error", err)
	}
}

func TestPayload(t *testing.T) {
	root := meminfoRoot(t, "MemTotal: 2035060 kB\nMemFree: 160500 kB\nMemAvailable: 1480104 kB\n")
	for _, tc := range []struct {
		percent any
		want    []beacons.Event
	}{
		{"27.3%", []beacons.Event{{Data: map[string]any{"memusage": 27.3}}}},
		{int64(27), []beacons.Event{{Data: map[string]any{"memusage": 27.3}}}},
		{"27.4%", nil},
	} {
		b, err := newBeacon(beacons.Config{"percent": tc.percent}, root)
		if err != nil {
			t.Fatal(err)
		}
		if evs, err := b.Check(context.Background()); err != nil || !reflect.DeepEqual(evs, tc.want) {
			t.Errorf("percent %v: Check = %#v, %v; want %#v", tc.percent, evs, err, tc.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  beacons.Config
		want string
	}{
		{beacons.Config{}, "percent: required"},
		{beacons.Config{"percent": "lots"}, `percent: want a percentage such as 63%, got "lots"`},
		{beacons.Config{"percent": "120%"}, "percent: want a percentage from 0 to 100, got 120%"},
		{beacons.Config{"percent": []any{"50%"}}, "percent: want a percentage such as 63%"},
		{beacons.Config{"percent": "50%", "swap": "10%"}, "swap: unknown option (want percent)"},
	} {
		if _, err := Module.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func check(t *testing.T, cfg beacons.Config) []beacons.Event {
	t.Helper()
	b, err := Module.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := b.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestRealMemory measures the machine: a threshold below the share in use
// fires with it, one far above does not, and memory the test takes and
// touches raises the share past a threshold between the two readings.
func TestRealMemory(t *testing.T) {
	u0, err := (&Beacon{}).Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u0 > 90 {
		t.Fatalf("memory in use is %v%%: the test needs 2%% of the memory free", u0)
	}
	evs := check(t, beacons.Config{"percent": u0 / 2})
	if len(evs) != 1 {
		t.Fatalf("threshold %v%% under %v%% in use: %v, want one event", u0/2, u0, evs)
	}
	if v, ok := evs[0].Data["memusage"].(float64); !ok || v < u0/2 {
		t.Fatalf("event %v: memusage is not a number at or above %v", evs[0].Data, u0/2)
	}
	if evs := check(t, beacons.Config{"percent": "100%"}); len(evs) != 0 {
		t.Fatalf("threshold 100%%: %v, want nothing", evs)
	}

	// Take 2% of the memory (touching each page so that it is used) and
	// fire at 1% above the first reading.
	var total uint64
	for _, l := range strings.Split(readFile(t, "/proc/meminfo"), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			n, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total = n * 1024
		}
	}
	limit := u0 + 1
	if evs := check(t, beacons.Config{"percent": limit}); len(evs) != 0 {
		t.Logf("already at %v%% before taking memory (another process took it)", evs[0].Data["memusage"])
	}
	hold := make([]byte, total/50)
	for i := 0; i < len(hold); i += os.Getpagesize() {
		hold[i] = 1
	}
	evs = check(t, beacons.Config{"percent": limit})
	if len(evs) != 1 {
		t.Fatalf("with %d MB more in use than at %v%%: %v, want one event at %v%%", len(hold)>>20, u0, evs, limit)
	}
	if v := evs[0].Data["memusage"].(float64); v < limit {
		t.Fatalf("event %v under the threshold %v", evs[0].Data, limit)
	}
	runtime.KeepAlive(hold)
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
