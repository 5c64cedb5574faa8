package fnmatch

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/brinehq/brine/internal/py"
)

// Glob is a compiled tag pattern with the semantics of Python's
// fnmatch.fnmatchcase, which Salt's reactor and state.event use: `*` matches
// any run of characters including `/`, `?` one character, `[seq]` and
// `[!seq]` one character in or not in seq (ranges `a-z` allowed; an unclosed
// `[` is literal). Compile once, match many times; a Glob is safe for
// concurrent use.
//
// A character is a UTF-8 encoded rune. A byte that is not part of valid UTF-8
// is a character of its own that equals only itself, as with Python's
// surrogateescape; so every pattern matches itself and `?` consumes one
// invalid byte.
type Glob struct {
	pattern string
	toks    []globTok
	// literal is true when the pattern has no wildcard: match is equality.
	literal bool
	// prefix and suffix are literal runs every match must start and end with.
	prefix, suffix string
	minLen         int // bytes, a lower bound on a matching tag's length
}

type tokKind uint8

const (
	tokLit tokKind = iota
	tokAny
	tokClass
	tokStar
)

type globTok struct {
	kind tokKind
	lit  string
	// invalid is true when lit is not valid UTF-8: its trailing bytes might
	// combine with the tag's next bytes into one rune, so it is compared rune
	// by rune instead of byte-wise.
	invalid bool
	class   *charClass
}

// charClass is one [seq] or [!seq].
type charClass struct {
	negate bool
	ranges []runeRange // empty and not negated: matches nothing
}

type runeRange struct{ lo, hi rune }

func (c *charClass) match(r rune) bool {
	in := false
	for _, rg := range c.ranges {
		if r >= rg.lo && r <= rg.hi {
			in = true
			break
		}
	}
	return in != c.negate
}

// Compile compiles pattern. Every string is a valid fnmatch pattern, so
// compilation cannot fail; the empty pattern matches only the empty tag.
func Compile(pattern string) *Glob {
	g := &Glob{pattern: pattern}
	pr := make([]rune, 0, len(pattern))
	for i := 0; i < len(pattern); {
		r, w := decodeRune(pattern[i:])
		pr = append(pr, r)
		i += w
	}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			s := lit.String()
			g.toks = append(g.toks, globTok{kind: tokLit, lit: s, invalid: !utf8.ValidString(s)})
			lit.Reset()
		}
	}
	for i := 0; i < len(pr); {
		c := pr[i]
		i++
		switch c {
		case '*':
			flush()
			if n := len(g.toks); n == 0 || g.toks[n-1].kind != tokStar {
				g.toks = append(g.toks, globTok{kind: tokStar})
			}
		case '?':
			flush()
			g.toks = append(g.toks, globTok{kind: tokAny})
		case '[':
			cls, next, ok := parseClass(pr, i)
			if !ok {
				lit.WriteRune('[')
				continue
			}
			flush()
			g.toks = append(g.toks, globTok{kind: tokClass, class: cls})
			i = next
		default:
			writeRune(&lit, c)
		}
	}
	flush()
	g.analyze()
	return g
}

func (g *Glob) analyze() {
	switch {
	case len(g.toks) == 0:
		g.literal = true
	case len(g.toks) == 1 && g.toks[0].kind == tokLit:
		g.literal = true
		g.prefix = g.toks[0].lit
	}
	if g.literal {
		g.minLen = len(g.prefix)
		return
	}
	if g.toks[0].kind == tokLit {
		g.prefix = g.toks[0].lit
	}
	if last := g.toks[len(g.toks)-1]; last.kind == tokLit {
		g.suffix = last.lit
	}
	for _, t := range g.toks {
		switch t.kind {
		case tokLit:
			g.minLen += len(t.lit)
		case tokAny, tokClass:
			g.minLen++
		}
	}
}

// parseClass follows fnmatch.translate (Python 3.11+): i is the index just
// after '['. It reports ok=false when the bracket is not closed, in which case
// '[' is a literal.
func parseClass(pr []rune, i int) (*charClass, int, bool) {
	n := len(pr)
	j := i
	if j < n && pr[j] == '!' {
		j++
	}
	if j < n && pr[j] == ']' {
		j++
	}
	for j < n && pr[j] != ']' {
		j++
	}
	if j >= n {
		return nil, i, false
	}
	stuff := pr[i:j]
	next := j + 1

	// Build the chunks translate() joins with range hyphens.
	var chunks [][]rune
	if !containsRune(stuff, '-') {
		chunks = [][]rune{stuff}
	} else {
		start := i
		k := i + 1
		if pr[i] == '!' {
			k = i + 2
		}
		for {
			k = indexRune(pr, '-', k, j)
			if k < 0 {
				break
			}
			chunks = append(chunks, pr[start:k])
			start = k + 1
			k += 3
		}
		if last := pr[start:j]; len(last) > 0 {
			chunks = append(chunks, last)
		} else {
			prev := chunks[len(chunks)-1]
			chunks[len(chunks)-1] = append(append([]rune(nil), prev...), '-')
		}
		// Remove empty ranges (translate does so because re rejects them).
		for k := len(chunks) - 1; k > 0; k-- {
			a, b := chunks[k-1], chunks[k]
			if a[len(a)-1] > b[0] {
				merged := append(append([]rune(nil), a[:len(a)-1]...), b[1:]...)
				chunks[k-1] = merged
				chunks = append(chunks[:k], chunks[k+1:]...)
			}
		}
	}

	// Tokenise the regex class translate() would emit: chunk characters are
	// literals, and the hyphen between two chunks is a range operator.
	type ctok struct {
		r      rune
		hyphen bool // an unescaped range hyphen
	}
	var toks []ctok
	for ci, ch := range chunks {
		if ci > 0 {
			toks = append(toks, ctok{r: '-', hyphen: true})
		}
		for _, r := range ch {
			toks = append(toks, ctok{r: r})
		}
	}
	cls := &charClass{}
	if len(toks) == 0 {
		return cls, next, true // empty range: never matches
	}
	if toks[0].r == '!' && !toks[0].hyphen {
		if len(toks) == 1 {
			return &charClass{negate: true}, next, true // negated empty: any char
		}
		cls.negate = true
		toks = toks[1:]
	}
	for k := 0; k < len(toks); k++ {
		lo := toks[k].r
		if k+2 < len(toks) && toks[k+1].hyphen {
			cls.ranges = append(cls.ranges, runeRange{lo, toks[k+2].r})
			k += 2
			continue
		}
		cls.ranges = append(cls.ranges, runeRange{lo, lo})
	}
	return cls, next, true
}

// decodeRune decodes the first character of s (which must not be empty): a
// rune, or an invalid byte b mapped to U+DC00+b (U+DC80..U+DCFF), which no
// valid UTF-8 decodes to, as Python's surrogateescape does.
func decodeRune(s string) (rune, int) {
	r, w := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && w == 1 {
		return 0xDC00 | rune(s[0]), 1
	}
	return r, w
}

// writeRune is the inverse of decodeRune: an escaped byte is written back as
// that byte.
func writeRune(b *strings.Builder, r rune) {
	if r >= 0xDC80 && r <= 0xDCFF {
		b.WriteByte(byte(r - 0xDC00))
		return
	}
	b.WriteRune(r)
}

// hasLitPrefix reports whether s starts with the literal token t, character by
// character.
func hasLitPrefix(s string, t *globTok) bool {
	if !strings.HasPrefix(s, t.lit) {
		return false
	}
	for i := 0; t.invalid && i < len(t.lit); {
		r, w := decodeRune(t.lit[i:])
		if sr, _ := decodeRune(s[i:]); sr != r {
			return false
		}
		i += w
	}
	return true
}

func containsRune(rs []rune, r rune) bool { return indexRune(rs, r, 0, len(rs)) >= 0 }

func indexRune(rs []rune, r rune, from, to int) int {
	for k := from; k < to && k < len(rs); k++ {
		if rs[k] == r {
			return k
		}
	}
	return -1
}

// String returns the pattern the Glob was compiled from.
func (g *Glob) String() string { return g.pattern }

// Prefix returns the literal text every matching tag starts with; a bus uses it
// to filter before matching.
func (g *Glob) Prefix() string { return g.prefix }

// Match reports whether tag matches the pattern.
func (g *Glob) Match(tag string) bool {
	if g.literal {
		return tag == g.prefix
	}
	if len(tag) < g.minLen || !strings.HasPrefix(tag, g.prefix) || !strings.HasSuffix(tag, g.suffix) {
		return false
	}
	return matchToks(g.toks, tag)
}

// matchToks is the classic wildcard matcher with one backtrack point: every
// token but `*` matches a fixed run, so retrying from the last star is enough.
func matchToks(toks []globTok, s string) bool {
	ti, si := 0, 0
	starTi, starSi := -1, 0
	for {
		if ti < len(toks) {
			t := &toks[ti]
			switch t.kind {
			case tokStar:
				if next := ti + 1; next < len(toks) && toks[next].kind == tokLit && !toks[next].invalid {
					// The star can only stop where the literal after it
					// occurs. Valid UTF-8 never starts with a continuation
					// byte, so every occurrence starts on a character.
					k := strings.Index(s[si:], toks[next].lit)
					if k < 0 {
						return false
					}
					si += k
				}
				starTi, starSi = ti, si
				ti++
				continue
			case tokLit:
				if hasLitPrefix(s[si:], t) {
					si += len(t.lit)
					ti++
					continue
				}
			case tokAny:
				if si < len(s) {
					_, w := decodeRune(s[si:])
					si += w
					ti++
					continue
				}
			case tokClass:
				if si < len(s) {
					r, w := decodeRune(s[si:])
					if t.class.match(r) {
						si += w
						ti++
						continue
					}
				}
			}
		} else if si == len(s) {
			return true
		}
		// Mismatch: let the last star swallow one more character.
		if starTi < 0 || starSi >= len(s) {
			return false
		}
		_, w := decodeRune(s[starSi:])
		ti, si = starTi, starSi+w
	}
}

// ExprMatcher is Salt's expr_match (salt.utils.stringutils), with which
// state.event selects tags, signing files select minion ids, eauth
// matches user names and the check_whitelist_blacklist filter matches
// values: an fnmatch glob, else re.match(r"\A{expr}\Z", s). Salt pastes
// the expression between the anchors without a group, so "web|db" matches
// every string starting with "web" (\Aweb or db\Z, tried at the start
// only), and brine keeps that. An expression Python's re refuses is a
// glob only: one Go's RE2 refuses too (look-arounds, back-references,
// unbalanced parentheses), and a flags group such as (?i), which Python
// 3.11 refuses anywhere but at the start of the expression, where \A is.
func ExprMatcher(pattern string) func(string) bool {
	g := Compile(pattern)
	goRE := py.GoRegex(pattern)
	if _, err := regexp.Compile(goRE); err != nil || midFlags.MatchString(pattern) {
		return g.Match
	}
	re, err := regexp.Compile(`\A(?:\A` + goRE + `\z)`)
	if err != nil {
		return g.Match
	}
	return func(s string) bool { return g.Match(s) || re.MatchString(s) }
}

// midFlags finds a global flags group, (?i) and the like, not escaped.
var midFlags = regexp.MustCompile(`(^|[^\\])\(\?[aiLmsux]+\)`)

// ExprPrefix is the literal head of an expr_match pattern that both its
// glob and its regular-expression readings require, so a subscriber can
// filter early; it holds no glob metacharacter, so prefix+"*" is the glob
// of that filter. A character a regular-expression quantifier (?, *, {)
// follows is not required, and an alternation ("web|db") requires no
// head at all.
func ExprPrefix(pattern string) string {
	if strings.Contains(pattern, "|") {
		return ""
	}
	i := strings.IndexAny(pattern, `*?[\.^$+(){}`)
	if i < 0 {
		return pattern
	}
	head := pattern[:i]
	if strings.ContainsRune("*?{", rune(pattern[i])) && head != "" {
		_, w := utf8.DecodeLastRuneInString(head)
		head = head[:len(head)-w]
	}
	return head
}
