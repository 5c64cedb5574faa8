package cp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/agent/proto"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// pushChunk is how much of a file one cp.push message carries: Salt's
// file_buffer_size.
const pushChunk = 256 << 10

// pushFunc declares cp.push, Salt's: a file of this agent sent to the
// master, which keeps it under cachedir/minions/<id>/files/<path> when its
// file_recv is True. Where Salt returns False without saying why, brine
// fails with the reason (the path, or the master's refusal).
func pushFunc(env *modules.Env) function.Func {
	return function.Func{
		Name: "cp.push",
		Doc: "Send the file at path (absolute) to the master, which keeps it under cachedir/minions/<id>/files/<path, or " +
			"upload_path> when its file_recv is True; remove_source=True deletes it here once sent. True.",
		Params: []function.Param{
			{Name: "path", Kind: function.String, Required: true},
			{Name: "keep_symlinks", Kind: function.Bool, Default: false},
			{Name: "upload_path", Kind: function.String},
			{Name: "remove_source", Kind: function.Bool, Default: false},
		},
		Run: func(ctx context.Context, in *function.Input) (any, error) {
			if env.Master == nil {
				return nil, errors.New("cp.push sends the file to the master, and this call runs without one")
			}
			p := in.String("path")
			if strings.Contains(p, "../") || !filepath.IsAbs(p) {
				return nil, fmt.Errorf("path %q: want an absolute path without ../", p)
			}
			if !in.Bool("keep_symlinks") {
				real, err := filepath.EvalSymlinks(p)
				if err != nil {
					return nil, fmt.Errorf("path %q: %w", p, err)
				}
				p = real
			}
			st, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", p, err)
			}
			if !st.Mode().IsRegular() {
				return nil, fmt.Errorf("path %q: not a regular file", p)
			}
			load := p
			if up := in.String("upload_path"); up != "" {
				if strings.Contains(up, "../") {
					return nil, fmt.Errorf("upload_path %q: ../ is not allowed", up)
				}
				load = up
			}
			parts := SplitPushPath(load)
			if len(parts) == 0 {
				return nil, fmt.Errorf("path %q: nothing to name the file by on the master", load)
			}
			if err := push(ctx, env.Master, p, parts); err != nil {
				return nil, err
			}
			if in.Bool("remove_source") {
				if err := os.RemoveAll(p); err != nil {
					return nil, fmt.Errorf("cp.push sent %s and failed to remove it: %w", p, err)
				}
			}
			return true, nil
		},
	}
}

// SplitPushPath is the path the master keeps a pushed file at, as Salt's
// cp.push sends it: without its leading separator, normalized, split into
// its components.
func SplitPushPath(p string) []string {
	p = filepath.Clean(strings.TrimLeft(p, string(os.PathSeparator)))
	var out []string
	for _, c := range strings.Split(p, string(os.PathSeparator)) {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// push sends the file at local in chunks (one, empty, for an empty file):
// as many bytes as it had when the push began.
func push(ctx context.Context, master modules.Master, local string, parts []string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	buf := make([]byte, pushChunk)
	for loc := int64(0); ; {
		n, err := io.ReadFull(f, buf[:min(int64(len(buf)), size-loc)])
		if err != nil {
			return fmt.Errorf("reading %s: %w (it shrank while being sent)", local, err)
		}
		chunk := proto.FilePush{Path: parts, Loc: loc, Size: size, Data: buf[:n]}
		if err := master.Call(ctx, proto.MethodFilePush, chunk, nil); err != nil {
			return fmt.Errorf("cp.push %s: %w", local, err)
		}
		if loc += int64(n); loc >= size {
			return nil
		}
	}
}
