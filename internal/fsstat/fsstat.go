// Package fsstat measures a file system as statvfs(2) does, on every
// operating system the agent runs on: disk.usage, status.diskusage and the
// diskusage beacon read the same figures, and only this package knows how
// each system reports them (statfs on Linux and the BSDs, with fields of
// different names and widths; GetDiskFreeSpaceEx on Windows).
package fsstat

// Stat is a file system's size in blocks, as statvfs's fields.
type Stat struct {
	// Bsize is the preferred block size (f_bsize) and Frsize the
	// fundamental one (f_frsize, 0 where the system has none); the
	// counts are in Frsize units, or Bsize where Frsize is 0.
	Bsize, Frsize uint64
	// Blocks is the size, Bfree the free blocks, Bavail those free to
	// users other than root.
	Blocks, Bfree, Bavail uint64
	// Dev is the device the directory is on (st_dev), so that mounts of
	// one device can be told apart from another's.
	Dev uint64
}
