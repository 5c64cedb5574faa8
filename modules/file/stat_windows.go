package file

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// statInfo is Salt's win_file.stats: the owner's SID as uid and gid and
// its account name as user and group ("the illusion that group is the
// same as user", as win_file keeps for the states), the primary group as
// pgid/pgroup, times, size and the permission bits Python derives from
// the read-only attribute (0666, 0444; 0777 for a directory); inode 0, as
// Python's st_ino of a path Windows does not number.
func statInfo(p string, fi os.FileInfo) (map[string]any, error) {
	out := map[string]any{
		"inode": 0,
		"size":  fi.Size(),
		"mode":  NormalizeMode(uint32(fi.Mode().Perm())),
		"mtime": float64(fi.ModTime().UnixNano()) / 1e9,
	}
	out["atime"], out["ctime"] = out["mtime"], out["mtime"]
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		out["atime"] = float64(d.LastAccessTime.Nanoseconds()) / 1e9
		out["ctime"] = float64(d.CreationTime.Nanoseconds()) / 1e9
	}
	sd, err := windows.GetNamedSecurityInfo(p, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.GROUP_SECURITY_INFORMATION)
	if err != nil {
		return nil, fmt.Errorf("owner of %s: %w", p, err)
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return nil, fmt.Errorf("owner of %s: %w", p, err)
	}
	out["uid"], out["user"] = owner.String(), accountName(owner)
	out["gid"], out["group"] = out["uid"], out["user"]
	if g, _, err := sd.Group(); err == nil && g != nil {
		out["pgid"], out["pgroup"] = g.String(), accountName(g)
	}
	return out, nil
}

// accountName is the account name a SID stands for, without its domain
// (Salt's win_dacl.get_name); "" when it cannot be looked up.
func accountName(sid *windows.SID) string {
	name, _, _, err := sid.LookupAccount("")
	if err != nil {
		return ""
	}
	return name
}
