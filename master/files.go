package master

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/brinehq/brine/fileserver"
	"github.com/brinehq/brine/reactor"
	"github.com/brinehq/brine/wire"
)

// fileChunk is how much of a file one file_read answer carries (base64 in
// JSON: a third more on the wire).
const fileChunk = 256 << 10

// roots are the file_roots agents are served from (the reactor's
// configuration reads them).
func (m *Master) roots() (fileserver.Roots, error) {
	cfg, err := reactor.LoadConfig(m.cfg)
	if err != nil {
		return nil, err
	}
	return fileserver.Roots(cfg.FileRoots), nil
}

// files serves the master's file_roots to agents (Salt's fileserver for
// minions: salt:// URLs), confined to the roots; a refusal is logged with
// the asking agent's id.
type files struct {
	// roots are the file_roots in force (they change on reload).
	roots func() (fileserver.Roots, error)
	log   *slog.Logger
}

// open opens the file an agent's request names, confined to
// file_roots; a refusal is logged with the agent's id.
func (f files) open(id string, body json.RawMessage) (*os.File, wire.FileRequest, error) {
	var req wire.FileRequest
	if err := readBody("file request", body, &req); err != nil {
		return nil, req, err
	}
	roots, err := f.roots()
	if err != nil {
		return nil, req, err
	}
	path, err := roots.Find(req.Saltenv, strings.TrimPrefix(req.Path, "salt://"))
	if err != nil {
		f.log.Warn("file request refused", "agent", id, "err", err)
		return nil, req, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, req, fmt.Errorf("salt://%s: %w", req.Path, err)
	}
	return file, req, nil
}

func (f files) stat(_ context.Context, id string, body json.RawMessage) (any, error) {
	file, req, err := f.open(id, body)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("salt://%s: is a directory", req.Path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return nil, err
	}
	return wire.FileStat{Size: st.Size(), Hash: hex.EncodeToString(h.Sum(nil)), Mode: uint32(st.Mode().Perm())}, nil
}

func (f files) read(_ context.Context, id string, body json.RawMessage) (any, error) {
	file, req, err := f.open(id, body)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	buf := make([]byte, fileChunk)
	n, err := file.ReadAt(buf, req.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("salt://%s: %w", req.Path, err)
	}
	return wire.FileChunk{Data: buf[:n], EOF: errors.Is(err, io.EOF) || n < fileChunk}, nil
}

// fileList lists the files of a saltenv, as cp.list_master: relative
// paths, the first root that has a path winning, nothing outside a root.
func (f files) list(_ context.Context, _ string, body json.RawMessage) (any, error) {
	var req wire.FileList
	if err := readBody("file list", body, &req); err != nil {
		return nil, err
	}
	roots, err := f.roots()
	if err != nil {
		return nil, err
	}
	return roots.List(req.Saltenv, req.Prefix), nil
}

// envs lists the saltenvs of file_roots, for agents' top files.
func (f files) envs(context.Context, string, json.RawMessage) (any, error) {
	roots, err := f.roots()
	if err != nil {
		return nil, err
	}
	return roots.Envs(), nil
}
