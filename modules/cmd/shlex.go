package cmd

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Errors of Split, as Python's shlex words them.
var (
	errNoClosingQuote = errors.New("no closing quotation")
	errNoEscaped      = errors.New("no escaped character")
)

// Split splits s into words as Python's shlex.split does (POSIX mode, no
// comments), which is how Salt turns a command into its argument list
// when it runs without a shell: whitespace separates words; single
// quotes keep everything literally; double quotes keep everything but a
// backslash before `"` or `\`; outside quotes a backslash keeps the next
// character. Quoted parts join the word they touch, and ” is an empty
// word.
func Split(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case ' ', '\t', '\r', '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case '\\':
			if i+1 >= len(s) {
				return nil, errNoEscaped
			}
			_, w := utf8.DecodeRuneInString(s[i+1:])
			cur.WriteString(s[i+1 : i+1+w])
			inWord = true
			i += 1 + w
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errNoClosingQuote
			}
			cur.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case '"':
			inWord = true
			i++
			for {
				if i >= len(s) {
					return nil, errNoClosingQuote
				}
				if s[i] == '"' {
					i++
					break
				}
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '"') {
					cur.WriteByte(s[i+1])
					i += 2
					continue
				}
				cur.WriteByte(s[i])
				i++
			}
		default:
			cur.WriteByte(c)
			inWord = true
			i++
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// pyRepr writes s as Python's repr does, which is how Salt's messages
// show a command it split ("['sleep', '5'] : Timed out after 1 seconds").
func pyRepr(s string) string {
	q := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteRune(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == q:
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteRune(q)
	return b.String()
}

// pyList is Python's repr of a list of strings.
func pyList(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = pyRepr(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pyStr is Python's str() of a decoded argument, which is what Salt makes
// of a number or boolean given where a string is used (an env value, a
// script argument).
func pyStr(v any) string {
	switch t := v.(type) {
	case nil:
		return "None"
	case string:
		return t
	case bool:
		if t {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return pyFloat(t)
	}
	return fmt.Sprint(v)
}

// pyFloat is Python's repr of a float: shortest digits, an exponent only
// below 1e-4 or from 1e16, and ".0" on integral values.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
