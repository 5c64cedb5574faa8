//go:build !windows && !darwin && !freebsd

package disk

// systemMounts is not used on Linux and the other Unixes: /proc/mounts
// lists the mounts.
func systemMounts(string) ([]Mount, bool, error) { return nil, false, nil }
