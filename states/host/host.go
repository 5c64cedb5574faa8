// Package host is Salt's host state module: host.present, host.absent
// and host.only, names of addresses in the hosts file (/etc/hosts, or the
// agent option hosts.file as in Salt), with Salt's changes and comments.
// The file is read and written by the hosts execution module, as Salt's
// states do.
package host

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/hosts"
	"github.com/brinehq/brine/state"
)

// Module declares the host states.
func Module(env *modules.Env) []function.Func {
	s := &states{env: env}
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	return []function.Func{
		{Name: "host.present", Doc: "Ensure the host name is a name of each address ip (a string or a list) in the hosts file.",
			Params: []function.Param{name, {Name: "ip", Kind: function.Any, Required: true},
				{Name: "comment", Kind: function.Any, Default: ""}, {Name: "clean", Kind: function.Bool, Default: false}},
			Run: s.run(s.present)},
		{Name: "host.absent", Doc: "Ensure the host name is not a name of the address ip (a string or a list).",
			Params: []function.Param{name, {Name: "ip", Kind: function.Any, Required: true}},
			Run:    s.run(s.absent)},
		{Name: "host.only", Doc: "Ensure the address name has exactly the names hostnames (a string or a list).",
			Params: []function.Param{name, {Name: "hostnames", Kind: function.Any, Required: true}},
			Run:    s.run(s.only)},
	}
}

type states struct{ env *modules.Env }

func (s *states) run(fn func(context.Context, *function.Input, *hosts.File) state.Result) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		return fn(ctx, in, &hosts.File{Path: hosts.Path(s.env)}), nil
	}
}

func strs(v any) []string {
	switch t := v.(type) {
	case []any:
		return py.Strs(t)
	case nil:
		return nil
	}
	return []string{py.Str(v)}
}

type pair struct{ addr, name string }

// ordered is a set that keeps the order things were added in (Salt's
// sets iterate in an order of their own; one address is the usual case).
type ordered []pair

func (o *ordered) add(p pair) {
	for _, x := range *o {
		if x == p {
			return
		}
	}
	*o = append(*o, p)
}

func nested(changes map[string]any, key, addr, v string) {
	m, _ := changes[key].(map[string]any)
	if m == nil {
		m = map[string]any{}
		changes[key] = m
	}
	l, _ := m[addr].([]any)
	m[addr] = append(l, v)
}

func (s *states) present(ctx context.Context, in *function.Input, h *hosts.File) state.Result {
	name := in.String("name")
	test := state.From(ctx).Test
	ips := strs(in.Value("ip"))
	comment := py.Str(in.Value("comment"))
	if !py.Truth(in.Value("comment")) {
		comment = ""
	}
	all, err := h.List()
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	ok := true
	var comments, warnings []string
	var toAdd, toRemove, updateComment ordered
	inList := func(addr string) bool {
		for _, ip := range ips {
			if ip == addr {
				return true
			}
		}
		return false
	}
	for _, ip := range ips {
		if all.Find(ip) == nil {
			toAdd.add(pair{ip, name})
			if comment != "" {
				updateComment.add(pair{ip, comment})
			}
		}
	}
	for _, e := range all.Entries {
		if e.IsComment() {
			continue
		}
		has := e.HasAlias(name)
		switch {
		case !inList(e.Key) && has && in.Bool("clean"):
			toRemove.add(pair{e.Key, name})
		case !inList(e.Key) && has:
			warnings = append(warnings, fmt.Sprintf("Host %[1]s present for IP address %[2]s. To get rid of this warning, "+
				"either run this state with 'clean' set to True to remove %[1]s from %[2]s, or add %[2]s to the 'ip' argument.",
				name, e.Key))
		case !inList(e.Key):
		case has && comment != "" && e.Comment != nil && *e.Comment != comment:
			updateComment.add(pair{e.Key, comment})
		case has && comment != "" && e.Comment == nil:
			updateComment.add(pair{e.Key, comment})
		case has:
			comments = append(comments, fmt.Sprintf("Host %s (%s) already present", name, e.Key))
		case net.ParseIP(e.Key) != nil:
			toAdd.add(pair{e.Key, name})
			if comment != "" {
				updateComment.add(pair{e.Key, comment})
			}
		default:
			ok = false
			comments = append(comments, fmt.Sprintf("Invalid IP Address for %s (%s)", name, e.Key))
		}
	}
	changes := map[string]any{}
	pending := false
	for _, p := range toAdd {
		if test {
			pending = true
			comments = append(comments, fmt.Sprintf("Host %s (%s) would be added", p.name, p.addr))
		} else if err := h.AddHost(p.addr, p.name); err != nil {
			ok = false
			comments = append(comments, fmt.Sprintf("Failed to add host %s (%s): %v", p.name, p.addr, err))
			continue
		} else {
			comments = append(comments, fmt.Sprintf("Added host %s (%s)", p.name, p.addr))
		}
		nested(changes, "added", p.addr, p.name)
	}
	for _, p := range updateComment {
		if test {
			comments = append(comments, fmt.Sprintf("Comment for %s (%s) would be added", p.addr, p.name))
		} else if done, err := h.SetComment(p.addr, p.name); err != nil || !done {
			ok = false
			comments = append(comments, fmt.Sprintf("Failed to add comment for host %s (%s)", p.addr, p.name))
			continue
		} else {
			comments = append(comments, fmt.Sprintf("Set comment for host %s (%s)", p.addr, p.name))
		}
		nested(changes, "comment_added", p.addr, p.name)
	}
	for _, p := range toRemove {
		if test {
			pending = true
			comments = append(comments, fmt.Sprintf("Host %s (%s) would be removed", p.name, p.addr))
		} else if err := h.RmHost(p.addr, p.name); err != nil {
			ok = false
			comments = append(comments, fmt.Sprintf("Failed to remove host %s (%s): %v", p.name, p.addr, err))
			continue
		} else {
			comments = append(comments, fmt.Sprintf("Removed host %s (%s)", p.name, p.addr))
		}
		nested(changes, "removed", p.addr, p.name)
	}
	r := state.Result{Name: name, Comment: strings.Join(comments, "\n"), Warnings: warnings}
	if len(changes) > 0 {
		r.Changes = changes
	}
	if ok && !pending {
		r.Result = &ok
	} else if !ok {
		r.Result = &ok
	}
	return r
}

func (s *states) absent(ctx context.Context, in *function.Input, h *hosts.File) state.Result {
	name := in.String("name")
	test := state.From(ctx).Test
	r := state.Result{Name: name}
	var result *bool
	set := func(b bool) { result = &b }
	var comments []string
	for _, ip := range strs(in.Value("ip")) {
		all, err := h.List()
		if err != nil {
			return state.Failed(name, "%v", err)
		}
		e := all.Find(ip)
		switch {
		case e == nil || !e.HasAlias(name):
			set(true)
			comments = append(comments, fmt.Sprintf("Host %s (%s) already absent", name, ip))
		case test:
			comments = append(comments, fmt.Sprintf("Host %s (%s) needs to be removed", name, ip))
		default:
			if err := h.RmHost(ip, name); err != nil {
				set(false)
				comments = append(comments, "Failed to remove host")
				continue
			}
			r.Changes = map[string]any{"host": name}
			set(true)
			comments = append(comments, fmt.Sprintf("Removed host %s (%s)", name, ip))
		}
	}
	r.Result = result
	r.Comment = strings.Join(comments, "\n")
	return r
}

func (s *states) only(ctx context.Context, in *function.Input, h *hosts.File) state.Result {
	name := in.String("name")
	all, err := h.List()
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	var oldNames []string
	if e := all.Find(name); e != nil {
		oldNames = e.Aliases
	}
	old := strings.Join(oldNames, " ")
	var want []string
	for _, n := range strs(in.Value("hostnames")) {
		want = append(want, strings.TrimSpace(n))
	}
	newNames := strings.Join(want, " ")
	if old == newNames {
		return state.Succeeded(name, fmt.Sprintf("IP address %s already set to \"%s\"", name, newNames), nil)
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Would change %s from \"%s\" to \"%s\"", name, old, newNames), nil)
	}
	if err := h.SetHost(name, newNames, ""); err != nil {
		return state.Failed(name, "hosts.set_host failed to change %s from \"%s\" to \"%s\": %v", name, old, newNames, err)
	}
	return state.Succeeded(name, fmt.Sprintf("successfully changed %s from \"%s\" to \"%s\"", name, old, newNames),
		map[string]any{name: map[string]any{"old": old, "new": newNames}})
}
