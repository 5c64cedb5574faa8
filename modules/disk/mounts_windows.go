package disk

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// systemMounts lists Windows' drives (GetLogicalDriveStrings) as Salt's
// win_disk.usage keys them ("C:\\"), with their file system's name as the
// type; drives without a medium (an empty card reader, a CD drive) are
// left out, as win_disk leaves out what it cannot measure.
func systemMounts(string) ([]Mount, bool, error) {
	buf := make([]uint16, 1024)
	n, err := windows.GetLogicalDriveStrings(uint32(len(buf)), &buf[0])
	if err != nil {
		return nil, true, fmt.Errorf("drives: %w", err)
	}
	var out []Mount
	// The drives are NUL-separated: C:\ NUL D:\ NUL.
	var drives []string
	for start, i := 0, 0; i < int(n); i++ {
		if buf[i] == 0 {
			if i > start {
				drives = append(drives, windows.UTF16ToString(buf[start:i]))
			}
			start = i + 1
		}
	}
	for _, d := range drives {
		root, _ := windows.UTF16PtrFromString(d)
		switch windows.GetDriveType(root) {
		case windows.DRIVE_NO_ROOT_DIR, windows.DRIVE_UNKNOWN, windows.DRIVE_CDROM, windows.DRIVE_REMOVABLE:
			continue
		}
		var fs [windows.MAX_PATH + 1]uint16
		typ := ""
		if windows.GetVolumeInformation(root, nil, 0, nil, nil, nil, &fs[0], uint32(len(fs))) == nil {
			typ = windows.UTF16ToString(fs[:])
		}
		out = append(out, Mount{Device: d, Dir: d, Type: typ})
	}
	return out, true, nil
}
