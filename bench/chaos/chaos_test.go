package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestChaosShort is the chaos suite's short profile, run by `make test`:
// the same three masters, ten agents, peers, workload and invariants as
// `make chaos`, with faults every 8–12 s for 75 s. It needs root and the
// Debian packages make test installs; a violation fails it with the seed
// that replays its schedule (go run ./bench/chaos -seed N).
func TestChaosShort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the chaos suite needs root: network namespaces, veth links and BIND run as nobody (CI runs as root)")
	}
	bin := filepath.Join(t.TempDir(), "brine")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/brine").CombinedOutput(); err != nil {
		t.Fatalf("building brine: %v\n%s", err, out)
	}
	cfg := config{brine: bin, duration: 75 * time.Second, faultMin: 8 * time.Second, faultMax: 12 * time.Second,
		agents: 10, orchEvery: 40 * time.Second, out: filepath.Join(t.TempDir(), "chaos.json")}
	f, err := run(context.Background(), cfg)
	if f != nil {
		t.Logf("figures: %v", f.Figures)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(cfg.out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", b)
}
