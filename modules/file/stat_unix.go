//go:build !windows

package file

import (
	"fmt"
	"os"
	"syscall"
)

// statInfo is Salt's file.stats of what stat(2) says of p: inode, owner
// ids and names, times, size and permission bits.
func statInfo(p string, fi os.FileInfo) (map[string]any, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, fmt.Errorf("stat %s: no system data", p)
	}
	atime, mtime, ctime := statTimes(st)
	return map[string]any{
		"inode": st.Ino,
		"uid":   int(st.Uid),
		"gid":   int(st.Gid),
		"user":  userName(int(st.Uid)),
		"group": groupName(int(st.Gid)),
		"atime": seconds(atime),
		"mtime": seconds(mtime),
		"ctime": seconds(ctime),
		"size":  st.Size,
		"mode":  NormalizeMode(uint32(st.Mode) & 0o7777),
	}, nil
}

func seconds(ts syscall.Timespec) float64 {
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}
