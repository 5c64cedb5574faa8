package master

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
)

// fileserverFuncs are Salt's fileserver runner functions over file_roots
// (brine's only backend): what the master serves agents, to see why a
// salt:// path is or is not found.
func (r runners) fileserverFuncs() []function.Func {
	saltenv := []function.Param{{Name: "saltenv", Kind: function.String, Default: "base"}, {Name: "backend", Kind: function.Any}}
	return []function.Func{
		{Name: "fileserver.envs", ReadOnly: true, Doc: "The environments (saltenvs) of file_roots, sorted.",
			Params: []function.Param{{Name: "backend", Kind: function.Any}, {Name: "sources", Kind: function.Bool, Default: false}},
			Run: func(context.Context, *function.Input) (any, error) {
				roots, err := r.m.roots()
				if err != nil {
					return nil, err
				}
				return py.List(roots.Envs()), nil
			}},
		{Name: "fileserver.file_list", ReadOnly: true, Doc: "The files served in saltenv (paths relative to its roots), sorted.",
			Params: saltenv, Run: func(_ context.Context, in *function.Input) (any, error) {
				roots, err := r.m.roots()
				if err != nil {
					return nil, err
				}
				return py.List(roots.List(in.String("saltenv"), "")), nil
			}},
		{Name: "fileserver.dir_list", ReadOnly: true, Doc: "The directories of saltenv's roots (relative), sorted.",
			Params: saltenv, Run: func(_ context.Context, in *function.Input) (any, error) { return r.dirs(in.String("saltenv"), false) }},
		{Name: "fileserver.empty_dir_list", ReadOnly: true, Doc: "The empty directories of saltenv's roots (relative), sorted.",
			Params: saltenv, Run: func(_ context.Context, in *function.Input) (any, error) { return r.dirs(in.String("saltenv"), true) }},
		{Name: "fileserver.update", Doc: "True: file_roots are read from disk at each request, there is nothing to update.",
			Params: []function.Param{{Name: "backend", Kind: function.Any}}, VarKwargs: true,
			Run: func(context.Context, *function.Input) (any, error) { return true, nil }},
	}
}

// dirs walks saltenv's roots as Salt's roots backend does: every directory
// under a root (not the root itself), relative, without following
// symbolic links; only the empty ones with empty.
func (r runners) dirs(saltenv string, empty bool) (any, error) {
	roots, err := r.m.roots()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, root := range roots[saltenv] {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || p == root {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return nil
			}
			if empty {
				if entries, err := os.ReadDir(p); err != nil || len(entries) > 0 {
					return nil
				}
			}
			seen[filepath.ToSlash(rel)] = true
			return nil
		})
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return py.List(out), nil
}
