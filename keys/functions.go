package keys

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/function"
)

// Funcs are Salt's wheel key functions over the store, with its argument
// names and return shapes: what `wheel.key.*` reactions, `brine run key.*`
// and `brine key` call. The listings are read-only, so reaction templates
// may also call them (salt['key.list']('pre')). Salt's "local" list (the
// master's own keys) is part of key.finger's and key.print's answers only
// (WithLocal): the master's keys are not agent keys, and no change takes
// them.
func (s *Store) Funcs() []function.Func {
	match := function.Param{Name: "match", Kind: function.Any, Required: true}
	dict := function.Param{Name: "match", Kind: function.Map, Required: true}
	flag := func(name string) function.Param {
		return function.Param{Name: name, Kind: function.Bool, Default: false}
	}
	// fire is the call's own when it has one, so that a reaction's
	// salt/key events carry its cause (and loop protection follows them).
	fire := func(in *function.Input) fireFunc {
		return func(ctx context.Context, tag string, data map[string]any) error {
			err := in.Fire(ctx, tag, data)
			if errors.Is(err, function.ErrNoEvents) {
				return s.events.Fire(ctx, tag, data)
			}
			return err
		}
	}
	return []function.Func{
		{
			Name:     "key.list",
			Doc:      "List the keys in one state: match is pre, un or unaccepted, acc or accepted, rej or rejected, den or denied, or all.",
			Params:   []function.Param{{Name: "match", Kind: function.String, Required: true}},
			ReadOnly: true,
			Wheel:    true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				states, err := StatesNamed(in.String("match"))
				if err != nil {
					return nil, fmt.Errorf("key.list: %w", err)
				}
				return s.List(ctx, states...)
			},
		},
		{
			Name:     "key.list_all",
			Doc:      "List every key by state: {minions, minions_pre, minions_rejected, minions_denied}.",
			ReadOnly: true,
			Wheel:    true,
			Run: func(ctx context.Context, _ *function.Input) (any, error) {
				return s.List(ctx)
			},
		},
		{
			Name:     "key.name_match",
			Doc:      "List the keys match (globs, comma-separated) selects, by state.",
			Params:   []function.Param{match},
			ReadOnly: true,
			Wheel:    true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.nameMatch(ctx, in.Value("match"))
			},
		},
		{
			Name:   "key.accept",
			Doc:    "Accept the pending keys match selects (with include_rejected, include_denied: those too); fires salt/key.",
			Params: []function.Param{match, flag("include_rejected"), flag("include_denied")},
			Wheel:  true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.accept(ctx, fire(in), selection{match: in.Value("match")}, in.Bool("include_rejected"), in.Bool("include_denied"))
			},
		},
		{
			Name:   "key.accept_dict",
			Doc:    "Accept the keys listed by state, e.g. {minions_pre: [web1]}; fires salt/key.",
			Params: []function.Param{dict, flag("include_rejected"), flag("include_denied")},
			Wheel:  true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				d, err := listing(in.Map("match"))
				if err != nil {
					return nil, err
				}
				return s.accept(ctx, fire(in), selection{dict: d}, in.Bool("include_rejected"), in.Bool("include_denied"))
			},
		},
		{
			Name:   "key.reject",
			Doc:    "Reject the pending keys match selects (with include_accepted, include_denied: those too); fires salt/key.",
			Params: []function.Param{match, flag("include_accepted"), flag("include_denied")},
			Wheel:  true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.reject(ctx, fire(in), selection{match: in.Value("match")}, in.Bool("include_accepted"), in.Bool("include_denied"))
			},
		},
		{
			Name:   "key.reject_dict",
			Doc:    "Reject the keys listed by state; fires salt/key.",
			Params: []function.Param{dict, flag("include_accepted"), flag("include_denied")},
			Wheel:  true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				d, err := listing(in.Map("match"))
				if err != nil {
					return nil, err
				}
				return s.reject(ctx, fire(in), selection{dict: d}, in.Bool("include_accepted"), in.Bool("include_denied"))
			},
		},
		{
			Name:   "key.delete",
			Doc:    "Delete the keys match selects, in every state (denied keys included); fires salt/key.",
			Params: []function.Param{match},
			Wheel:  true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.delete(ctx, fire(in), selection{match: in.Value("match")})
			},
		},
		{
			Name:   "key.delete_dict",
			Doc:    "Delete the keys listed by state, e.g. {minions_denied: [web1]}; fires salt/key.",
			Params: []function.Param{dict},
			Wheel:  true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				d, err := listing(in.Map("match"))
				if err != nil {
					return nil, err
				}
				return s.delete(ctx, fire(in), selection{dict: d})
			},
		},
		{
			Name: "key.pending_older_than",
			Doc: "List the pending keys that have waited age or longer (a duration such as 24h, or seconds): " +
				"what brine key --delete-pending-older-than deletes. brine's; Salt has none.",
			Params:   []function.Param{{Name: "age", Kind: function.Any, Required: true}},
			ReadOnly: true,
			Wheel:    true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				age, err := ParseAge(in.Value("age"))
				if err != nil {
					return nil, fmt.Errorf("key.pending_older_than: %w", err)
				}
				return s.PendingOlderThan(ctx, age)
			},
		},
		{
			Name: "key.import",
			Doc: "Record the keys of a Salt master in their states: keys is {minions: {id: pem}, minions_pre: …, " +
				"minions_rejected: …, minions_denied: …}, as brine key --import-salt reads them from its pki_dir. " +
				"An id brine holds another key for keeps it; no salt/key is fired. brine's; Salt has none.",
			Params: []function.Param{{Name: "keys", Kind: function.Map, Required: true}},
			Wheel:  true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				pki, err := saltPKI(in.Map("keys"))
				if err != nil {
					return nil, fmt.Errorf("key.import: %w", err)
				}
				return s.Import(ctx, pki)
			},
		},
		{
			Name: "key.finger",
			Doc:  "Return the SHA-256 fingerprints of the keys match selects, by state and id, and of the master's own keys under local.",
			Params: []function.Param{{Name: "match", Kind: function.String, Required: true},
				{Name: "hash_type", Kind: function.String}},
			ReadOnly: true,
			Wheel:    true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if h := in.String("hash_type"); h != "" && h != "sha256" {
					return nil, fmt.Errorf("key.finger: hash_type %q: agent key fingerprints are sha256", h)
				}
				return s.Finger(ctx, in.String("match"))
			},
		},
		{
			Name:     "key.print",
			Doc:      "Return the public keys match selects (Z85 for brine agents, PEM for salt-minions), by state and id, and the master's own under local.",
			Params:   []function.Param{{Name: "match", Kind: function.String, Required: true}},
			ReadOnly: true,
			Wheel:    true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.Print(ctx, in.String("match"))
			},
		},
	}
}

// ParseAge reads an age as a duration (24h, 90m) or a number of seconds.
func ParseAge(v any) (time.Duration, error) {
	var d time.Duration
	switch t := v.(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(t); err != nil {
			n, nerr := strconv.ParseFloat(t, 64)
			if nerr != nil {
				return 0, fmt.Errorf("age %q: want a duration such as 24h or 90m, or seconds", t)
			}
			d = time.Duration(n * float64(time.Second))
		}
	case int64:
		d = time.Duration(t) * time.Second
	case int:
		d = time.Duration(t) * time.Second
	case float64:
		d = time.Duration(t * float64(time.Second))
	default:
		return 0, fmt.Errorf("age: want a duration such as 24h or 90m, or seconds, got %v", v)
	}
	if d < 0 {
		return 0, fmt.Errorf("age %v: must not be negative", v)
	}
	return d, nil
}

// StatesNamed are the states salt-key's -l and key.list name: pre, un or
// unaccepted (pending), acc or accepted, rej or rejected, den or denied,
// all. As Salt, any word starting so is taken (e.g. "acc…").
func StatesNamed(name string) ([]State, error) {
	switch {
	case strings.HasPrefix(name, "acc"):
		return []State{Accepted}, nil
	case strings.HasPrefix(name, "pre"), strings.HasPrefix(name, "un"):
		return []State{Pending}, nil
	case strings.HasPrefix(name, "rej"):
		return []State{Rejected}, nil
	case strings.HasPrefix(name, "den"):
		return []State{Denied}, nil
	case strings.HasPrefix(name, "all"):
		return States, nil
	}
	return nil, fmt.Errorf("no key state %q (want pre, un, unaccepted, acc, accepted, rej, rejected, den, denied or all)", name)
}

// listing reads a match_dict: list name to a list of ids (or one id).
func listing(m map[string]any) (Listing, error) {
	out := Listing{}
	for list, v := range m {
		if ListState(list) == "" {
			return nil, fmt.Errorf("match: no key list %q (want %s, %s, %s or %s)", list, ListAccepted, ListDenied, ListPending, ListRejected)
		}
		switch t := v.(type) {
		case string:
			out[list] = []string{t}
		case []any:
			for _, x := range t {
				id, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("match: %s: want ids, got %v", list, x)
				}
				out[list] = append(out[list], id)
			}
		case nil:
		default:
			return nil, fmt.Errorf("match: %s: want a list of ids, got %T", list, v)
		}
	}
	return out, nil
}
