package jinja

import (
	"regexp"
	"strconv"
)

// gonja's runtime errors print its syntax tree: `unable to evaluate filter
// &{<Token[Name] Val='x' Pos=93 Line=5 Col=31> x [] map[]}`. A user needs
// the line, the column and the name at fault, in words.
var (
	// tokenRepr is gonja's print of a token, inside a node's print.
	tokenRepr = regexp.MustCompile(`&?\{?<Token\[(\w+)\] Val='([^']*)' Pos=\d+ Line=(\d+) Col=(\d+)>[^}]*\}?`)
	// nodeRepr is gonja's print of an expression node.
	nodeRepr = regexp.MustCompile(`(?:filtered_expression|call|getattr|getitem)\([^:]*\)`)
)

// Token is a token gonja's error message names: its text and place.
type Token struct {
	Val       string
	Line, Col int
}

// ErrorTokens are the tokens an error message of gonja names, outermost
// first: the last is where the error is.
func ErrorTokens(msg string) []Token {
	var out []Token
	for _, m := range tokenRepr.FindAllStringSubmatch(msg, -1) {
		line, _ := strconv.Atoi(m[3])
		col, _ := strconv.Atoi(m[4])
		out = append(out, Token{Val: m[2], Line: line, Col: col})
	}
	return out
}

// StripNodes removes gonja's prints of tokens and nodes from an error
// message.
func StripNodes(msg string) string {
	return nodeRepr.ReplaceAllString(tokenRepr.ReplaceAllString(msg, ""), "")
}
