package hosts

import (
	"context"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
)

// Path is the hosts file of an agent: its hosts.file option, else
// /etc/hosts.
func Path(env *modules.Env) string {
	if env != nil && env.Opts != nil {
		if p, ok := env.Opts()["hosts.file"].(string); ok && p != "" {
			return p
		}
	}
	return "/etc/hosts"
}

// Module declares the hosts functions.
func Module(env *modules.Env) []function.Func {
	file := func() *File { return &File{Path: Path(env)} }
	ip := function.Param{Name: "ip", Kind: function.String, Required: true}
	alias := function.Param{Name: "alias", Kind: function.Any, Required: true}
	return []function.Func{
		{Name: "hosts.list_hosts", ReadOnly: true, Doc: "The hosts file: each address's aliases (and comment), and its comment lines.",
			Run: func(context.Context, *function.Input) (any, error) {
				h, err := file().List()
				if err != nil {
					return nil, err
				}
				out := map[string]any{}
				for _, e := range h.Entries {
					if e.IsComment() {
						out[e.Key] = []any{e.Line}
						continue
					}
					info := map[string]any{"aliases": py.List(e.Aliases)}
					if e.Comment != nil {
						info["comment"] = *e.Comment
					}
					out[e.Key] = info
				}
				return out, nil
			}},
		{Name: "hosts.get_ip", ReadOnly: true, Doc: "The first address host is an alias of, \"\" when none.",
			Params: []function.Param{{Name: "host", Kind: function.String, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				h, err := file().List()
				if err != nil {
					return nil, err
				}
				for _, e := range h.Entries {
					if !e.IsComment() && e.HasAlias(in.String("host")) {
						return e.Key, nil
					}
				}
				return "", nil
			}},
		{Name: "hosts.get_alias", ReadOnly: true, Doc: "The aliases of the address ip ([] when it is not in the file).",
			Params: []function.Param{ip},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				h, err := file().List()
				if err != nil {
					return nil, err
				}
				if e := h.Find(in.String("ip")); e != nil && !e.IsComment() {
					return py.List(e.Aliases), nil
				}
				return []any{}, nil
			}},
		{Name: "hosts.has_pair", ReadOnly: true, Doc: "Whether alias (or every alias of a list) is an alias of ip.",
			Params: []function.Param{ip, alias},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				h, err := file().List()
				if err != nil {
					return nil, err
				}
				e := h.Find(in.String("ip"))
				if e == nil || e.IsComment() {
					return false, nil
				}
				names, ok := in.Value("alias").([]any)
				if !ok {
					names = []any{in.Value("alias")}
				}
				for _, n := range names {
					if !e.HasAlias(py.Str(n)) {
						return false, nil
					}
				}
				return true, nil
			}},
		{Name: "hosts.set_host", Doc: "Make alias (names separated by spaces; blank removes the address) the only line of ip.",
			Params: []function.Param{ip, {Name: "alias", Kind: function.String, Required: true}, {Name: "comment", Kind: function.Any}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				comment := ""
				if c := in.Value("comment"); py.Truth(c) {
					comment = py.Str(c)
				}
				return true, file().SetHost(in.String("ip"), in.String("alias"), comment)
			}},
		{Name: "hosts.rm_host", Doc: "Take alias off the address ip (its line goes when it has no alias left).",
			Params: []function.Param{ip, {Name: "alias", Kind: function.String, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return true, file().RmHost(in.String("ip"), in.String("alias"))
			}},
		{Name: "hosts.add_host", Doc: "Add alias to the address ip (a new address at the end); the file is rewritten in Salt's layout.",
			Params: []function.Param{ip, {Name: "alias", Kind: function.String, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return true, file().AddHost(in.String("ip"), in.String("alias"))
			}},
		{Name: "hosts.set_comment", Doc: "Set the comment of the address ip; False when it is not in the file.",
			Params: []function.Param{ip, {Name: "comment", Kind: function.String, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return file().SetComment(in.String("ip"), in.String("comment"))
			}},
	}
}
