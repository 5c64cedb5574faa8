//go:build !linux && !darwin && !freebsd && !windows

package fsstat

import (
	"fmt"
	"runtime"
)

// Statfs reports that this system's file systems are not measured.
func Statfs(dir string) (Stat, error) {
	return Stat{}, fmt.Errorf("not available on %s", runtime.GOOS)
}
