package fileserver

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Envs lists the saltenvs of the roots, sorted.
func (r Roots) Envs() []string {
	envs := make([]string, 0, len(r))
	for env := range r {
		envs = append(envs, env)
	}
	sort.Strings(envs)
	return envs
}

// List lists the files of env whose relative slash path starts with
// prefix, as cp.list_master does: the first root holding a path wins,
// and nothing outside a root (a symbolic link pointing out) is listed.
// The master answers agents' listings with it, and a masterless agent
// (file_client: local) lists its own file_roots with it.
func (r Roots) List(env, prefix string) []string {
	if env == "" {
		env = "base"
	}
	seen := map[string]bool{}
	for _, dir := range r[env] {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, rerr := filepath.Rel(dir, p)
			if rerr != nil {
				return nil
			}
			rel = filepath.ToSlash(rel)
			if !strings.HasPrefix(rel, prefix) {
				return nil
			}
			if _, err := Confine(p, []string{dir}); err != nil {
				return nil
			}
			seen[rel] = true
			return nil
		})
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
