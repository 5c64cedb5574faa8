// Package atomicfile replaces files whole: the content is written to a
// temporary file beside the target, synced, given its mode and renamed
// over the target, and the directory is synced, so that a reader sees the
// old file or the new one, never a part, and a crash leaves one of them.
// The agent's outbox, its grains file and fetched salt:// files, copies
// made by cp and dnsmasq's files are written this way.
package atomicfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Write replaces path with what fill writes, with mode. When fill fails,
// path is left as it was.
func Write(path string, mode fs.FileMode, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	err = fill(f)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", path, err)
	}
	return nil
}

// WriteBytes replaces path with b, with mode.
func WriteBytes(path string, b []byte, mode fs.FileMode) error {
	return Write(path, mode, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// SyncDir syncs a directory, making the renames in it durable. Windows
// has no directory to sync (a directory opened there refuses
// FlushFileBuffers; MoveFileEx's rename is journaled by NTFS itself).
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
