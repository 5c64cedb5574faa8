package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/wire"
)

// FileRecvKeys are the master configuration keys cp.push reads: Salt's
// file_recv (off unless True), file_recv_max_size (MiB, default 100) and
// cachedir (where the files are kept, default <data_dir>/cache).
var FileRecvKeys = []string{"file_recv", "file_recv_max_size", "cachedir"}

// fileRecvDefaultMax is Salt's file_recv_max_size, in MiB.
const fileRecvDefaultMax = 100

// ErrFileRecv is a cp.push chunk the master refuses.
var ErrFileRecv = errors.New("file push refused")

// fileRecv keeps the files agents push (cp.push), as Salt's
// AESFuncs._file_recv: under cachedir/minions/<id>/files/<path>, only when
// file_recv is True, none larger than file_recv_max_size, never outside
// that directory. A file is written beside its place and renamed there
// when its last chunk arrives, so a reader never sees half of one.
type fileRecv struct {
	// cfg is the configuration in force (file_recv changes on reload).
	cfg func() *config.Master
	log *slog.Logger
	mu  sync.Mutex // one chunk at a time: chunks of one file follow each other
}

// fileRecvSettings reads file_recv, file_recv_max_size and cachedir from the
// configuration in force.
func fileRecvSettings(c *config.Master) (on bool, maxBytes int64, cachedir string, err error) {
	maxMiB := int64(fileRecvDefaultMax)
	if err := c.Decode("file_recv", &on); err != nil {
		return false, 0, "", err
	}
	if err := c.Decode("file_recv_max_size", &maxMiB); err != nil {
		return false, 0, "", err
	}
	if maxMiB < 0 {
		return false, 0, "", fmt.Errorf("file_recv_max_size: %d: want a number of MiB, 0 or more", maxMiB)
	}
	if err := c.Decode("cachedir", &cachedir); err != nil {
		return false, 0, "", err
	}
	if cachedir == "" {
		cachedir = filepath.Join(c.Settings.DataDir, "cache")
	}
	return on, maxMiB << 20, cachedir, nil
}

// pushPath checks the path an agent pushes to and returns it relative to
// its files directory: components that are not empty, ".", "..", nor hold
// a separator or NUL.
func pushPath(parts []string) (string, error) {
	var clean []string
	for _, p := range parts {
		switch {
		case p == "" || p == ".":
			continue
		case p == ".." || strings.ContainsAny(p, "/\\\x00"):
			return "", fmt.Errorf("%w: path component %q", ErrFileRecv, p)
		}
		clean = append(clean, p)
	}
	if len(clean) == 0 {
		return "", fmt.Errorf("%w: no path", ErrFileRecv)
	}
	rel := path.Join(clean...)
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: path %q leaves the agent's files directory", ErrFileRecv, rel)
	}
	return rel, nil
}

// partSuffix names a file being received beside its place.
const partSuffix = ".brine-part"

// push answers an agent's MethodFilePush.
func (r *fileRecv) push(_ context.Context, id string, body json.RawMessage) (any, error) {
	var req wire.FilePush
	if err := readBody("file push", body, &req); err != nil {
		return nil, err
	}
	err := r.write(id, req)
	if err != nil {
		r.log.Warn("file push refused", "agent", id, "path", strings.Join(req.Path, "/"), "err", err)
	}
	return map[string]any{}, err
}

func (r *fileRecv) write(id string, req wire.FilePush) error {
	on, maxBytes, cachedir, err := fileRecvSettings(r.cfg())
	if err != nil {
		return err
	}
	if !on {
		return fmt.Errorf("%w: the master's file_recv is not True", ErrFileRecv)
	}
	if err := mine.ValidateID(id); err != nil {
		return fmt.Errorf("%w: %v", ErrFileRecv, err)
	}
	rel, err := pushPath(req.Path)
	if err != nil {
		return err
	}
	switch {
	case req.Loc < 0 || req.Size < 0:
		return fmt.Errorf("%w: negative offset or size", ErrFileRecv)
	case req.Size > maxBytes || req.Loc+int64(len(req.Data)) > maxBytes:
		return fmt.Errorf("%w: %s is %d bytes, over file_recv_max_size (%d MiB)", ErrFileRecv, rel, req.Size, maxBytes>>20)
	case req.Loc+int64(len(req.Data)) > req.Size:
		return fmt.Errorf("%w: chunk at %d of %d bytes runs past the file's size %d", ErrFileRecv, req.Loc, len(req.Data), req.Size)
	}
	dir := filepath.Join(cachedir, "minions", id, "files")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("file_recv: %w", err)
	}
	// Confined to the agent's directory: a symbolic link there cannot
	// lead a write out of it.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("file_recv: %w", err)
	}
	defer root.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := path.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("file_recv: %s: %w", rel, err)
		}
	}
	part := rel + partSuffix
	flags := os.O_WRONLY | os.O_CREATE
	if req.Loc == 0 {
		flags |= os.O_TRUNC
	} else if fi, err := root.Stat(part); err != nil || fi.Size() != req.Loc {
		// Chunks come in order, each after the one before.
		have := int64(-1)
		if err == nil {
			have = fi.Size()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("file_recv: %s: %w", rel, err)
		}
		return fmt.Errorf("%w: chunk at %d of %s, which has %d bytes so far", ErrFileRecv, req.Loc, rel, max(have, 0))
	}
	f, err := root.OpenFile(part, flags, 0o600)
	if err != nil {
		return fmt.Errorf("file_recv: %s: %w", rel, err)
	}
	if _, err := f.WriteAt(req.Data, req.Loc); err != nil {
		f.Close()
		return fmt.Errorf("file_recv: %s: %w", rel, err)
	}
	if req.Loc+int64(len(req.Data)) < req.Size {
		return f.Close()
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("file_recv: %s: %w", rel, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("file_recv: %s: %w", rel, err)
	}
	if err := root.Rename(part, rel); err != nil {
		return fmt.Errorf("file_recv: %s: %w", rel, err)
	}
	return nil
}
