//go:build !windows

package jinja

import "syscall"

// accessX is os.access(p, X_OK).
func accessX(p string) bool { return syscall.Access(p, 1) == nil }
