package reactor

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinehq/brine/internal/jinja"
)

// gonja's runtime errors print its syntax tree: `unable to evaluate filter
// &{<Token[Name] Val='x' Pos=93 Line=5 Col=31> x [] map[]}`, and every
// output expression's rewrite (scalar.go) adds a layer of them. A user
// needs the file, line, column and the name at fault, in words.

// causes are known causes, rephrased.
var causes = []struct {
	re  *regexp.Regexp
	say string
}{
	// gonja says a missing method, a value that is not callable and an
	// undefined name as Jinja does ('str object' has no attribute 'x',
	// 'int' object is not callable, 'f' is undefined): they stay so.
	{regexp.MustCompile(`No filter named '(\w+)'`), "unknown filter %q"},
	{regexp.MustCompile(`No test named '(\w+)'`), "unknown test %q"},
}

// renderError turns a gonja runtime error of the rewritten source into what
// the user wrote: the line and column in the file, and the cause in words.
func renderError(msg string, cols columnMap) (line, col int, text string) {
	msg = strings.TrimPrefix(msg, "unable to execute template: ")
	if m := renderLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	// The innermost token that is the user's names where the error is.
	for _, tok := range jinja.ErrorTokens(msg) {
		if tok.Val == scalarFilter {
			continue
		}
		line, col = tok.Line, cols.original(tok.Line, tok.Col)
	}
	msg = strings.ReplaceAll(msg, "invalid call to filter '"+scalarFilter+"': ", "")
	for _, c := range causes {
		if m := c.re.FindAllStringSubmatch(msg, -1); m != nil {
			return line, col, fmt.Sprintf(c.say, m[len(m)-1][1])
		}
	}
	// Unknown cause: the message without gonja's node prints and our filter.
	text = jinja.StripNodes(msg)
	text = strings.ReplaceAll(text, "unable to evaluate filter : invalid call to filter '"+scalarFilter+"': ", "")
	text = strings.ReplaceAll(text, "invalid call to filter '"+scalarFilter+"': ", "")
	text = renderLine.ReplaceAllString(text, "")
	text = strings.Join(strings.Fields(strings.Trim(text, " :")), " ")
	return line, col, strings.TrimPrefix(text, "Unable to render expression : ")
}

// columnMap maps columns of the rewritten source back to the file's: the
// rewrite only inserts text, so a column moves left by what was inserted
// before it on its line.
type columnMap map[int][]insertion

type insertion struct{ col, n int } // at 1-based column col of the rewritten line, n bytes

func (c columnMap) add(line, col, n int) { c[line] = append(c[line], insertion{col, n}) }

func (c columnMap) original(line, col int) int {
	out := col
	for _, ins := range c[line] {
		if ins.col < col {
			out -= ins.n
		}
	}
	return out
}
