package sysuser

import (
	"errors"
	"io/fs"
	"os/user"
	"syscall"
)

// Owner returns false: Windows files are owned by SIDs, not numeric ids,
// and the agent keeps a rewritten file's owner by writing it in place of
// the old one under the same ACL inheritance.
func Owner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// Umask returns 0: Windows has no file mode creation mask.
func Umask() fs.FileMode { return 0 }

// ProcAttr refuses: running as another Windows account needs its password
// (Salt's runas/password), which brine's agent does not take.
func ProcAttr(u *user.User) (*syscall.SysProcAttr, error) {
	return nil, errors.New("running as user " + u.Username + " is not supported on Windows by brine's agent")
}
