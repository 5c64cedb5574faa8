// Package group is Salt's group state module: group.present (gid,
// system, members, addusers, delusers) and group.absent, with Salt's
// changes and comments.
//
// The group is read with the group.info execution function, as Salt's
// state does. brine's group module only reads, so the changes are made
// here with the shadow tools Salt's groupadd module runs: groupadd,
// groupmod, gpasswd and groupdel.
package group

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/service"
	"github.com/brinehq/brine/state"
)

// Module declares the group states for env's agent.
func Module(env *modules.Env) []function.Func {
	s := &states{env: env}
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	return []function.Func{
		{Name: "group.present",
			Doc: "Ensure a group exists with the gid and members given: members is the whole list, " +
				"addusers and delusers add to or take from the current one.",
			Params: []function.Param{name,
				{Name: "gid", Kind: function.Int},
				{Name: "system", Kind: function.Bool, Default: false},
				{Name: "addusers", Kind: function.List},
				{Name: "delusers", Kind: function.List},
				{Name: "members", Kind: function.Any},
				{Name: "non_unique", Kind: function.Bool, Default: false},
				{Name: "local", Kind: function.Bool, Default: false},
			},
			Run: s.present},
		{Name: "group.absent", Doc: "Ensure a group does not exist.",
			Params: []function.Param{name, {Name: "local", Kind: function.Bool, Default: false}},
			Run:    s.absent},
	}
}

type states struct{ env *modules.Env }

// info is group.info: nil when there is no such group.
func (s *states) info(ctx context.Context, name string) (map[string]any, error) {
	return s.env.Mapping(ctx, "group.info", name)
}

// strs reads a list of names.
func strs(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// change is one attribute group.present changes, in Salt's order.
type change struct {
	key   string
	value any
}

func (c change) String() string {
	switch v := c.value.(type) {
	case []string:
		return fmt.Sprintf("%s: %s", c.key, py.ReprList(v))
	case int64:
		return fmt.Sprintf("%s: %d", c.key, v)
	}
	return fmt.Sprintf("%s: %v", c.key, c.value)
}

// wanted is what present was asked for.
type wanted struct {
	gid                        int64
	hasGID                     bool
	members, addusers, deluser []string
	hasMembers                 bool
}

// changes is Salt's _changes: what differs between the group and w; nil
// and false when there is no such group.
func changes(cur map[string]any, w wanted) []change {
	var out []change
	members, _ := strs(cur["members"])
	if w.hasGID && fmt.Sprint(cur["gid"]) != fmt.Sprint(w.gid) {
		out = append(out, change{"gid", w.gid})
	}
	differ := func(a, b []string) bool {
		x, y := slices.Clone(a), slices.Clone(b)
		slices.Sort(x)
		slices.Sort(y)
		return !slices.Equal(slices.Compact(x), slices.Compact(y))
	}
	switch {
	case w.hasMembers && len(w.members) == 0 && len(members) > 0:
		out = append(out, change{"delusers", members})
	case len(w.members) > 0 && differ(members, w.members):
		out = append(out, change{"members", w.members})
	}
	var add, del []string
	for _, u := range w.addusers {
		if !slices.Contains(members, u) {
			add = append(add, u)
		}
	}
	for _, u := range w.deluser {
		if slices.Contains(members, u) {
			del = append(del, u)
		}
	}
	if len(add) > 0 {
		out = append(out, change{"addusers", add})
	}
	if len(del) > 0 {
		out = append(out, change{"delusers", del})
	}
	return out
}

func (s *states) present(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	w := wanted{gid: in.Int("gid"), hasGID: in.Has("gid")}
	var ok bool
	if m := in.Value("members"); m != nil {
		if w.members, ok = strs(m); !ok {
			return state.Failed(name, "members: want a list of user names"), nil
		}
		w.hasMembers = true
	}
	if w.addusers, ok = strs(in.Value("addusers")); !ok && in.Value("addusers") != nil {
		return state.Failed(name, "addusers: want a list of user names"), nil
	}
	if w.deluser, ok = strs(in.Value("delusers")); !ok && in.Value("delusers") != nil {
		return state.Failed(name, "delusers: want a list of user names"), nil
	}
	if w.hasMembers && (in.Value("addusers") != nil || in.Value("delusers") != nil) {
		return state.Result{Name: name, Comment: `Error: Conflicting options "members" with "addusers" and/or "delusers" can not be used together. `}, nil
	}
	for _, u := range w.addusers {
		if slices.Contains(w.deluser, u) {
			return state.Result{Name: name, Comment: "Error. Same user(s) can not be added and deleted simultaneously"}, nil
		}
	}

	cur, err := s.info(ctx, name)
	if err != nil {
		return nil, err
	}
	test := state.From(ctx).Test
	if cur == nil {
		if test {
			return state.Pending(name, fmt.Sprintf("Group %s set to be added", name), nil), nil
		}
		if w.hasGID {
			all, err := s.env.Functions.Call(ctx, "group.getent", nil, nil, nil)
			if err != nil {
				return nil, err
			}
			groups, _ := all.([]any)
			for _, g := range groups {
				if g, _ := g.(map[string]any); fmt.Sprint(g["gid"]) == fmt.Sprint(w.gid) {
					return state.Failed(name, "Group %s is not present but gid %d is already taken by group %v", name, w.gid, g["name"]), nil
				}
			}
		}
		argv := []string{"groupadd"}
		if w.hasGID {
			argv = append(argv, "-g", fmt.Sprint(w.gid))
		}
		if in.Bool("system") {
			argv = append(argv, "-r")
		}
		if in.Bool("non_unique") {
			argv = append(argv, "-o")
		}
		if err := service.Run(ctx, append(argv, "--", name)...); err != nil {
			r := state.Failed(name, "Failed to create new group %s", name)
			r.Warnings = []string{err.Error()}
			return r, nil
		}
		members := w.members
		if len(w.addusers) > 0 {
			members = w.addusers
		}
		if len(members) > 0 {
			if err := service.Run(ctx, "gpasswd", "-M", strings.Join(members, ","), name); err != nil {
				return state.Failed(name, "New group %s created, but its members were not set: %v", name, err), nil
			}
		}
		info, err := s.info(ctx, name)
		if err != nil {
			return nil, err
		}
		return state.Succeeded(name, fmt.Sprintf("New group %s created", name), info), nil
	}

	todo := changes(cur, w)
	if len(todo) == 0 {
		return state.Succeeded(name, fmt.Sprintf("Group %s is present and up to date", name), nil), nil
	}
	var comment strings.Builder
	comment.WriteString("The following group attributes are set to be changed:\n")
	for _, c := range todo {
		comment.WriteString(c.String() + "\n")
	}
	if test {
		// Salt's test mode lists the changes in the comment alone.
		return state.Pending(name, comment.String(), nil), nil
	}
	var failures []string
	for _, c := range todo {
		var err error
		switch c.key {
		case "gid":
			argv := []string{"groupmod", "-g", fmt.Sprint(w.gid)}
			if in.Bool("non_unique") {
				argv = append(argv, "-o")
			}
			err = service.Run(ctx, append(argv, "--", name)...)
		case "addusers":
			for _, u := range c.value.([]string) {
				if e := service.Run(ctx, "gpasswd", "-a", u, name); e != nil {
					err = e
				}
			}
		case "delusers":
			for _, u := range c.value.([]string) {
				if e := service.Run(ctx, "gpasswd", "-d", u, name); e != nil {
					err = e
				}
			}
		case "members":
			err = service.Run(ctx, "gpasswd", "-M", strings.Join(w.members, ","), name)
		}
		if err != nil {
			failures = append(failures, err.Error())
		}
	}
	after, err := s.info(ctx, name)
	if err != nil {
		return nil, err
	}
	ret := state.Result{Name: name, Result: state.Bool(true), Comment: comment.String()}
	if left := changes(after, w); len(left) > 0 {
		failed := map[string]any{}
		for _, c := range left {
			failed[c.key] = c.value
		}
		ret.Result = state.Bool(false)
		ret.Comment += "Some changes could not be applied"
		ret.Changes = map[string]any{"Failed": normalize(failed)}
		ret.Warnings = failures
		return ret, nil
	}
	ret.Changes = map[string]any{"Final": "All changes applied successfully"}
	return ret, nil
}

// normalize makes lists of names the []any of decoded data.
func normalize(m map[string]any) map[string]any {
	for k, v := range m {
		if l, ok := v.([]string); ok {
			a := make([]any, len(l))
			for i, s := range l {
				a[i] = s
			}
			m[k] = a
		}
	}
	return m
}

func (s *states) absent(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	cur, err := s.info(ctx, name)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return state.Succeeded(name, "Group not present", nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Group %s is set for removal", name), nil), nil
	}
	if err := service.Run(ctx, "groupdel", "--", name); err != nil {
		r := state.Failed(name, "Failed to remove group %s", name)
		r.Warnings = []string{err.Error()}
		return r, nil
	}
	return state.Succeeded(name, fmt.Sprintf("Removed group %s", name), map[string]any{name: ""}), nil
}
