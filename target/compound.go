package target

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what one target may expand to: nodegroups that include each
// other several times grow exponentially, and a master takes targets from
// API clients.
const (
	maxWords = 10000 // targets compiled, nodegroups expanded
	maxDepth = 200   // nested parentheses, nots and nodegroups (Python's parser stops at 200 too)
)

// word is one word of a compound target, with its position: the
// character (not byte) it starts at, counting from 1.
type word struct {
	text string
	pos  int
}

// compoundWords splits a compound target into words: a string is split at
// whitespace, as Python's str.split(); a list is taken as its words, as
// Salt does. Parentheses attached to a word are words of their own.
func compoundWords(tgt any) ([]word, error) {
	switch t := tgt.(type) {
	case string:
		return splitWords(t), nil
	case []string:
		return listWords(t), nil
	case []any:
		ss := make([]string, len(t))
		for i, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("compound target: word %d: want a string, got %T", i, x)
			}
			ss[i] = s
		}
		return listWords(ss), nil
	}
	return nil, fmt.Errorf("a compound target is a string or a list of words, got %T", tgt)
}

// quoteWords quotes a compound target for an error message.
func quoteWords(tgt any) string {
	switch t := tgt.(type) {
	case []string:
		return fmt.Sprintf("%q", strings.Join(t, " "))
	case []any:
		ss := make([]string, len(t))
		for i, x := range t {
			ss[i] = matchStr(x)
		}
		return fmt.Sprintf("%q", strings.Join(ss, " "))
	}
	return fmt.Sprintf("%q", tgt)
}

// isSpace is Python's str.isspace for one character, which str.split()
// splits at: Go's unicode.IsSpace and the ASCII separators \x1c-\x1f.
func isSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// splitWords splits s at whitespace.
func splitWords(s string) []word {
	var out []word
	pos, start, startPos := 0, -1, 0
	for i, r := range s {
		pos++
		if isSpace(r) {
			if start >= 0 {
				out = append(out, peelParens(word{s[start:i], startPos})...)
				start = -1
			}
			continue
		}
		if start < 0 {
			start, startPos = i, pos
		}
	}
	if start >= 0 {
		out = append(out, peelParens(word{s[start:], startPos})...)
	}
	return out
}

// listWords are the words of a list target, placed as if joined by spaces.
func listWords(ss []string) []word {
	var out []word
	pos := 1
	for _, s := range ss {
		out = append(out, peelParens(word{s, pos})...)
		pos += utf8.RuneCountInString(s) + 1
	}
	return out
}

// peelParens splits the parentheses Salt wants as words of their own off
// w: "(G@os:Debian" and "web*)". Leading ones always (no target starts with
// one); trailing ones only while the word has more unescaped ')' than '(',
// so that a regular expression's own groups stay: "(E@web(1|2))".
func peelParens(w word) []word {
	var out []word
	for len(w.text) > 1 && w.text[0] == '(' {
		out = append(out, word{"(", w.pos})
		w = word{w.text[1:], w.pos + 1}
	}
	opens, closes := countParens(w.text)
	var tail []word
	for len(w.text) > 1 && w.text[len(w.text)-1] == ')' && closes > opens {
		w.text = w.text[:len(w.text)-1]
		closes--
		tail = append(tail, word{")", w.pos + utf8.RuneCountInString(w.text)})
	}
	out = append(out, w)
	slices.Reverse(tail)
	return append(out, tail...)
}

// countParens counts the parentheses of s not escaped by a backslash.
func countParens(s string) (opens, closes int) {
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case r == '(':
			opens++
		case r == ')':
			closes++
		}
	}
	return opens, closes
}

// endPos is the position just after the last word.
func endPos(words []word) int {
	if len(words) == 0 {
		return 1
	}
	last := words[len(words)-1]
	return last.pos + utf8.RuneCountInString(last.text)
}

// compound compiles the words of a compound target. Its grammar is
// Python's boolean expressions over targets, which Salt evaluates them
// as: not binds tighter than and, and tighter than or; "a not b" means
// "a and not b", as Salt inserts the and.
func (c *compiler) compound(words []word, pillarExact bool) (matcher, error) {
	if len(words) == 0 {
		return nil, errors.New("empty")
	}
	p := &parser{c: c, words: words, pillarExact: pillarExact}
	m, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i < len(words) {
		w := words[p.i]
		return nil, fmt.Errorf("position %d: unexpected %q", w.pos, w.text)
	}
	return m, nil
}

// parser is a recursive-descent parser of one compound target.
type parser struct {
	c           *compiler
	words       []word
	i           int
	pillarExact bool
}

// peek returns the next word's text, "" at the end.
func (p *parser) peek() string {
	if p.i < len(p.words) {
		return p.words[p.i].text
	}
	return ""
}

func (p *parser) or() (matcher, error) {
	m, err := p.and()
	if err != nil {
		return nil, err
	}
	terms := []matcher{m}
	for p.peek() == "or" {
		p.i++
		m, err := p.and()
		if err != nil {
			return nil, err
		}
		terms = append(terms, m)
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return func(f Facts) bool {
		for _, t := range terms {
			if t(f) {
				return true
			}
		}
		return false
	}, nil
}

func (p *parser) and() (matcher, error) {
	m, err := p.not()
	if err != nil {
		return nil, err
	}
	terms := []matcher{m}
	for {
		switch p.peek() {
		case "and":
			p.i++
		case "not":
		default:
			if len(terms) == 1 {
				return terms[0], nil
			}
			return func(f Facts) bool {
				for _, t := range terms {
					if !t(f) {
						return false
					}
				}
				return true
			}, nil
		}
		m, err := p.not()
		if err != nil {
			return nil, err
		}
		terms = append(terms, m)
	}
}

func (p *parser) not() (matcher, error) {
	if p.peek() != "not" {
		return p.atom()
	}
	w := p.words[p.i]
	p.i++
	if err := p.c.enter(w.pos); err != nil {
		return nil, err
	}
	defer p.c.leave()
	m, err := p.not()
	if err != nil {
		return nil, err
	}
	return func(f Facts) bool { return !m(f) }, nil
}

func (p *parser) atom() (matcher, error) {
	if p.i >= len(p.words) {
		prev := p.words[len(p.words)-1]
		return nil, fmt.Errorf("position %d: a target is missing after %q", endPos(p.words), prev.text)
	}
	w := p.words[p.i]
	switch w.text {
	case "and", "or", ")":
		return nil, fmt.Errorf("position %d: unexpected %q", w.pos, w.text)
	case "(":
		p.i++
		if err := p.c.enter(w.pos); err != nil {
			return nil, err
		}
		defer p.c.leave()
		m, err := p.or()
		if err != nil {
			return nil, err
		}
		switch {
		case p.i >= len(p.words):
			return nil, fmt.Errorf("position %d: \"(\" is not closed", w.pos)
		case p.words[p.i].text != ")":
			return nil, fmt.Errorf("position %d: unexpected %q", p.words[p.i].pos, p.words[p.i].text)
		}
		p.i++
		return m, nil
	}
	p.i++
	m, err := p.c.operand(w.text, p.pillarExact)
	if err != nil {
		return nil, fmt.Errorf("position %d: %w", w.pos, err)
	}
	return m, nil
}

// enter counts one level of nesting at pos, refusing too many.
func (c *compiler) enter(pos int) error {
	c.depth++
	if c.depth > maxDepth {
		return fmt.Errorf("position %d: nested more than %d deep", pos, maxDepth)
	}
	return nil
}

func (c *compiler) leave() { c.depth-- }

// engines are the letters of Salt's compound prefixes (TARGET_REX).
const engines = "GPIJLNSER"

// parseTargetWord splits a compound word into its engine, delimiter and
// pattern as Salt's parse_target: "G@os:Debian", "G|@os|Debian"; ok is
// false for a bare word, a glob on the id.
func parseTargetWord(s string) (engine byte, delim, pattern string, ok bool) {
	if len(s) < 3 || !strings.ContainsRune(engines, rune(s[0])) {
		return 0, "", "", false
	}
	if strings.ContainsRune("GPIJ", rune(s[0])) {
		// A delimiter is one character between the letter and the '@'.
		_, n := utf8.DecodeRuneInString(s[1:])
		if len(s) > 2+n && s[1+n] == '@' {
			return s[0], s[1 : 1+n], s[2+n:], true
		}
	}
	if s[1] == '@' {
		return s[0], "", s[2:], true
	}
	return 0, "", "", false
}

// operand compiles one target of a compound.
func (c *compiler) operand(s string, pillarExact bool) (matcher, error) {
	c.words++
	if c.words > maxWords {
		return nil, fmt.Errorf("more than %d targets", maxWords)
	}
	engine, delim, pattern, ok := parseTargetWord(s)
	if !ok {
		return globID(s), nil
	}
	if delim == "" {
		delim = DefaultDelimiter
	}
	switch engine {
	case 'G':
		return c.data("grain", false, pattern, delim, valueGlob)
	case 'P':
		return c.data("grain_pcre", false, pattern, delim, valueRegex)
	case 'I', 'J':
		mode := valueGlob
		switch {
		case pillarExact:
			mode = valueExact
		case engine == 'J':
			mode = valueRegex
		}
		return c.data(map[byte]string{'I': "pillar", 'J': "pillar_pcre"}[engine], true, pattern, delim, mode)
	case 'L':
		ids, err := list(pattern)
		if err != nil {
			return nil, err
		}
		return listID(ids), nil
	case 'S':
		return ipcidr(pattern)
	case 'E':
		return pcreID(pattern)
	case 'N':
		return c.nodegroupIn(pattern, pillarExact)
	}
	// R@ is Salt's range cluster server, which brine has no client for.
	return nil, fmt.Errorf("range targets (%s) are not supported", s)
}

// opers are the words of a compound that are not targets.
var opers = []string{"and", "or", "not", "(", ")"}

// nodegroup compiles the nodegroup name.
func (c *compiler) nodegroup(name string) (matcher, error) {
	return c.nodegroupIn(name, false)
}

// nodegroupIn compiles the nodegroup name, as Salt's nodegroup_comp
// expands it: a definition without operators, wildcards or prefixes is a
// list of ids (L@) or, when a word has a regular expression's characters,
// a pcre of the words joined by commas (E@); any other is a compound, which
// a compound including it takes as one parenthesized term.
func (c *compiler) nodegroupIn(name string, pillarExact bool) (matcher, error) {
	if i := slices.Index(c.expanding, name); i >= 0 {
		cycle := append(slices.Clone(c.expanding[i:]), name)
		return nil, fmt.Errorf("nodegroup %q includes itself (%s)", name, strings.Join(cycle, " → "))
	}
	def, ok := c.opts.Nodegroups[name]
	if !ok {
		return nil, fmt.Errorf("unknown nodegroup %q", name)
	}
	var raw []string
	switch t := def.(type) {
	case string:
		raw = strings.FieldsFunc(t, isSpace)
	case []string:
		raw = t
	case []any:
		for _, x := range t {
			raw = append(raw, matchStr(x))
		}
	default:
		return nil, fmt.Errorf("nodegroup %q is neither a string nor a list, got %T", name, def)
	}
	if m, err := nodegroupShortcut(raw); m != nil || err != nil {
		if err != nil {
			return nil, fmt.Errorf("nodegroup %q: %w", name, err)
		}
		return m, nil
	}
	// Nodegroups nest as parentheses do.
	c.depth++
	defer c.leave()
	if c.depth > maxDepth {
		return nil, fmt.Errorf("nodegroup %q: nodegroups nested more than %d deep", name, maxDepth)
	}
	c.expanding = append(c.expanding, name)
	defer func() { c.expanding = c.expanding[:len(c.expanding)-1] }()
	var words []word
	if s, ok := def.(string); ok {
		words = splitWords(s)
	} else {
		words = listWords(raw)
	}
	m, err := c.compound(words, pillarExact)
	if err != nil {
		return nil, fmt.Errorf("nodegroup %q: %w", name, err)
	}
	return m, nil
}

// nodegroupShortcut is Salt's _nodegroup_regex: a nodegroup of words with
// no operator, no '*' and no prefix is a list of ids, or a pcre when a
// word has one of ([{\?}]). nil, nil when the words are a compound.
func nodegroupShortcut(words []string) (matcher, error) {
	for _, w := range words {
		if slices.Contains(opers, w) || strings.Contains(w, "*") ||
			(len(w) >= 2 && w[0] >= 'A' && w[0] <= 'Z' && w[1] == '@') {
			return nil, nil
		}
	}
	joined := strings.Join(words, ",")
	if strings.ContainsAny(joined, `([{\?}])`) {
		return pcreID(joined)
	}
	ids := make([]string, 0, len(words))
	for _, w := range words {
		if w != "" {
			ids = append(ids, w)
		}
	}
	return listID(ids), nil
}
