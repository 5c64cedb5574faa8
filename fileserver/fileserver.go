// Package fileserver finds files in Salt's file_roots (salt://path, and the
// templates a reaction or state file includes) without ever leaving them:
// `..`, absolute paths elsewhere, NUL bytes and symbolic links that point
// out of a root are refused, whatever the path says. The reactor reads its
// templates through it, and agents' salt:// requests will be served by it,
// so that the class of Salt's CVE-2020-11652 cannot happen here.
package fileserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside reports a path that would leave the roots it may use.
var ErrOutside = errors.New("outside the allowed directories")

// ErrNotFound reports a path that is in no root.
var ErrNotFound = errors.New("not found")

// Roots are Salt's file_roots: directories by environment (saltenv).
type Roots map[string][]string

// Find looks rel (a salt:// path without its scheme) up in the directories
// of env, in order, and returns the first file that exists inside one of
// them.
func (r Roots) Find(env, rel string) (string, error) {
	if env == "" {
		env = "base"
	}
	dirs := r[env]
	if len(dirs) == 0 {
		return "", fmt.Errorf("salt://%s: %w: no file_roots for saltenv %q", rel, ErrNotFound, env)
	}
	if err := checkName(rel); err != nil {
		return "", fmt.Errorf("salt://%s: %w", rel, err)
	}
	for _, dir := range dirs {
		path, err := Confine(filepath.Join(dir, filepath.FromSlash(rel)), []string{dir})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("salt://%s: %w", rel, err)
		}
		return path, nil
	}
	return "", fmt.Errorf("salt://%s: %w in file_roots %s directories %v", rel, ErrNotFound, env, dirs)
}

// checkName refuses names no file of a root can have.
func checkName(name string) error {
	if strings.ContainsRune(name, 0) {
		return fmt.Errorf("%w: the name holds a NUL byte", ErrOutside)
	}
	return nil
}

// Confine returns path with its symbolic links resolved if it is inside one
// of dirs (after resolving theirs too), fs.ErrNotExist if it does not
// exist, and ErrOutside otherwise.
func Confine(path string, dirs []string) (string, error) {
	if err := checkName(path); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	for _, d := range dirs {
		rd, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if r, err := filepath.EvalSymlinks(rd); err == nil {
			rd = r
		}
		if real == rd || strings.HasPrefix(real, rd+string(os.PathSeparator)) {
			return real, nil
		}
	}
	return "", fmt.Errorf("%s: %w (%s)", path, ErrOutside, strings.Join(dirs, ", "))
}
