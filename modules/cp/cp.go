// Package cp is Salt's cp execution module: files from the master's file
// server (salt://, confined there to file_roots) copied to the agent,
// fetched in checksummed chunks and cached by hash, so a file that did not
// change is not sent again; and cp.push, a file of the agent sent to the
// master (push.go).
package cp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
)

// Module declares the cp functions.
func Module(env *modules.Env) []function.Func {
	saltenv := function.Param{Name: "saltenv", Kind: function.String, Default: "base", Aliases: []string{"env"}}
	path := function.Param{Name: "path", Kind: function.String, Required: true}
	dest := function.Param{Name: "dest", Kind: function.String, Required: true}
	template, gzip := function.Param{Name: "template", Kind: function.Any}, function.Param{Name: "gzip", Kind: function.Any}
	files := func() (modules.Files, error) {
		if env.Files == nil {
			return nil, errors.New("salt:// needs a master, and this call runs without one")
		}
		return env.Files, nil
	}
	// source is the file server and the salt:// path a function names,
	// refusing a template it cannot render.
	source := func(in *function.Input) (modules.Files, string, error) {
		fs, err := files()
		if err != nil {
			return nil, "", err
		}
		if in.Value("template") != nil {
			return nil, "", errors.New("template: brine copies files as they are; rendering them on copy is not supported")
		}
		p := in.String("path")
		if !strings.HasPrefix(p, "salt://") {
			return nil, "", fmt.Errorf("%q: want a salt:// path", p)
		}
		return fs, p, nil
	}
	// listMaster is the master's files in saltenv under prefix, the prefix as
	// Salt's file server reads it: without its slashes, the paths that
	// start with it.
	listMaster := func(ctx context.Context, in *function.Input) ([]string, string, error) {
		fs, err := files()
		if err != nil {
			return nil, "", err
		}
		prefix := strings.Trim(in.String("prefix"), "/")
		l, err := fs.List(ctx, in.String("saltenv"), prefix)
		return l, prefix, err
	}
	return []function.Func{
		{
			Name: "cp.get_file", Doc: "Copy salt://path to dest on this agent (makedirs=True creates its directory); returns dest, or '' when the source does not exist.",
			Params: []function.Param{path, dest, saltenv, {Name: "makedirs", Kind: function.Bool, Default: false}, template, gzip},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				fs, src, err := source(in)
				if err != nil {
					return nil, err
				}
				cached, err := fs.Cache(ctx, src, in.String("saltenv"))
				if errors.Is(err, modules.ErrNoFile) {
					return "", nil // Salt returns '' for a source that is not there
				}
				if err != nil {
					return nil, err
				}
				return copyTo(cached, in.String("dest"), filepath.Base(src), in.Bool("makedirs"))
			},
		},
		{
			Name: "cp.cache_file", Doc: "Fetch salt://path into the agent's cache and return the local path ('' when it does not exist).",
			Params: []function.Param{path, saltenv},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				fs, err := files()
				if err != nil {
					return nil, err
				}
				p := in.String("path")
				if !strings.HasPrefix(p, "salt://") {
					if _, err := os.Stat(p); err == nil {
						return p, nil // Salt returns a local path as it is
					}
					return "", nil
				}
				local, err := fs.Cache(ctx, p, in.String("saltenv"))
				if errors.Is(err, modules.ErrNoFile) {
					return "", nil
				}
				if err != nil {
					return nil, err
				}
				return local, nil
			},
		},
		{
			Name: "cp.get_dir", Doc: "Copy the directory salt://path, recursively, into dest; returns the files written.",
			Params: []function.Param{path, dest, saltenv, template, gzip},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				fs, src, err := source(in)
				if err != nil {
					return nil, err
				}
				// List takes and gives paths relative to the saltenv's root.
				prefix := strings.TrimSuffix(strings.TrimPrefix(src, "salt://"), "/") + "/"
				list, err := fs.List(ctx, in.String("saltenv"), prefix)
				if err != nil {
					return nil, err
				}
				// Salt copies the directory itself into dest.
				base := filepath.Join(in.String("dest"), filepath.Base(strings.TrimSuffix(src, "/")))
				out := []any{}
				for _, rel := range list {
					cached, err := fs.Cache(ctx, rel, in.String("saltenv"))
					if err != nil {
						return out, err
					}
					dest := filepath.Join(base, filepath.FromSlash(strings.TrimPrefix(rel, prefix)))
					if _, err := copyTo(cached, dest, "", true); err != nil {
						return out, err
					}
					out = append(out, dest)
				}
				return out, nil
			},
		},
		{
			Name: "cp.list_master", Doc: "The files of the master's file server in saltenv, under prefix.", ReadOnly: true,
			Params: []function.Param{saltenv, {Name: "prefix", Kind: function.String, Default: ""}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				l, _, err := listMaster(ctx, in)
				if err != nil {
					return nil, err
				}
				return py.List(l), nil
			},
		},
		{
			Name: "cp.list_states", Doc: "The SLS names of the master's file server in saltenv, sorted (a/init.sls is a, a/b.sls a.b), as Salt's fileclient list_states.", ReadOnly: true,
			Params: []function.Param{saltenv},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				l, _, err := listMaster(ctx, in)
				if err != nil {
					return nil, err
				}
				return listStates(l), nil
			},
		},
		{
			Name: "cp.list_master_dirs", Doc: "The directories of the master's file server in saltenv that start with prefix (those holding files).", ReadOnly: true,
			Params: []function.Param{saltenv, {Name: "prefix", Kind: function.String, Default: ""}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				l, prefix, err := listMaster(ctx, in)
				if err != nil {
					return nil, err
				}
				return masterDirs(l, prefix), nil
			},
		},
		{
			Name: "cp.hash_file", Doc: "The master's hash of salt://path: {hash_type: sha256, hsum: …}, or {} when absent.", ReadOnly: true,
			Params: []function.Param{path, saltenv},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				fs, src, err := source(in)
				if err != nil {
					return nil, err
				}
				h, err := fs.Hash(ctx, src, in.String("saltenv"))
				if errors.Is(err, modules.ErrNoFile) {
					return map[string]any{}, nil
				}
				if err != nil {
					return nil, err
				}
				return map[string]any{"hash_type": "sha256", "hsum": h}, nil
			},
		},
		pushFunc(env),
		pushDirFunc(env),
	}
}

// copyTo copies the cached file src to dest (into it, named name, when dest
// is a directory), replacing it whole (atomicfile).
func copyTo(src, dest, name string, makedirs bool) (string, error) {
	if st, err := os.Stat(dest); err == nil && st.IsDir() && name != "" {
		dest = filepath.Join(dest, name)
	}
	dir := filepath.Dir(dest)
	if makedirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
	} else if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("%s: the directory does not exist (makedirs=True creates it)", dir)
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return "", err
	}
	err = atomicfile.Write(dest, st.Mode().Perm()|0o644, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
	if err != nil {
		return "", err
	}
	return dest, nil
}

// masterDirs is Salt's file server dir_list from the files listed: every
// directory (relative to the environment's root, not the root itself)
// starting with prefix, sorted. The master lists files only, so a
// directory with no file under it is not known here (Salt lists it).
// listStates is Salt's fileclient list_states over the master's files:
// each .sls file's path with dots for slashes, less "/init.sls" or ".sls",
// once each, sorted (the php formula's modules.sls includes php.<module>
// when that name is among them).
func listStates(files []string) []any {
	seen := map[string]bool{}
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, "/init.sls"):
			seen[strings.ReplaceAll(strings.TrimSuffix(f, "/init.sls"), "/", ".")] = true
		case strings.HasSuffix(f, ".sls"):
			seen[strings.ReplaceAll(strings.TrimSuffix(f, ".sls"), "/", ".")] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

func masterDirs(files []string, prefix string) []any {
	seen := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(f); d != "." && d != "/" && d != "" && !seen[d]; d = path.Dir(d) {
			seen[d] = true
		}
	}
	dirs := make([]string, 0, len(seen))
	for d := range seen {
		if strings.HasPrefix(d, prefix) {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	return py.List(dirs)
}
