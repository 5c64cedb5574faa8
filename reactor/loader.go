package reactor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	gonjacfg "github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/loaders"

	"github.com/brinehq/brine/fileserver"
)

// templateLoader reads the templates a reaction file includes, imports or
// extends: salt:// paths from file_roots, other names relative to the
// including template or in file_roots. It never reads outside the reaction
// file's own directory and file_roots (no `..`, no absolute path elsewhere,
// no symbolic link out), so a reaction file cannot print /etc/passwd into
// `brine reactor test` or an event. Every template it reads has its
// outputs rewritten, as the reaction file's are (scalar.go).
type templateLoader struct {
	file    string   // the reaction file, served from src
	src     []byte   // its rewritten source
	dir     string   // where relative names start
	allowed []string // the reaction file's directory and every file_roots directory
	roots   fileserver.Roots
	cfg     *gonjacfg.Config
}

var _ loaders.Loader = (*templateLoader)(nil)

func newTemplateLoader(file string, src []byte, roots map[string][]string, cfg *gonjacfg.Config) *templateLoader {
	allowed := []string{filepath.Dir(file)}
	for _, dirs := range roots {
		allowed = append(allowed, dirs...)
	}
	return &templateLoader{file: file, src: src, dir: filepath.Dir(file), allowed: allowed, roots: roots, cfg: cfg}
}

// Resolve implements loaders.Loader.
func (l *templateLoader) Resolve(name string) (string, error) {
	if name == l.file {
		return name, nil
	}
	if rest, ok := strings.CutPrefix(name, "salt://"); ok {
		return l.roots.Find("base", rest)
	}
	var candidates []string
	if filepath.IsAbs(name) {
		candidates = []string{name}
	} else {
		candidates = append(candidates, filepath.Join(l.dir, name))
		for _, root := range l.roots["base"] {
			candidates = append(candidates, filepath.Join(root, name))
		}
	}
	for _, c := range candidates {
		path, err := fileserver.Confine(c, l.allowed)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("template %q: %w", name, err)
		}
		return path, nil
	}
	return "", fmt.Errorf("template %q: %w in %s or file_roots", name, fileserver.ErrNotFound, l.dir)
}

// Read implements loaders.Loader.
func (l *templateLoader) Read(name string) (io.Reader, error) {
	path, err := l.Resolve(name)
	if err != nil {
		return nil, err
	}
	if path == l.file {
		return bytes.NewReader(l.src), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	src, _ := rewriteOutputs(string(b), l.cfg)
	return strings.NewReader(src), nil
}

// Inherit implements loaders.Loader: names in the template from are
// relative to its directory.
func (l *templateLoader) Inherit(from string) (loaders.Loader, error) {
	path, err := l.Resolve(from)
	if err != nil {
		return nil, err
	}
	sub := *l
	sub.dir = filepath.Dir(path)
	return &sub, nil
}
