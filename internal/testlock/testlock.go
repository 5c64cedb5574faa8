// Package testlock serialises tests of different packages that share a
// machine-wide resource: `go test ./...` runs packages in parallel, and
// two tests installing packages at once see each other's installs in
// their before/after package lists.
package testlock

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Hold takes the machine-wide lock name until the test ends.
func Hold(t testing.TB, name string) {
	t.Helper()
	p := filepath.Join(os.TempDir(), "brine-testlock-"+name)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("test lock %s: %v", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("test lock %s: %v", p, err)
	}
	t.Cleanup(func() { f.Close() })
}
