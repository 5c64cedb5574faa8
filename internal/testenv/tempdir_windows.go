package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TempDir is t.TempDir, removed file by file at the end of the test: Go's
// os.RemoveAll (and so t.TempDir's cleanup) deletes with
// FileDispositionInformationEx, which wine 8 (Debian's, where the Windows
// tests run) does not implement, while DeleteFile and RemoveDirectory,
// which os.Remove uses, work there as on Windows.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "brine-test-")
	if err != nil {
		t.Fatalf("temporary directory: %v", err)
	}
	t.Cleanup(func() {
		var paths []string
		_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
			if err == nil {
				paths = append(paths, p)
			}
			return nil
		})
		// Children before their directory.
		slices.Reverse(paths)
		for _, p := range paths {
			_ = os.Chmod(p, 0o666)
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				t.Errorf("remove %s: %v", p, err)
			}
		}
	})
	return dir
}
