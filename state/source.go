package state

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/brinehq/brine/fileserver"
)

// Roots is a Source reading directories directly: the master's
// file_roots (orchestration) and pillar_roots. Files are confined to the
// roots, as the file server confines what it serves agents.
type Roots fileserver.Roots

// Read implements Source.
func (r Roots) Read(_ context.Context, saltenv, name string) ([]byte, error) {
	if _, ok := r[saltenv]; !ok {
		return nil, fmt.Errorf("saltenv %q: %w", saltenv, ErrNotFound)
	}
	p, err := fileserver.Roots(r).Find(saltenv, name)
	if errors.Is(err, fileserver.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("salt://%s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// Envs implements Source.
func (r Roots) Envs(context.Context) ([]string, error) {
	return fileserver.Roots(r).Envs(), nil
}
