//go:build !windows

package file

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// chown sets the owner and group of p as Salt's chown: user nil is the
// agent's user when nilIsMe, "" (or a nil group) leaves it as it is; names
// or ids. A broken symlink is changed itself. fun "" leaves the error
// unprefixed.
func chown(fun, p string, owner, group any, nilIsMe bool) error {
	uid, gid := -1, -1
	var problems []string
	switch {
	case owner == nil && nilIsMe:
		uid = os.Geteuid()
	case owner == nil, owner == "":
	default:
		id, ok := lookupUser(owner)
		if !ok {
			problems = append(problems, "User does not exist")
		}
		uid = id
	}
	if group != nil && group != "" {
		id, ok := lookupGroup(group)
		if !ok {
			problems = append(problems, "Group does not exist")
		}
		gid = id
	}
	var err error
	if _, serr := os.Stat(p); serr != nil {
		if len(problems) == 0 && os.Lchown(p, uid, gid) == nil {
			return nil
		}
		problems = append(problems, "File not found")
	}
	if len(problems) > 0 {
		err = errors.New(strings.Join(problems, "; "))
	} else {
		err = os.Chown(p, uid, gid)
	}
	if err != nil && fun != "" {
		err = fmt.Errorf("%s: %w", fun, err)
	}
	return err
}
