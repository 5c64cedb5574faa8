// Package group is Salt's group execution module's queries: info and
// getent, read from /etc/group (under root when given, as Salt's root
// argument) rather than through NSS, so that no cgo is needed and a
// chroot's groups can be read.
package group

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/internal/etcfile"
)

// Group is one line of /etc/group.
type Group struct {
	Name    string
	Passwd  string
	GID     int
	Members []string
}

// Info is the group in Salt's shape: {name, passwd, gid, members}.
func (g Group) Info() map[string]any {
	members := make([]any, len(g.Members))
	for i, m := range g.Members {
		members[i] = m
	}
	return map[string]any{"name": g.Name, "passwd": g.Passwd, "gid": g.GID, "members": members}
}

// Groups reads root's /etc/group ("" or "/" is the machine's), in its
// order; lines that are not groups (comments, NIS "+" entries, malformed
// ones) are skipped.
func Groups(root string) ([]Group, error) {
	recs, err := etcfile.Records(root, "group", 4)
	if err != nil {
		return nil, err
	}
	var out []Group
	for _, f := range recs {
		gid, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		g := Group{Name: f[0], Passwd: f[1], GID: gid, Members: []string{}}
		if f[3] != "" {
			g.Members = strings.Split(f[3], ",")
		}
		out = append(out, g)
	}
	return out, nil
}

// root is the root argument every group function takes.
var root = function.Param{Name: "root", Kind: function.String}

// Module declares the group functions.
func Module(*modules.Env) []function.Func {
	return []function.Func{
		{
			Name: "group.info", Doc: "The group name as {name, passwd, gid, members}; {} when there is none. " +
				"root reads another root's /etc/group.",
			Params:   []function.Param{{Name: "name", Kind: function.String, Required: true}, root},
			ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				gs, err := Groups(in.String("root"))
				if err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				for _, g := range gs {
					if g.Name == in.String("name") {
						return g.Info(), nil
					}
				}
				return map[string]any{}, nil
			},
		},
		{
			Name: "group.getent", Doc: "Every group, as group.info describes them (refresh is accepted: nothing is cached).",
			Params:   []function.Param{{Name: "refresh", Kind: function.Bool, Default: false}, root},
			ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				gs, err := Groups(in.String("root"))
				if err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				out := make([]any, len(gs))
				for i, g := range gs {
					out[i] = g.Info()
				}
				return out, nil
			},
		},
	}
}
