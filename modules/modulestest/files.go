// Package modulestest holds fakes of what an agent gives its execution
// and state modules, for their tests: the master's file server in
// memory.
package modulestest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/brinehq/brine/modules"
)

// Files is a master's file server (modules.Files) in memory (paths with
// or without salt://, as the agent's client takes them): Tree[saltenv]
// [path] is the file's content; Cache writes it under Dir, counting the
// fetches in Fetched.
type Files struct {
	Dir     string
	Tree    map[string]map[string]string
	Fetched atomic.Int64
}

var _ modules.Files = (*Files)(nil)

// Cache implements modules.Files.
func (f *Files) Cache(_ context.Context, p, saltenv string) (string, error) {
	p = strings.TrimPrefix(p, "salt://")
	body, ok := f.Tree[saltenv][p]
	if !ok {
		return "", fmt.Errorf("%w: salt://%s", modules.ErrNoFile, p)
	}
	f.Fetched.Add(1)
	local := filepath.Join(f.Dir, saltenv, p)
	if err := os.MkdirAll(filepath.Dir(local), 0o700); err != nil {
		return "", err
	}
	return local, os.WriteFile(local, []byte(body), 0o640)
}

// List implements modules.Files.
func (f *Files) List(_ context.Context, saltenv, prefix string) ([]string, error) {
	var out []string
	for p := range f.Tree[saltenv] {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Envs implements modules.Files.
func (f *Files) Envs(context.Context) ([]string, error) {
	out := make([]string, 0, len(f.Tree))
	for e := range f.Tree {
		out = append(out, e)
	}
	slices.Sort(out)
	return out, nil
}

// Hash implements modules.Files: ErrNoFile for a file that does not
// exist, as the agent's file client answers.
func (f *Files) Hash(_ context.Context, p, saltenv string) (string, error) {
	p = strings.TrimPrefix(p, "salt://")
	body, ok := f.Tree[saltenv][p]
	if !ok {
		return "", fmt.Errorf("%w: salt://%s", modules.ErrNoFile, p)
	}
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:]), nil
}
