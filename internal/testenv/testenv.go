// Package testenv is what tests say about the machine they need: root, for
// a test that mounts, creates users or network namespaces or starts
// daemons. make test runs every test, as root, and such a test fails
// there, saying why, when it cannot run; make check (go test -short), the
// edit-test loop that needs no root, skips it instead, saying that make
// test runs it. No test skips silently, and none skips in make test.
package testenv

import (
	"os"
	"testing"
)

// NeedRoot stops a test that needs root, why saying what for: under -short
// it skips; otherwise, without root, it fails.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs root (%s): make test runs it", why)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("needs root: %s (run the tests as root, as make test in CI does; uid is %d)", why, os.Geteuid())
	}
}
