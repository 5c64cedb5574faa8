//go:build !windows

package file

import "context"

// noModes is false: Unix files have modes, and users and groups owning
// them.
const noModes = false

// checkOwner is only Windows'.
func (s *states) checkOwner(context.Context, string, any, map[string]any, map[string]any) (perms, error) {
	return perms{}, nil
}
