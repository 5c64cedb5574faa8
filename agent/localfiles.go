package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/brinehq/brine/fileserver"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/modules"
)

// localFiles is the file client of file_client: local (Salt's FSClient):
// salt:// paths are looked up in the agent's own file_roots, confined to
// them as the master's file server confines what it serves, and copied
// into the same cache a remote client fills, so that what a function gets
// back (cp.cache_file's path) is where Salt's would be.
type localFiles struct {
	roots fileserver.Roots
	dir   string // cachedir/files
}

func (f *localFiles) find(p, saltenv string) (string, string, error) {
	if saltenv == "" {
		saltenv = "base"
	}
	rel, err := cleanPath(p)
	if err != nil {
		return "", "", err
	}
	src, err := f.roots.Find(saltenv, rel)
	if errors.Is(err, fileserver.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("%w: salt://%s in file_roots %s %v", modules.ErrNoFile, rel, saltenv, f.roots[saltenv])
	}
	if err != nil {
		return "", "", err
	}
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		return "", "", fmt.Errorf("salt://%s: is a directory", rel)
	}
	return src, rel, nil
}

func (f *localFiles) Hash(_ context.Context, p, saltenv string) (string, error) {
	src, _, err := f.find(p, saltenv)
	if err != nil {
		return "", err
	}
	return fileHash(src)
}

func (f *localFiles) Cache(_ context.Context, p, saltenv string) (string, error) {
	if saltenv == "" {
		saltenv = "base"
	}
	src, rel, err := f.find(p, saltenv)
	if err != nil {
		return "", err
	}
	want, err := fileHash(src)
	if err != nil {
		return "", err
	}
	dest := filepath.Join(f.dir, saltenv, filepath.FromSlash(rel))
	if h, err := fileHash(dest); err == nil && h == want {
		return dest, nil
	}
	st, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", err
	}
	err = atomicfile.Write(dest, st.Mode().Perm()&0o755, func(w io.Writer) error {
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		_, err = io.Copy(w, in)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("salt://%s: %w", rel, err)
	}
	return dest, nil
}

func (f *localFiles) List(_ context.Context, saltenv, prefix string) ([]string, error) {
	return f.roots.List(saltenv, prefix), nil
}

func (f *localFiles) Envs(context.Context) ([]string, error) {
	return f.roots.Envs(), nil
}
