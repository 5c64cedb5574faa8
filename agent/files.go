package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/fileserver"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/wire"
)

// fileClient fetches files from the master's file server (salt://) into
// the agent's cache, Salt's fileclient: a cached file whose sha256 matches
// the master's is not fetched again; a fetched file is checked against the
// hash before it replaces the cached one.
type fileClient struct {
	a   *Agent
	dir string // cachedir/files
}

// cleanPath makes p (salt://x, or x) a relative slash path, refusing what
// would climb out; the master confines it to file_roots again.
func cleanPath(p string) (string, error) {
	rel := strings.TrimPrefix(p, "salt://")
	clean := path.Clean("/" + rel)[1:]
	if clean == "" || strings.ContainsRune(rel, 0) || clean != strings.TrimPrefix(rel, "/") && strings.Contains(rel, "..") {
		return "", fmt.Errorf("salt://%s: outside the allowed directories (file_roots)", rel)
	}
	return clean, nil
}

func (f *fileClient) Hash(ctx context.Context, p, saltenv string) (string, error) {
	st, err := f.stat(ctx, p, saltenv)
	if err != nil {
		return "", err
	}
	return st.Hash, nil
}

func (f *fileClient) stat(ctx context.Context, p, saltenv string) (wire.FileStat, error) {
	var st wire.FileStat
	rel, err := cleanPath(p)
	if err != nil {
		return st, err
	}
	err = masterCaller{f.a}.Call(ctx, wire.MethodFileStat, wire.FileRequest{Path: rel, Saltenv: saltenv}, &st)
	var re *gateway.RemoteError
	if errors.As(err, &re) && strings.Contains(re.Message, fileserver.ErrNotFound.Error()) {
		err = fmt.Errorf("%w: %s", modules.ErrNoFile, re.Message)
	}
	return st, err
}

// Envs lists the master's saltenvs.
func (f *fileClient) Envs(ctx context.Context) ([]string, error) {
	var out []string
	err := masterCaller{f.a}.Call(ctx, wire.MethodFileEnvs, struct{}{}, &out)
	return out, err
}

func (f *fileClient) List(ctx context.Context, saltenv, prefix string) ([]string, error) {
	var out []string
	err := masterCaller{f.a}.Call(ctx, wire.MethodFileList, wire.FileList{Saltenv: saltenv, Prefix: prefix}, &out)
	return out, err
}

func (f *fileClient) Cache(ctx context.Context, p, saltenv string) (string, error) {
	if saltenv == "" {
		saltenv = "base"
	}
	rel, err := cleanPath(p)
	if err != nil {
		return "", err
	}
	st, err := f.stat(ctx, rel, saltenv)
	if err != nil {
		return "", err
	}
	dest := filepath.Join(f.dir, saltenv, filepath.FromSlash(rel))
	if h, err := fileHash(dest); err == nil && h == st.Hash {
		return dest, nil
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", err
	}
	err = atomicfile.Write(dest, os.FileMode(st.Mode&0o755), func(w io.Writer) error {
		sum := sha256.New()
		w = io.MultiWriter(w, sum)
		var off int64
		for {
			var chunk wire.FileChunk
			req := wire.FileRequest{Path: rel, Saltenv: saltenv, Offset: off}
			if err := (masterCaller{f.a}).Call(ctx, wire.MethodFileRead, req, &chunk); err != nil {
				return fmt.Errorf("salt://%s: %w", rel, err)
			}
			if _, err := w.Write(chunk.Data); err != nil {
				return err
			}
			off += int64(len(chunk.Data))
			if chunk.EOF {
				break
			}
			if len(chunk.Data) == 0 {
				return fmt.Errorf("salt://%s: the master sent no data at offset %d", rel, off)
			}
		}
		if got := hex.EncodeToString(sum.Sum(nil)); got != st.Hash {
			return fmt.Errorf("salt://%s: the file changed while it was fetched (sha256 %s, expected %s); try again", rel, got, st.Hash)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return dest, nil
}

// fileHash is the sha256 of a local file, hex.
func fileHash(p string) (string, error) {
	fh, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
