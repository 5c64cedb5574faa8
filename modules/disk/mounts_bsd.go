//go:build darwin || freebsd

package disk

import (
	"bytes"
	"fmt"

	"golang.org/x/sys/unix"
)

// systemMounts lists the mounts with getfsstat(2), as df does on macOS
// and FreeBSD, which have no /proc/mounts: device, mount point and type,
// in the kernel's order. MNT_NOWAIT takes the kernel's cached figures, so
// a hung network mount cannot hang the listing (measure's statfs of it
// still may, as df's does).
func systemMounts(string) ([]Mount, bool, error) {
	n, err := unix.Getfsstat(nil, unix.MNT_NOWAIT)
	if err != nil {
		return nil, true, fmt.Errorf("getfsstat: %w", err)
	}
	// Room for mounts made between the two calls.
	buf := make([]unix.Statfs_t, n+8)
	if n, err = unix.Getfsstat(buf, unix.MNT_NOWAIT); err != nil {
		return nil, true, fmt.Errorf("getfsstat: %w", err)
	}
	out := make([]Mount, 0, n)
	for _, st := range buf[:n] {
		out = append(out, Mount{Device: cString(st.Mntfromname[:]), Dir: cString(st.Mntonname[:]), Type: cString(st.Fstypename[:])})
	}
	return out, true, nil
}

// cString is a NUL-terminated name of a fixed-size field.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
