//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package agentcmd

import "golang.org/x/sys/unix"

// isTerminal asks for the terminal attributes, which only a terminal has.
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	return err == nil
}
