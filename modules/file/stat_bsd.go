//go:build darwin || freebsd || netbsd || openbsd

package file

import "syscall"

// statTimes are a stat's access, modification and change times.
func statTimes(st *syscall.Stat_t) (a, m, c syscall.Timespec) {
	return st.Atimespec, st.Mtimespec, st.Ctimespec
}
