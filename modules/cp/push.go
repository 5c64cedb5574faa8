package cp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
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
			if err := pushOne(ctx, env, in.String("path"), in.Bool("keep_symlinks"), in.String("upload_path"), in.Bool("remove_source")); err != nil {
				return nil, err
			}
			return true, nil
		},
	}
}

// pushDirFunc declares cp.push_dir, Salt's: every file under path (whose
// name matches glob) pushed as cp.push pushes it, under upload_path when
// given.
func pushDirFunc(env *modules.Env) function.Func {
	return function.Func{
		Name: "cp.push_dir",
		Doc: "Send every file under the directory path (absolute; those whose name matches glob) to the master, as cp.push, " +
			"under upload_path when given. True.",
		Params: []function.Param{
			{Name: "path", Kind: function.String, Required: true},
			{Name: "glob", Kind: function.String},
			{Name: "upload_path", Kind: function.String},
		},
		Run: func(ctx context.Context, in *function.Input) (any, error) {
			p, up := in.String("path"), in.String("upload_path")
			if strings.Contains(p, "../") || !filepath.IsAbs(p) {
				return nil, fmt.Errorf("path %q: want an absolute path without ../", p)
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", p, err)
			}
			if st, err := os.Stat(real); err == nil && st.Mode().IsRegular() {
				return true, pushOne(ctx, env, real, false, up, false)
			}
			var files []string
			glob := in.String("glob")
			match := fnmatch.Compile(glob) // Python's fnmatch, as Salt's
			err = filepath.WalkDir(real, func(f string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() {
					return nil
				}
				// A link to a directory is not a file (Python's os.walk
				// lists it with the directories, and does not enter it).
				if st, err := os.Stat(f); err == nil && st.IsDir() {
					return nil
				}
				if glob != "" && !match.Match(filepath.Base(f)) {
					return nil
				}
				files = append(files, f)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", p, err)
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("path %q: no file to push (glob %q)", p, glob)
			}
			for _, f := range files {
				target := ""
				if up != "" {
					rel := strings.Trim(strings.TrimPrefix(f, real), string(os.PathSeparator))
					target = string(os.PathSeparator) + filepath.Join(strings.Trim(up, string(os.PathSeparator)), rel)
				}
				if err := pushOne(ctx, env, f, false, target, false); err != nil {
					return nil, err
				}
			}
			return true, nil
		},
	}
}

// pushOne is cp.push of one file.
func pushOne(ctx context.Context, env *modules.Env, p string, keepSymlinks bool, uploadPath string, removeSource bool) error {
	if env.Master == nil {
		return errors.New("cp.push sends the file to the master, and this call runs without one")
	}
	if strings.Contains(p, "../") || !filepath.IsAbs(p) {
		return fmt.Errorf("path %q: want an absolute path without ../", p)
	}
	if !keepSymlinks {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("path %q: %w", p, err)
		}
		p = real
	}
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("path %q: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("path %q: not a regular file", p)
	}
	load := p
	if uploadPath != "" {
		if strings.Contains(uploadPath, "../") {
			return fmt.Errorf("upload_path %q: ../ is not allowed", uploadPath)
		}
		load = uploadPath
	}
	parts := SplitPushPath(load)
	if len(parts) == 0 {
		return fmt.Errorf("path %q: nothing to name the file by on the master", load)
	}
	if err := push(ctx, env.Master, p, parts); err != nil {
		return err
	}
	if removeSource {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("cp.push sent %s and failed to remove it: %w", p, err)
		}
	}
	return nil
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
		if err := master.PushFile(ctx, parts, loc, size, buf[:n]); err != nil {
			return fmt.Errorf("cp.push %s: %w", local, err)
		}
		if loc += int64(n); loc >= size {
			return nil
		}
	}
}
