package file

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"

	"github.com/brinehq/brine/internal/py"
)

// Salt's messages, capitalised as Salt's.
var msgNotFound, msgNoUser = "File not found", "User does not exist"

// chown is Salt's win_file.chown: owner (an account name or a SID) becomes
// the owner of p; group is ignored, as win_file ignores it (a Windows
// file's primary group is not its permissions).
func chown(fun, p string, owner, _ any, _ bool) error {
	wrap := func(err error) error {
		if fun != "" {
			return fmt.Errorf("%s: %w", fun, err)
		}
		return err
	}
	if _, err := os.Lstat(p); err != nil {
		return wrap(errors.New(msgNotFound))
	}
	if owner == nil || owner == "" {
		return nil
	}
	name := py.Str(owner)
	sid, err := windows.StringToSid(name)
	if err != nil {
		if sid, _, _, err = windows.LookupSID("", name); err != nil {
			return wrap(errors.New(msgNoUser))
		}
	}
	if err := windows.SetNamedSecurityInfo(p, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION,
		sid, nil, nil, nil); err != nil {
		return wrap(fmt.Errorf("set the owner of %s to %s: %w", p, name, err))
	}
	return nil
}
