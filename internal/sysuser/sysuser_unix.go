//go:build !windows

package sysuser

import (
	"fmt"
	"io/fs"
	"os/user"
	"strconv"
	"syscall"
)

// Owner returns the user and group ids owning the file fi describes; ok is
// false when the system does not say.
func Owner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// Umask returns the process's file mode creation mask.
func Umask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

// ProcAttr returns what runs a program as u, with u's groups.
func ProcAttr(u *user.User) (*syscall.SysProcAttr, error) {
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %s: %w", u.Username, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %s: %w", u.Username, u.Gid, err)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	return &syscall.SysProcAttr{Credential: cred}, nil
}
