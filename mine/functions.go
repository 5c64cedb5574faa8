package mine

import (
	"context"
	"errors"

	"github.com/brinehq/brine/function"
)

// Funcs are the mine's runner functions: mine.get (read-only, so reaction
// templates may call salt['mine.get'](...)), mine.update, mine.send and
// mine.delete.
func (s *Store) Funcs() []function.Func {
	str := func(name string) function.Param { return function.Param{Name: name, Kind: function.String} }
	return []function.Func{
		{
			Name: "mine.get",
			Doc: "Return {id: value} of mine function fun for the hosts tgt selects (tgt_type glob, list, pcre, grain); " +
				"exclude_minion is accepted for Salt's reaction files and has no effect (no minion calls the runner).",
			Params: []function.Param{
				{Name: "tgt", Kind: function.Any, Required: true},
				{Name: "fun", Kind: function.Any},
				{Name: "tgt_type", Kind: function.String, Default: "glob", Aliases: []string{"expr_form"}},
				{Name: "exclude_minion", Kind: function.Bool, Default: false},
			},
			ReadOnly: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.Query(ctx, in.Value("tgt"), in.Value("fun"), in.String("tgt_type"))
			},
		},
		{
			Name: "mine.update",
			Doc:  "Add or update a host: fields are replaced (ips, macs, fqdn…) or merged (grains, data); clear=True replaces the record.",
			Params: []function.Param{
				{Name: "id", Kind: function.String, Required: true},
				str("fqdn"),
				{Name: "ips", Kind: function.Any},
				{Name: "macs", Kind: function.Any},
				{Name: "grains", Kind: function.Map},
				str("provider"), str("driver"), str("instance_id"),
				{Name: "data", Kind: function.Map},
				{Name: "clear", Kind: function.Bool, Default: false},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				fields := map[string]any{}
				for _, k := range UpdateFields {
					if in.Has(k) {
						fields[k] = in.Value(k)
					}
				}
				id, clear := in.String("id"), in.Bool("clear")
				return s.Update(ctx, Write{ID: id, Source: in.Func, Mutate: func(h *Host) error {
					if clear {
						*h = Host{ID: id, Revision: h.Revision}
					}
					return ApplyFields(h, fields)
				}})
			},
		},
		{
			Name: "mine.send",
			Doc:  "Store value as mine function fun of host id (network.ip_addrs, network.hw_addr, grains.items map to fields).",
			Params: []function.Param{
				{Name: "id", Kind: function.String, Required: true},
				{Name: "fun", Kind: function.String, Required: true},
				{Name: "value", Kind: function.Any, Required: true},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				fun, value := in.String("fun"), in.Value("value")
				if _, err := s.Update(ctx, Write{ID: in.String("id"), Source: in.Func, Mutate: func(h *Host) error {
					return h.Set(fun, value)
				}}); err != nil {
					return nil, err
				}
				return true, nil
			},
		},
		{
			Name: "mine.delete",
			Doc:  "Remove host id from the mine, or only what mine function fun holds for it; returns whether there was something.",
			Params: []function.Param{
				{Name: "id", Kind: function.String, Required: true},
				str("fun"),
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				id, fun := in.String("id"), in.String("fun")
				if fun == "" {
					return s.Delete(ctx, id)
				}
				_, err := s.Update(ctx, Write{ID: id, Source: in.Func, Mutate: func(h *Host) error {
					if h.Revision == 0 {
						return ErrNotFound // not in the mine: nothing to create
					}
					return h.Unset(fun)
				}})
				if errors.Is(err, ErrNotFound) {
					return false, nil
				}
				return err == nil, err
			},
		},
	}
}
