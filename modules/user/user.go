// Package user is Salt's user execution module's queries: info, getent,
// list_users and list_groups, read from /etc/passwd and /etc/group (under
// root when given, as Salt's root argument) rather than through NSS, so
// that no cgo is needed and a chroot's users can be read.
package user

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/group"
	"github.com/brinehq/brine/modules/internal/etcfile"
)

// User is one line of /etc/passwd.
type User struct {
	Name   string
	Passwd string
	UID    int
	GID    int
	Gecos  string
	Home   string
	Shell  string
}

// Users reads root's /etc/passwd ("" is the machine's), in its order;
// lines that are not users (comments, NIS "+" entries, malformed ones)
// are skipped.
func Users(root string) ([]User, error) {
	recs, err := etcfile.Records(root, "passwd", 7)
	if err != nil {
		return nil, err
	}
	var out []User
	for _, f := range recs {
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, User{Name: f[0], Passwd: f[1], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]})
	}
	return out, nil
}

// GroupNames are the names of the groups u belongs to, sorted: its
// primary group and those listing it as a member, with every name a gid
// among them has (Salt's get_group_list over getgrouplist).
func GroupNames(u User, groups []group.Group) []string {
	gids := map[int]bool{u.GID: true}
	for _, g := range groups {
		if slices.Contains(g.Members, u.Name) {
			gids[g.GID] = true
		}
	}
	var names []string
	for _, g := range groups {
		if gids[g.GID] && !slices.Contains(names, g.Name) {
			names = append(names, g.Name)
		}
	}
	slices.Sort(names)
	return names
}

// info is the user in Salt's shape.
func info(u User, groups []group.Group) map[string]any {
	// Salt splits the GECOS field in at most five parts.
	gecos := strings.SplitN(u.Gecos, ",", 5)
	for len(gecos) < 5 {
		gecos = append(gecos, "")
	}
	return map[string]any{
		"name": u.Name, "passwd": u.Passwd, "uid": u.UID, "gid": u.GID, "home": u.Home, "shell": u.Shell,
		"fullname": gecos[0], "roomnumber": gecos[1], "workphone": gecos[2], "homephone": gecos[3], "other": gecos[4],
		"groups": py.List(GroupNames(u, groups)),
	}
}

// read reads root's users and groups.
func read(fun, root string) ([]User, []group.Group, error) {
	users, err := Users(root)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", fun, err)
	}
	groups, err := group.Groups(root)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", fun, err)
	}
	return users, groups, nil
}

// rootParam is the root argument every user function takes.
var rootParam = function.Param{Name: "root", Kind: function.String}

// Module declares the user functions.
func Module(*modules.Env) []function.Func {
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	return []function.Func{
		{
			Name: "user.info", ReadOnly: true,
			Doc: "The user name as {name, uid, gid, home, shell, passwd, fullname, roomnumber, workphone, homephone, " +
				"other, groups}; {} when there is none. root reads another root's files.",
			Params: []function.Param{name, rootParam},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				users, groups, err := read(in.Func, in.String("root"))
				if err != nil {
					return nil, err
				}
				for _, u := range users {
					if u.Name == in.String("name") {
						return info(u, groups), nil
					}
				}
				return map[string]any{}, nil
			},
		},
		{
			Name: "user.getent", ReadOnly: true,
			Doc:    "Every user, as user.info describes them (refresh is accepted: nothing is cached).",
			Params: []function.Param{{Name: "refresh", Kind: function.Bool, Default: false}, rootParam},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				users, groups, err := read(in.Func, in.String("root"))
				if err != nil {
					return nil, err
				}
				out := make([]any, len(users))
				for i, u := range users {
					out[i] = info(u, groups)
				}
				return out, nil
			},
		},
		{
			Name: "user.list_users", Doc: "The names of every user, sorted.", ReadOnly: true,
			Params: []function.Param{rootParam},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				users, err := Users(in.String("root"))
				if err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				names := make([]string, len(users))
				for i, u := range users {
					names[i] = u.Name
				}
				slices.Sort(names)
				return py.List(names), nil
			},
		},
		{
			Name: "user.list_groups", Doc: "The names of the groups the user name belongs to, sorted.", ReadOnly: true,
			Params: []function.Param{name, rootParam},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				users, groups, err := read(in.Func, in.String("root"))
				if err != nil {
					return nil, err
				}
				u := User{Name: in.String("name"), GID: -1}
				for _, x := range users {
					if x.Name == u.Name {
						u = x
						break
					}
				}
				return py.List(GroupNames(u, groups)), nil
			},
		},
	}
}
