package fsstat

import "golang.org/x/sys/unix"

// Statfs measures the file system dir is on; its error is the system's,
// for the caller to name as it shows it (statfs, statvfs).
func Statfs(dir string) (Stat, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return Stat{}, err
	}
	var fi unix.Stat_t
	if err := unix.Stat(dir, &fi); err != nil {
		return Stat{}, err
	}
	return Stat{Bsize: uint64(st.Bsize), Frsize: uint64(st.Frsize), Blocks: st.Blocks, Bfree: st.Bfree,
		Bavail: st.Bavail, Dev: uint64(fi.Dev)}, nil
}
