package file

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/state"
)

// noModes is true: Windows files have ACLs, not modes. As Salt's file
// states on Windows, file.managed refuses mode ("The 'mode' option is not
// supported on Windows"), file.directory's dir_mode and file_mode are not
// applied, group is ignored (Salt logs that it is) and user is the owner
// (Salt's win_owner).
const noModes = true

// checkOwner is Salt's win_file.check_perms for the owner: user, when
// given and not already the owner, becomes the owner of path.
func (s *states) checkOwner(ctx context.Context, path string, usr any, st map[string]any, changes map[string]any) (perms, error) {
	var p perms
	p.lmode = py.Str(st["mode"])
	if !given(usr) {
		return p, nil
	}
	want := py.Str(usr)
	if cur, _ := st["user"].(string); strings.EqualFold(cur, want) || strings.EqualFold(py.Str(st["uid"]), want) {
		return p, nil
	}
	if state.From(ctx).Test {
		changes["user"] = usr
		return p, nil
	}
	if err := setOwner(path, want); err != nil {
		p.failed = true
		p.comments = append(p.comments, fmt.Sprintf("Failed to change user to %s: %v", want, err))
		return p, nil
	}
	changes["user"] = usr
	return p, nil
}

// setOwner makes the account name (or a SID string) the owner of path.
func setOwner(path, name string) error {
	sid, err := windows.StringToSid(name)
	if err != nil {
		if sid, _, _, err = windows.LookupSID("", name); err != nil {
			return fmt.Errorf("user %s does not exist: %w", name, err)
		}
	}
	return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION,
		sid, nil, nil, nil)
}
