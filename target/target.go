// Package target selects minions the way Salt's tgt and tgt_type do. The
// mine selects hosts with it, and remote jobs will select agents with it,
// so a target means the same thing everywhere brine takes one.
package target

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/brinehq/brine/bus"
)

// ErrTarget reports a target that cannot be used.
var ErrTarget = errors.New("bad target")

// Facts are what a target is matched against: what is known of one minion.
type Facts struct {
	ID     string
	Grains map[string]any
}

// Target is a compiled Salt target.
type Target struct {
	match func(Facts) bool
	// names, when not nil, are the only ids the target can select: a list
	// target, or a glob without wildcards.
	names []string
}

// Match reports whether the target selects the minion described by f.
func (t *Target) Match(f Facts) bool { return t.match(f) }

// Names returns the only ids the target can select (a list, or a glob
// without wildcards) and true, so that a caller can look them up instead
// of scanning every minion; false when any id may match.
func (t *Target) Names() ([]string, bool) { return t.names, t.names != nil }

// Parse compiles a Salt target. tgtType is glob (the default: fnmatch on
// the id), list (a list or a comma-separated string of ids), pcre (a regular
// expression matched at the start of the id, as Python's re.match) or grain
// (`key:glob`, nested keys separated by ':').
func Parse(tgt any, tgtType string) (*Target, error) {
	switch tgtType {
	case "", "glob":
		s, ok := tgt.(string)
		if !ok {
			return nil, fmt.Errorf("%w: a glob target is a string, got %T", ErrTarget, tgt)
		}
		g := bus.CompileGlob(s)
		t := &Target{match: func(f Facts) bool { return g.Match(f.ID) }}
		if !strings.ContainsAny(s, "*?[") {
			t.names = []string{s}
		}
		return t, nil
	case "list":
		ids, err := list(tgt)
		if err != nil {
			return nil, fmt.Errorf("%w: list: %v", ErrTarget, err)
		}
		set := make(map[string]bool, len(ids))
		for _, id := range ids {
			set[id] = true
		}
		return &Target{match: func(f Facts) bool { return set[f.ID] }, names: ids}, nil
	case "pcre":
		s, ok := tgt.(string)
		if !ok {
			return nil, fmt.Errorf("%w: a pcre target is a string, got %T", ErrTarget, tgt)
		}
		re, err := regexp.Compile(`^(?:` + s + `)`)
		if err != nil {
			return nil, fmt.Errorf("%w: pcre %q: %v", ErrTarget, s, err)
		}
		return &Target{match: func(f Facts) bool { return re.MatchString(f.ID) }}, nil
	case "grain":
		s, ok := tgt.(string)
		if !ok || !strings.Contains(s, ":") {
			return nil, fmt.Errorf("%w: a grain target is \"key:value\", got %v", ErrTarget, tgt)
		}
		return &Target{match: func(f Facts) bool { return grainMatch(f.Grains, s) }}, nil
	}
	return nil, fmt.Errorf("%w: tgt_type %q is not supported (glob, list, pcre or grain)", ErrTarget, tgtType)
}

// list reads a list target: a list of strings, or one string of
// comma-separated ids.
func list(tgt any) ([]string, error) {
	var out []string
	switch t := tgt.(type) {
	case nil:
	case string:
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, t...)
	case []any:
		for i, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("item %d: want a string, got %T", i, x)
			}
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("want a list or a comma-separated string of ids, got %T", tgt)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// grainMatch follows nested keys while the value is a mapping; the rest of
// expr is a glob on the value (any item of a list value).
func grainMatch(grains map[string]any, expr string) bool {
	var cur any = grains
	rest := expr
	for {
		m, ok := cur.(map[string]any)
		key, after, found := strings.Cut(rest, ":")
		if !ok || !found {
			break
		}
		if v, ok := m[key]; ok {
			cur, rest = v, after
			continue
		}
		return false
	}
	g := bus.CompileGlob(rest)
	switch v := cur.(type) {
	case map[string]any:
		_, ok := v[rest]
		return ok
	case []any:
		for _, x := range v {
			if g.Match(fmt.Sprint(x)) {
				return true
			}
		}
		return false
	case nil:
		return false
	}
	return g.Match(fmt.Sprint(cur))
}
