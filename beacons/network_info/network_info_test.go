package network_info

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/beacons"
)

const netDev = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 10488406286 11309648    0 2494    0     0          0         0 10488406286 11309648    0    0    0     0       0          0
  eth0: 143007963   12600    3    4    0     0          0         0  1441135   10600    5    6    0     0       0          0
`

func devRoot(t *testing.T, dev string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc", "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc", "net", "dev"), []byte(dev), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

var eth0 = map[string]any{"bytes_sent": int64(1441135), "bytes_recv": int64(143007963), "packets_sent": int64(10600),
	"packets_recv": int64(12600), "errin": int64(3), "errout": int64(5), "dropin": int64(4), "dropout": int64(6)}

func ifaces(m map[string]any) beacons.Config { return beacons.Config{"interfaces": m} }

// TestCompare checks which configurations fire on a written /proc/net/dev.
func TestCompare(t *testing.T) {
	root := devRoot(t, netDev)
	fired := []beacons.Event{{Key: "eth0", Data: map[string]any{"interface": "eth0", "network_info": eth0}}}
	cases := []struct {
		name string
		cfg  beacons.Config
		want []beacons.Event
	}{
		{"equal by default", ifaces(map[string]any{"eth0": map[string]any{"errin": int64(3)}}), fired},
		{"equal", ifaces(map[string]any{"eth0": map[string]any{"type": "equal", "bytes_sent": "1441135"}}), fired},
		{"not equal", ifaces(map[string]any{"eth0": map[string]any{"errin": int64(2)}}), nil},
		{"one counter of several", ifaces(map[string]any{"eth0": map[string]any{"errin": int64(9), "dropout": 6.0}}), fired},
		{"greater", ifaces(map[string]any{"eth0": map[string]any{"type": "greater", "packets_recv": int64(12599)}}), fired},
		{"greater, not equal", ifaces(map[string]any{"eth0": map[string]any{"type": "greater", "packets_recv": int64(12600)}}), nil},
		{"absent interface passed over", ifaces(map[string]any{"eth0": map[string]any{"errout": uint64(5)},
			"wlan9": map[string]any{"errout": int64(0)}}), fired},
		{"one event per interface", ifaces(map[string]any{"eth0": map[string]any{"dropin": int64(4)},
			"lo": map[string]any{"type": "greater", "bytes_recv": int64(0)}}),
			[]beacons.Event{fired[0], {Key: "lo", Data: map[string]any{"interface": "lo", "network_info": map[string]any{
				"bytes_sent": int64(10488406286), "bytes_recv": int64(10488406286), "packets_sent": int64(11309648),
				"packets_recv": int64(11309648), "errin": int64(0), "errout": int64(0), "dropin": int64(2494), "dropout": int64(0)}}}}},
	}
	for _, tc := range cases {
		b, err := newBeacon(tc.cfg, root)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if evs, err := b.Check(context.Background()); err != nil || !reflect.DeepEqual(evs, tc.want) {
			t.Errorf("%s: Check = %#v, %v\nwant %#v", tc.name, evs, err, tc.want)
		}
	}
}

func TestCheckErrors(t *testing.T) {
	cases := []struct {
		name, dev string
		want      string
	}{
		{"no interface configured exists", netDev, "network_info: no interface wlan8, wlan9 on this machine"},
		{"short line", netDev + "  bad0: 1 2 3\n", `/proc/net/dev line 5: unexpected "  bad0: 1 2 3"`},
		{"not a number", netDev + "  bad0: 1 2 3 4 5 6 7 8 9 10 11 x 13 14 15 16\n", `line 5: strconv.ParseUint: parsing "x"`},
	}
	for _, tc := range cases {
		b, err := newBeacon(ifaces(map[string]any{"wlan9": map[string]any{"errin": int64(0)},
			"wlan8": map[string]any{"errin": int64(0)}}), devRoot(t, tc.dev))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Check(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v, want %q", tc.name, err, tc.want)
		}
	}
	b, err := newBeacon(ifaces(map[string]any{"lo": map[string]any{"errin": int64(0)}}), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "network counters: open") {
		t.Errorf("Check without /proc/net/dev = %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  beacons.Config
		want string
	}{
		{beacons.Config{}, "interfaces: required"},
		{beacons.Config{"interfaces": map[string]any{}}, "interfaces: want a mapping of interface names"},
		{beacons.Config{"interfaces": []any{"eth0"}}, "interfaces: want a mapping of interface names"},
		{beacons.Config{"interfaces": map[string]any{"lo": map[string]any{"errin": 0}}, "eth0": map[string]any{}}, "eth0: unknown option (want interfaces)"},
		{ifaces(map[string]any{"eth0": "errin"}), "interfaces: eth0: want a mapping of counters"},
		{ifaces(map[string]any{"eth0": map[string]any{}}), "interfaces: eth0: no counter"},
		{ifaces(map[string]any{"eth0": map[string]any{"type": "greater"}}), "interfaces: eth0: no counter"},
		{ifaces(map[string]any{"eth0": map[string]any{"type": "less", "errin": 1}}), "interfaces: eth0: type: want equal or greater, got less"},
		{ifaces(map[string]any{"eth0": map[string]any{"errin": 1, "bytes_out": 1}}), "interfaces: eth0: bytes_out: unknown counter"},
		{ifaces(map[string]any{"eth0": map[string]any{"errin": int64(-1)}}), "interfaces: eth0: errin: want a non-negative integer, got -1"},
		{ifaces(map[string]any{"eth0": map[string]any{"errin": 1.5}}), "interfaces: eth0: errin: want a non-negative integer, got 1.5"},
		{ifaces(map[string]any{"eth0": map[string]any{"errin": "many"}}), "interfaces: eth0: errin: want a non-negative integer, got many"},
	} {
		if _, err := Module.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// send pushes n bytes through a TCP connection on the loopback interface.
func send(t *testing.T, n int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		m, _ := io.Copy(io.Discard, c)
		got <- m
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(c, zeros{}, n); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m != n {
		t.Fatalf("sent %d bytes over loopback, %d received", n, m)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

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

// TestRealLoopback drives the loopback interface's counters with 64 MiB
// of TCP traffic past thresholds halfway there.
func TestRealLoopback(t *testing.T) {
	stats, err := Stats("")
	if err != nil {
		t.Fatal(err)
	}
	lo, ok := stats["lo"]
	if !ok {
		t.Fatal("no loopback interface lo in /proc/net/dev")
	}
	const n = 64 << 20
	cases := []struct {
		name    string
		counter string
		value   uint64
	}{
		{"bytes received", "bytes_recv", lo["bytes_recv"] + n/2},
		{"bytes sent", "bytes_sent", lo["bytes_sent"] + n/2},
		{"packets sent", "packets_sent", lo["packets_sent"] + 100},
	}
	cfg := func(counter string, value uint64) beacons.Config {
		return ifaces(map[string]any{"lo": map[string]any{"type": "greater", counter: value}})
	}
	for _, tc := range cases {
		if evs := check(t, cfg(tc.counter, tc.value)); len(evs) != 0 {
			t.Fatalf("%s: %v before the traffic", tc.name, evs)
		}
	}
	send(t, n)
	for _, tc := range cases {
		evs := check(t, cfg(tc.counter, tc.value))
		if len(evs) != 1 || evs[0].Data["interface"] != "lo" {
			t.Fatalf("%s over %d: %v, want one event for lo", tc.name, tc.value, evs)
		}
		info, _ := evs[0].Data["network_info"].(map[string]any)
		if v, ok := info[tc.counter].(int64); !ok || uint64(v) <= tc.value || len(info) != len(Counters) {
			t.Fatalf("%s over %d: payload %v", tc.name, tc.value, evs[0].Data)
		}
	}
	// The error counters of lo stay where they are: equal fires on their
	// value, not on another.
	if evs := check(t, ifaces(map[string]any{"lo": map[string]any{"type": "equal", "errout": lo["errout"]}})); len(evs) != 1 {
		t.Fatalf("errout equal to %d: %v, want one event", lo["errout"], evs)
	}
	if evs := check(t, ifaces(map[string]any{"lo": map[string]any{"errout": lo["errout"] + 1}})); len(evs) != 0 {
		t.Fatalf("errout equal to %d: %v, want nothing", lo["errout"]+1, evs)
	}
}
