package mine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/brinehq/brine/target"
)

// Query answers mine.get: for each host tgt selects, what fun holds, in
// Salt's shape. One function gives {id: value}; several (a list, or a
// comma-separated string) give {fun: {id: value}}. An empty fun gives whole
// records. Hosts without a value for fun are left out, as in Salt.
func (s *Store) Query(ctx context.Context, tgt any, fun any, tgtType string) (map[string]any, error) {
	funs, nested, err := parseFuns(fun)
	if err != nil {
		return nil, err
	}
	hosts, err := s.Select(ctx, tgt, tgtType)
	if err != nil {
		return nil, err
	}
	if !nested {
		return values(hosts, funs[0]), nil
	}
	out := make(map[string]any, len(funs))
	for _, f := range funs {
		out[f] = values(hosts, f)
	}
	return out, nil
}

func values(hosts []*Host, fun string) map[string]any {
	out := make(map[string]any, len(hosts))
	for _, h := range hosts {
		if v, ok := h.Value(fun); ok {
			out[h.ID] = v
		}
	}
	return out
}

func parseFuns(fun any) (funs []string, nested bool, err error) {
	switch t := fun.(type) {
	case nil:
		return []string{""}, false, nil
	case string:
		if !strings.Contains(t, ",") {
			return []string{strings.TrimSpace(t)}, false, nil
		}
	}
	funs, err = Strings(fun)
	if err != nil {
		return nil, false, fmt.Errorf("fun: %w", err)
	}
	if len(funs) == 0 {
		return []string{""}, false, nil
	}
	return funs, true, nil
}

// Select returns the records tgt selects, sorted by id. A list target reads
// only the hosts it names.
func (s *Store) Select(ctx context.Context, tgt any, tgtType string) ([]*Host, error) {
	t, err := target.Parse(tgt, tgtType)
	if err != nil {
		return nil, err
	}
	if ids, only := t.Names(); only {
		// A list, or a glob without wildcards: read only those hosts.
		var out []*Host
		seen := map[string]bool{}
		for _, id := range ids {
			if ValidateID(id) != nil || seen[id] {
				continue // no record can have it, or read already
			}
			seen[id] = true
			h, err := s.Get(ctx, id)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
		slices.SortFunc(out, func(a, b *Host) int { return cmp.Compare(a.ID, b.ID) })
		return out, nil
	}
	all, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, h := range all {
		if t.Match(h.Facts()) {
			out = append(out, h)
		}
	}
	return out, nil
}
