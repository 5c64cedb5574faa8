// Package target selects minions the way Salt's tgt and tgt_type do. The
// mine selects hosts with it, and remote jobs select agents with it, so a
// target means the same thing everywhere brine takes one.
//
// Every tgt_type of Salt's CkMinions is here except range: glob, pcre,
// list, grain, grain_pcre, pillar, pillar_pcre, pillar_exact, ipcidr,
// nodegroup and compound (with compound_pillar_exact, Salt's compound whose
// pillar parts match exactly). Grain and pillar values match as Salt's
// subdict_match: case-insensitively, nested keys separated by the
// delimiter, the deepest key tried first.
package target

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/brinehq/brine/internal/fnmatch"
)

// ErrTarget reports a target that cannot be used.
var ErrTarget = errors.New("bad target")

// ErrNoPillar reports a pillar target (pillar, pillar_pcre, pillar_exact,
// I@ or J@) given where no pillar data is known (Options.Pillar false). It
// is always wrapped together with ErrTarget.
var ErrNoPillar = errors.New("pillar targeting needs pillar data, which this master does not have yet")

// Facts are what a target is matched against: what is known of one minion.
type Facts struct {
	ID     string
	Grains map[string]any
	// Pillar is the minion's pillar, nil when unknown: a pillar target
	// then selects nothing.
	Pillar map[string]any
}

// Options are what a target may need beyond the minion's own facts.
type Options struct {
	// Nodegroups are the master's nodegroups (its nodegroups option): a
	// name maps to a compound string or to a list of words (ids, or a
	// compound split in words), as Salt's.
	Nodegroups map[string]any
	// Pillar says that Facts.Pillar is filled in, so pillar targets may be
	// used; without it they are an ErrNoPillar error.
	Pillar bool
	// Delimiter separates nested keys in grain and pillar targets (Salt's
	// delimiter argument); "" means ":". A compound's parts have their own
	// (G|@key|value).
	Delimiter string
}

// Target is a compiled Salt target. It is safe for concurrent use.
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

// TypeNames are the tgt_type values Parse accepts ("" is glob).
var TypeNames = []string{
	"glob", "pcre", "list", "grain", "grain_pcre", "pillar", "pillar_pcre",
	"pillar_exact", "ipcidr", "nodegroup", "compound", "compound_pillar_exact",
}

// Parse compiles a Salt target without nodegroups or pillar data:
// ParseWith(tgt, tgtType, Options{}).
func Parse(tgt any, tgtType string) (*Target, error) {
	return ParseWith(tgt, tgtType, Options{})
}

// ParseWith compiles a Salt target. tgtType is one of TypeNames:
//
//   - glob (the default): fnmatch on the id;
//   - pcre: a regular expression matched at the start of the id (re.match);
//   - list: a list, or a comma-separated string, of ids;
//   - grain, pillar: "key:glob", nested keys separated by the delimiter;
//   - grain_pcre, pillar_pcre: "key:regex" (re.match on the value);
//   - pillar_exact: "key:value", compared whole;
//   - ipcidr: an address or a network, against the ipv4 and ipv6 grains;
//   - nodegroup: the name of one of o.Nodegroups;
//   - compound: Salt's compound syntax: words G@ (grain), P@ (grain_pcre),
//     I@ (pillar), J@ (pillar_pcre), L@ (list), E@ (pcre), S@ (ipcidr),
//     N@ (nodegroup), bare words (glob), joined by and, or, not and
//     parentheses with Python's precedence; a string or a list of words;
//   - compound_pillar_exact: compound whose I@ and J@ are pillar_exact.
//
// Grain and pillar values compare case-insensitively, as Salt's.
func ParseWith(tgt any, tgtType string, o Options) (*Target, error) {
	c := &compiler{opts: o}
	m, names, err := c.top(tgt, tgtType)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTarget, err)
	}
	return &Target{match: m, names: names}, nil
}

// matcher decides one minion.
type matcher func(Facts) bool

// compiler holds what compiling one target needs: the options, and the
// guards that keep a nodegroup cycle or an enormous expansion from running
// away.
type compiler struct {
	opts Options
	// expanding are the nodegroups being expanded, outermost first.
	expanding []string
	// words counts every word compiled, nodegroup expansions included.
	words int
	depth int
}

// top compiles tgt of type tgtType; names as for Target.names.
func (c *compiler) top(tgt any, tgtType string) (matcher, []string, error) {
	delim := c.opts.Delimiter
	if delim == "" {
		delim = DefaultDelimiter
	}
	switch tgtType {
	case "", "glob":
		s, ok := tgt.(string)
		if !ok {
			return nil, nil, fmt.Errorf("a glob target is a string, got %T", tgt)
		}
		var names []string
		if !strings.ContainsAny(s, "*?[") {
			names = []string{s}
		}
		return globID(s), names, nil
	case "list":
		ids, err := list(tgt)
		if err != nil {
			return nil, nil, fmt.Errorf("list: %w", err)
		}
		return listID(ids), ids, nil
	case "pcre":
		s, ok := tgt.(string)
		if !ok {
			return nil, nil, fmt.Errorf("a pcre target is a string, got %T", tgt)
		}
		m, err := pcreID(s)
		return m, nil, err
	case "grain", "grain_pcre", "pillar", "pillar_pcre", "pillar_exact":
		s, ok := tgt.(string)
		if !ok {
			return nil, nil, fmt.Errorf("a %s target is \"key%svalue\", got %T", tgtType, delim, tgt)
		}
		mode := valueGlob
		switch tgtType {
		case "grain_pcre", "pillar_pcre":
			mode = valueRegex
		case "pillar_exact":
			mode = valueExact
		}
		m, err := c.data(tgtType, strings.HasPrefix(tgtType, "pillar"), s, delim, mode)
		return m, nil, err
	case "ipcidr":
		s, ok := tgt.(string)
		if !ok {
			return nil, nil, fmt.Errorf("an ipcidr target is an address or a network, got %T", tgt)
		}
		m, err := ipcidr(s)
		return m, nil, err
	case "nodegroup":
		s, ok := tgt.(string)
		if !ok {
			return nil, nil, fmt.Errorf("a nodegroup target is a nodegroup's name, got %T", tgt)
		}
		m, err := c.nodegroup(s)
		return m, nil, err
	case "compound", "compound_pillar_exact":
		words, err := compoundWords(tgt)
		if err != nil {
			return nil, nil, err
		}
		m, err := c.compound(words, tgtType == "compound_pillar_exact")
		if err != nil {
			return nil, nil, fmt.Errorf("compound target %s: %w", quoteWords(tgt), err)
		}
		return m, nil, nil
	}
	return nil, nil, fmt.Errorf("tgt_type %q is not supported (%s)", tgtType, strings.Join(TypeNames, ", "))
}

// globID matches the id with fnmatch, as Salt's glob matcher.
func globID(pattern string) matcher {
	g := fnmatch.Compile(pattern)
	return func(f Facts) bool { return g.Match(f.ID) }
}

// listID matches the ids given.
func listID(ids []string) matcher {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return func(f Facts) bool { return set[f.ID] }
}

// pcreID matches the id with a regular expression anchored at its start,
// as Python's re.match.
func pcreID(pattern string) (matcher, error) {
	re, err := regexp.Compile(`^(?:` + pattern + `)`)
	if err != nil {
		return nil, fmt.Errorf("pcre %q: %w", pattern, err)
	}
	return func(f Facts) bool { return re.MatchString(f.ID) }, nil
}

// data compiles a grain or pillar target (what names it in errors).
func (c *compiler) data(what string, pillar bool, expr, delim string, mode valueMode) (matcher, error) {
	if pillar && !c.opts.Pillar {
		return nil, ErrNoPillar
	}
	if !strings.Contains(expr, delim) {
		return nil, fmt.Errorf("a %s target is \"key%svalue\", got %q", what, delim, expr)
	}
	sm, err := compileSubdict(expr, delim, mode)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", what, expr, err)
	}
	if pillar {
		return func(f Facts) bool { return f.Pillar != nil && sm.match(f.Pillar) }, nil
	}
	return func(f Facts) bool { return f.Grains != nil && sm.match(f.Grains) }, nil
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
