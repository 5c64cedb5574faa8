//go:build !windows

package testenv

import "testing"

// TempDir is t.TempDir.
func TempDir(t testing.TB) string {
	t.Helper()
	return t.TempDir()
}
