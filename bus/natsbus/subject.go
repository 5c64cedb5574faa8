package natsbus

import (
	"strings"

	"github.com/brinehq/brine/internal/fnmatch"
)

// subjectPrefix roots every event subject; the stream captures prefix.>.
const subjectPrefix = "ev"

// Subject maps a tag to the NATS subject its event is stored under. Each
// `/`-separated segment becomes one subject token, so a consumer can filter
// on the literal head of a glob server-side. The mapping is injective for any
// valid tag: bytes NATS gives meaning to (`.`, `*`, `>`, whitespace, `%`) and
// non-printable bytes become %XX, and an empty segment becomes a lone `%`,
// which no escaped segment can produce.
func Subject(tag string) string {
	var b strings.Builder
	b.Grow(len(subjectPrefix) + len(tag) + 8)
	b.WriteString(subjectPrefix)
	for seg := range strings.SplitSeq(tag, "/") {
		b.WriteByte('.')
		writeToken(&b, seg)
	}
	return b.String()
}

func writeToken(b *strings.Builder, seg string) {
	if seg == "" {
		b.WriteByte('%')
		return
	}
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c <= ' ' || c >= 0x7f || c == '.' || c == '*' || c == '>' || c == '%' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
}

// filterSubject is the narrowest subject filter that still delivers every tag
// g can match: the glob's complete literal leading segments, then `>`; or the
// exact subject when the glob has no wildcard.
func filterSubject(g *fnmatch.Glob) string {
	if g == nil {
		return subjectPrefix + ".>"
	}
	if literal := g.Prefix(); literal == g.String() {
		return Subject(literal)
	}
	head := g.Prefix()
	cut := strings.LastIndexByte(head, '/')
	if cut < 0 {
		return subjectPrefix + ".>"
	}
	return Subject(head[:cut]) + ".>"
}
