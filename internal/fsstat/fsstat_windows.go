package fsstat

import "golang.org/x/sys/windows"

// Statfs measures the volume dir is on with GetDiskFreeSpaceEx, in blocks
// of one byte: Windows reports bytes, and the free bytes available to the
// agent's account (its quota) stand for f_bavail. Dev is the volume's
// serial number.
func Statfs(dir string) (Stat, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return Stat{}, err
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return Stat{}, err
	}
	st := Stat{Bsize: 1, Frsize: 1, Blocks: total, Bfree: free, Bavail: avail}
	var root [windows.MAX_PATH + 1]uint16
	if windows.GetVolumePathName(p, &root[0], uint32(len(root))) == nil {
		var serial uint32
		if windows.GetVolumeInformation(&root[0], nil, 0, &serial, nil, nil, nil, 0) == nil {
			st.Dev = uint64(serial)
		}
	}
	return st, nil
}
