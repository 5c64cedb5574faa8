package load

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/beacons"
)

// fakeRoot is a root whose /proc/loadavg the test writes.
type fakeRoot string

func newFakeRoot(t *testing.T) fakeRoot {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	return fakeRoot(root)
}

func (r fakeRoot) set(t *testing.T, avgs string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(string(r), "proc", "loadavg"), []byte(avgs+" 1/83 31396\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func averages(m map[string]any) beacons.Config { return beacons.Config{"averages": m} }

func rng(lo, hi any) []any { return []any{lo, hi} }

// TestSequences checks which readings fire, as Salt's beacon does, on a
// written /proc/loadavg.
func TestSequences(t *testing.T) {
	cases := []struct {
		name  string
		cfg   beacons.Config
		loads []string // one check each
		fires []bool
	}{
		{"every check while above max",
			averages(map[string]any{"1m": rng(0.0, 2.0)}),
			[]string{"1.5 0 0", "2.5 0 0", "2.6 0 0", "1.0 0 0"}, []bool{false, true, true, false}},
		{"below min",
			averages(map[string]any{"15m": rng(int64(1), int64(3))}),
			[]string{"0 0 0.5", "0 0 1.5"}, []bool{true, false}},
		{"any average out fires",
			averages(map[string]any{"1m": rng(0.0, 9.0), "5m": rng(0.0, 1.0), "15m": rng(0.0, 9.0)}),
			[]string{"5 0.5 5", "5 1.5 5"}, []bool{false, true}},
		{"max is inclusive",
			averages(map[string]any{"1m": rng("0", "2.0")}),
			[]string{"2.00 0 0"}, []bool{false}},
		{"onchangeonly: crossing max upwards once",
			beacons.Config{"averages": map[string]any{"1m": rng(0.0, 2.0)}, "onchangeonly": true},
			[]string{"1.0 0 0", "2.5 0 0", "3.0 0 0", "1.0 0 0", "2.1 0 0"}, []bool{false, true, false, false, true}},
		{"onchangeonly: crossing min downwards, not back",
			beacons.Config{"averages": map[string]any{"5m": rng(1.0, 2.0)}, "onchangeonly": true},
			[]string{"0 1.5 0", "0 0.5 0", "0 0.4 0", "0 1.5 0"}, []bool{false, true, false, false}},
		{"onchangeonly: emitatstartup fires an out-of-range first reading",
			beacons.Config{"averages": map[string]any{"1m": rng(0.0, 2.0)}, "onchangeonly": true},
			[]string{"2.5 0 0", "2.6 0 0"}, []bool{true, false}},
		{"onchangeonly: emitatstartup False",
			beacons.Config{"averages": map[string]any{"1m": rng(0.0, 2.0)}, "onchangeonly": true, "emitatstartup": false},
			[]string{"2.5 0 0", "2.6 0 0", "1.0 0 0", "2.5 0 0"}, []bool{false, false, false, true}},
		{"emitatstartup alone changes nothing",
			beacons.Config{"averages": map[string]any{"1m": rng(0.0, 2.0)}, "emitatstartup": false},
			[]string{"2.5 0 0", "2.6 0 0"}, []bool{true, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := newFakeRoot(t)
			b, err := newBeacon(tc.cfg, string(root))
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range tc.loads {
				root.set(t, l)
				evs, err := b.Check(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if got := len(evs) == 1; got != tc.fires[i] || len(evs) > 1 {
					t.Fatalf("check %d (%s): %d events, want fired=%v", i+1, l, len(evs), tc.fires[i])
				}
			}
		})
	}
}

func TestPayload(t *testing.T) {
	root := newFakeRoot(t)
	root.set(t, "1.82 1.84 1.56")
	b, err := newBeacon(averages(map[string]any{"1m": rng(0.0, 2.0), "5m": rng(0.0, 1.5), "15m": rng(0.0, 1.0)}), string(root))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := b.Check(context.Background())
	want := []beacons.Event{{Data: map[string]any{"1m": 1.82, "5m": 1.84, "15m": 1.56}}}
	if err != nil || !reflect.DeepEqual(evs, want) {
		t.Fatalf("Check = %#v, %v\nwant %#v", evs, err, want)
	}
}

func TestNoLoadavg(t *testing.T) {
	b, err := newBeacon(averages(map[string]any{"1m": rng(0.0, 2.0)}), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "loadavg") {
		t.Fatalf("Check without /proc/loadavg: %v, want an error", err)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  beacons.Config
		want string
	}{
		{beacons.Config{}, "averages: required"},
		{beacons.Config{"onchangeonly": true}, "averages: required"},
		{beacons.Config{"averages": []any{"1m"}}, "averages: want a mapping"},
		{averages(map[string]any{}), "averages: empty"},
		{averages(map[string]any{"2m": rng(0, 1)}), `averages: 2m: unknown average`},
		{averages(map[string]any{"1m": 2.0}), "averages: 1m: want a list of two numbers"},
		{averages(map[string]any{"1m": []any{1.0}}), "averages: 1m: want a list of two numbers"},
		{averages(map[string]any{"5m": rng("low", 1.0)}), "averages: 5m: min: want a number, got low"},
		{averages(map[string]any{"5m": rng(0.0, true)}), "averages: 5m: max: want a number, got true"},
		{averages(map[string]any{"15m": rng(2.0, 1.0)}), "averages: 15m: min 2 is above max 1"},
		{beacons.Config{"averages": map[string]any{"1m": rng(0, 1)}, "onchangeonly": "yes"}, "onchangeonly: want True or False"},
		{beacons.Config{"averages": map[string]any{"1m": rng(0, 1)}, "emitatstartup": int64(1)}, "emitatstartup: want True or False"},
		{beacons.Config{"averages": map[string]any{"1m": rng(0, 1)}, "1m": rng(0, 1)}, "1m: unknown option"},
	}
	for _, tc := range cases {
		_, err := Module.New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// current reads the real 1m average.
func current(t *testing.T) float64 {
	t.Helper()
	b := &Beacon{}
	avgs, err := b.read()
	if err != nil {
		t.Fatal(err)
	}
	return avgs[0]
}

// spin starts n shell busy loops, killed when the test ends (and after
// a minute at most).
func spin(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	var cmds []*exec.Cmd
	t.Cleanup(func() {
		cancel()
		for _, c := range cmds {
			_ = c.Wait()
		}
	})
	for range n {
		c := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatalf("busy loop: %v", err)
		}
		cmds = append(cmds, c)
	}
}

// TestRealLoad raises the machine's 1m average with busy loops past a max
// a little above the average read at the start: the plain beacon fires at
// every check once it is past, the onchangeonly one once.
func TestRealLoad(t *testing.T) {
	l0 := current(t)
	limit := l0 + 0.1
	plain, err := Module.New(averages(map[string]any{"1m": rng(0.0, limit)}))
	if err != nil {
		t.Fatal(err)
	}
	change, err := Module.New(beacons.Config{"averages": map[string]any{"1m": rng(0.0, limit)},
		"onchangeonly": true, "emitatstartup": false})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if evs, err := change.Check(ctx); err != nil || len(evs) != 0 {
		t.Fatalf("first onchangeonly check without emitatstartup = %v, %v; want nothing", evs, err)
	}
	// Enough loops to outweigh what else runs on the machine.
	spin(t, max(4, int(l0)+3))
	deadline := time.Now().Add(45 * time.Second)
	plainFired, changeFired := 0, 0
	var firedAt time.Time
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		evs, err := plain.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			plainFired++
			if v, ok := ev.Data["1m"].(float64); !ok || v <= limit {
				t.Fatalf("event %v: 1m is not a number above %v", ev.Data, limit)
			}
			for _, k := range keys {
				if _, ok := ev.Data[k].(float64); !ok {
					t.Fatalf("event %v: %s is not a number", ev.Data, k)
				}
			}
		}
		evs, err = change.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > 0 && changeFired == 0 {
			firedAt = time.Now()
		}
		changeFired += len(evs)
		// The kernel updates the averages every 5 s: a few checks past
		// the crossing show the plain beacon firing again and the
		// onchangeonly one not.
		if changeFired > 0 && time.Since(firedAt) > 6*time.Second {
			break
		}
	}
	if changeFired != 1 {
		t.Errorf("onchangeonly beacon fired %d times, want once (1m average from %.2f past %.2f)", changeFired, l0, limit)
	}
	if plainFired < 3 {
		t.Errorf("plain beacon fired %d times, want at every check past %.2f", plainFired, limit)
	}
}

// TestRealBelowMin has the real averages below a min far above them.
func TestRealBelowMin(t *testing.T) {
	l0 := current(t)
	b, err := Module.New(averages(map[string]any{"1m": rng(l0+100, l0+200)}))
	if err != nil {
		t.Fatal(err)
	}
	if evs, err := b.Check(context.Background()); err != nil || len(evs) != 1 {
		t.Fatalf("Check = %v, %v; want one event", evs, err)
	}
	b, err = Module.New(averages(map[string]any{"1m": rng(0.0, l0+100)}))
	if err != nil {
		t.Fatal(err)
	}
	if evs, err := b.Check(context.Background()); err != nil || len(evs) != 0 {
		t.Fatalf("Check in range = %v, %v; want nothing", evs, err)
	}
}
