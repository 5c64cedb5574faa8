package cmd

import (
	"errors"
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
