//go:build darwin || freebsd

package fsstat

import "golang.org/x/sys/unix"

// Statfs measures the file system dir is on; its error is the system's,
// for the caller to name as it shows it (statfs, statvfs). The BSDs' statfs has no
// f_frsize: its counts are in f_bsize units; FreeBSD's f_bavail is signed
// (negative once root's reserve is in use), which is none available.
func Statfs(dir string) (Stat, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return Stat{}, err
	}
	var fi unix.Stat_t
	if err := unix.Stat(dir, &fi); err != nil {
		return Stat{}, err
	}
	avail := int64(st.Bavail) //nolint:unconvert // signed on FreeBSD, unsigned on macOS
	return Stat{Bsize: uint64(st.Bsize), Blocks: uint64(st.Blocks), Bfree: uint64(st.Bfree),
		Bavail: uint64(max(avail, 0)), Dev: uint64(fi.Dev)}, nil
}
