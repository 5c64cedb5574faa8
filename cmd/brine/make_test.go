package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMakeDemoSaysItIsBuilding: the first thing `make demo` prints is that
// it is building and roughly how long that takes, before the silent first
// build.
func TestMakeDemoSaysItIsBuilding(t *testing.T) {
	out, err := exec.Command("make", "--no-print-directory", "-C", "../..", "-n", "demo").Output()
	if err != nil {
		t.Fatalf("make -n demo: %v", err)
	}
	lines := strings.Split(string(out), "\n")
	build := -1
	for i, l := range lines {
		if strings.Contains(l, "go build") {
			build = i
			break
		}
	}
	if build < 1 || !strings.Contains(lines[0], "building") || !strings.Contains(lines[0], "minutes") {
		t.Errorf("make demo does not announce its build before it starts:\n%s", out)
	}
}
