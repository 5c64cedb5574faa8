//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package agentcmd

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA
