package mine

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/brinehq/brine/bus"
)

// ErrTarget reports a target that cannot be used.
var ErrTarget = errors.New("bad target")

// Target selects hosts the way Salt's tgt/tgt_type select minions.
type Target struct {
	match func(*Host) bool
}

// Match reports whether the target selects h.
func (t *Target) Match(h *Host) bool { return t.match(h) }

// ParseTarget compiles a Salt target. tgtType is glob (the default: fnmatch
// on the id), list (a list or a comma-separated string of ids), pcre (a
// regular expression matched at the start of the id, as Python's re.match)
// or grain (`key:glob`, nested keys separated by ':').
func ParseTarget(tgt any, tgtType string) (*Target, error) {
	switch tgtType {
	case "", "glob":
		s, ok := tgt.(string)
		if !ok {
			return nil, fmt.Errorf("%w: a glob target is a string, got %T", ErrTarget, tgt)
		}
		g := bus.CompileGlob(s)
		return &Target{match: func(h *Host) bool { return g.Match(h.ID) }}, nil
	case "list":
		ids, err := Strings(tgt)
		if err != nil {
			return nil, fmt.Errorf("%w: list: %v", ErrTarget, err)
		}
		set := make(map[string]bool, len(ids))
		for _, id := range ids {
			set[id] = true
		}
		return &Target{match: func(h *Host) bool { return set[h.ID] }}, nil
	case "pcre":
		s, ok := tgt.(string)
		if !ok {
			return nil, fmt.Errorf("%w: a pcre target is a string, got %T", ErrTarget, tgt)
		}
		re, err := regexp.Compile(`^(?:` + s + `)`)
		if err != nil {
			return nil, fmt.Errorf("%w: pcre %q: %v", ErrTarget, s, err)
		}
		return &Target{match: func(h *Host) bool { return re.MatchString(h.ID) }}, nil
	case "grain":
		s, ok := tgt.(string)
		if !ok || !strings.Contains(s, ":") {
			return nil, fmt.Errorf("%w: a grain target is \"key:value\", got %v", ErrTarget, tgt)
		}
		return &Target{match: func(h *Host) bool { return grainMatch(h.Grains, s) }}, nil
	}
	return nil, fmt.Errorf("%w: tgt_type %q is not supported (glob, list, pcre or grain)", ErrTarget, tgtType)
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
