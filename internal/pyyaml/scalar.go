package pyyaml

import (
	"fmt"
	"strings"
)

// Analysis is PyYAML's ScalarAnalysis: the styles a string may be
// written in.
type Analysis struct {
	Empty, Multiline                     bool
	AllowFlowPlain, AllowBlockPlain      bool
	AllowSingleQuoted, AllowDoubleQuoted bool
}

// printable is libyaml's IS_PRINTABLE, which (unlike PyYAML's own
// emitter) counts neither NEL (U+0085) nor characters past U+FFFF.
func printable(r rune) bool {
	return r == 0x0a || r >= 0x20 && r <= 0x7e || r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd && r != 0xfeff
}

func isBreak(r rune) bool {
	return r == '\n' || r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029'
}

func isSpaceOrEnd(rs []rune, i int) bool {
	return i >= len(rs) || strings.ContainsRune("\x00 \t\r\n\u0085\u2028\u2029", rs[i])
}

// scalarRules are the two character tests on which libyaml's
// analyze_scalar and PyYAML's own (emitter.py) differ.
type scalarRules struct {
	printable func(rune) bool // written as it is, not escaped
	isBreak   func(rune) bool // a line break
}

// analyze is libyaml's yaml_emitter_analyze_scalar, with allow_unicode as
// the emitter has it (off by default, as Salt's serializer dumps without
// an encoding).
func (e *emitter) analyze(s string) Analysis {
	return analyze(s, scalarRules{
		printable: func(r rune) bool { return printable(r) && (r <= 0x7e || e.unicode) },
		isBreak:   isBreak,
	})
}

// AnalyzePython is analyze_scalar as PyYAML's own emitter (emitter.py)
// runs it with allow_unicode, as Salt's Jinja yaml filters dump: NEL and
// the characters past U+FFFF are printable there, and a carriage return
// is no line break (it is not printable either way).
func AnalyzePython(s string) Analysis {
	return analyze(s, scalarRules{
		printable: func(r rune) bool { return printable(r) || r == 0x85 || r >= 0x10000 && r < 0x10ffff },
		isBreak:   func(r rune) bool { return r != '\r' && isBreak(r) },
	})
}

// analyze is analyze_scalar of s under the character tests of r.
func analyze(s string, r scalarRules) Analysis {
	if s == "" {
		return Analysis{Empty: true, AllowBlockPlain: true, AllowSingleQuoted: true, AllowDoubleQuoted: true}
	}
	var blockInd, flowInd, lineBreaks, special bool
	var leadSpace, leadBreak, trailSpace, trailBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd, flowInd = true, true
	}
	rs := []rune(s)
	preceded := true
	followed := len(rs) == 1 || isSpaceOrEnd(rs, 1)
	prevSpace, prevBreak := false, false
	for i, ch := range rs {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				flowInd, blockInd = true, true
			}
			if ch == '?' || ch == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if ch == '-' && followed {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", ch) {
				flowInd = true
			}
			if ch == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if ch == '#' && preceded {
				flowInd, blockInd = true, true
			}
		}
		if r.isBreak(ch) {
			lineBreaks = true
		}
		if !r.printable(ch) {
			special = true
		}
		switch {
		case ch == ' ':
			if i == 0 {
				leadSpace = true
			}
			if i == len(rs)-1 {
				trailSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case r.isBreak(ch):
			if i == 0 {
				leadBreak = true
			}
			if i == len(rs)-1 {
				trailBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		preceded = strings.ContainsRune("\x00 \t\r\n\u0085\u2028\u2029", ch)
		followed = i+2 >= len(rs) || isSpaceOrEnd(rs, i+2)
	}
	a := Analysis{Multiline: lineBreaks, AllowFlowPlain: true, AllowBlockPlain: true, AllowSingleQuoted: true,
		AllowDoubleQuoted: true}
	if leadSpace || leadBreak || trailSpace || trailBreak {
		a.AllowFlowPlain, a.AllowBlockPlain = false, false
	}
	if breakSpace {
		a.AllowFlowPlain, a.AllowBlockPlain, a.AllowSingleQuoted = false, false, false
	}
	if spaceBreak || special {
		a.AllowFlowPlain, a.AllowBlockPlain, a.AllowSingleQuoted = false, false, false
	}
	if lineBreaks {
		a.AllowFlowPlain, a.AllowBlockPlain = false, false
	}
	if flowInd {
		a.AllowFlowPlain = false
	}
	if blockInd {
		a.AllowBlockPlain = false
	}
	return a
}

// scalar is PyYAML's process_scalar after choose_scalar_style.
func (e *emitter) scalar(text string, implicit bool) error {
	a := e.analyze(text)
	style := byte('"')
	switch {
	case implicit && !(e.simpleKey && (a.Empty || a.Multiline)) &&
		(e.flowLevel > 0 && a.AllowFlowPlain || e.flowLevel == 0 && a.AllowBlockPlain):
		style = 0
	case a.AllowSingleQuoted && !(e.simpleKey && a.Multiline):
		style = '\''
	}
	split := !e.simpleKey
	switch style {
	case 0:
		e.writePlain(text, split)
	case '\'':
		e.writeSingleQuoted(text, split)
	default:
		e.writeDoubleQuoted(text, split)
	}
	return nil
}

// The writers below are libyaml's (the CSafeDumper Salt's serializer
// runs): they fold a long line at a single space past column 80, and
// write line breaks of single-quoted text as blank lines.

func (e *emitter) writePlain(text string, split bool) {
	rs := []rune(text)
	if !e.whitespace && (len(rs) > 0 || e.flowLevel > 0) {
		e.write(" ")
	}
	e.writeFolded(rs, split, false, func(i int) bool { return !(i+1 < len(rs) && rs[i+1] == ' ') })
	e.whitespace, e.indention = false, false
}

// writeFolded is the loop libyaml's plain and single-quoted writers
// share: a space is folded into a new line when split allows, it is the
// first of its run, the column is past the best width and foldAt(i) (the
// writer's own rule) agrees; a run of line breaks starting with \n gets
// a blank line first; any other character is written after the
// indentation a break left, a quote doubled when quoted. It says whether
// the text ended in line breaks.
func (e *emitter) writeFolded(rs []rune, split, quoted bool, foldAt func(i int) bool) (breaks bool) {
	spaces := false
	for i, ch := range rs {
		switch {
		case ch == ' ':
			if split && !spaces && e.column > bestWidth && foldAt(i) {
				e.writeIndent()
			} else {
				e.write(" ")
			}
			spaces = true
		case isBreak(ch):
			if !breaks && ch == '\n' {
				e.putBreak()
			}
			e.writeBreak(ch)
			e.indention, breaks = true, true
		default:
			if breaks {
				e.writeIndent()
			}
			if quoted && ch == '\'' {
				e.write("'")
			}
			e.write(string(ch))
			e.indention, spaces, breaks = false, false, false
		}
	}
	return breaks
}

// putBreak is libyaml's PUT_BREAK: a newline, column 0.
func (e *emitter) putBreak() {
	e.b.WriteByte('\n')
	e.column = 0
}

// writeBreak is libyaml's WRITE_BREAK: the break character (a newline
// for \n), column 0.
func (e *emitter) writeBreak(br rune) {
	if br == '\n' {
		e.putBreak()
		return
	}
	e.b.WriteRune(br)
	e.column = 0
}

func (e *emitter) writeSingleQuoted(text string, split bool) {
	e.writeIndicator("'", true, false, false)
	rs := []rune(text)
	breaks := e.writeFolded(rs, split, true, func(i int) bool { return i != 0 && i != len(rs)-1 && rs[i+1] != ' ' })
	if breaks {
		e.writeIndent()
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace, e.indention = false, false
}

var escapes = map[rune]string{0: "0", '\a': "a", '\b': "b", '\t': "t", '\n': "n", '\v': "v", '\f': "f", '\r': "r",
	0x1b: "e", '"': "\"", '\\': "\\", 0x85: "N", 0xa0: "_", 0x2028: "L", 0x2029: "P"}

func (e *emitter) writeDoubleQuoted(text string, split bool) {
	e.writeIndicator("\"", true, false, false)
	rs := []rune(text)
	spaces := false
	for i, ch := range rs {
		switch {
		case !printable(ch) || ch > 0x7e && !e.unicode || ch == 0xfeff || isBreak(ch) || ch == '"' || ch == '\\':
			// Not printable (past ASCII, without allow_unicode), a byte
			// order mark, a break, a quote or a backslash.
			var data string
			switch r, ok := escapes[ch]; {
			case ok:
				data = "\\" + r
			case ch <= 0xff:
				data = fmt.Sprintf("\\x%02X", ch)
			case ch <= 0xffff:
				data = fmt.Sprintf("\\u%04X", ch)
			default:
				data = fmt.Sprintf("\\U%08X", ch)
			}
			e.write(data)
			spaces = false
		case ch == ' ':
			if split && !spaces && e.column > bestWidth && i != 0 && i != len(rs)-1 {
				e.writeIndent()
				if rs[i+1] == ' ' {
					e.write("\\")
				}
			} else {
				e.write(" ")
			}
			spaces = true
		default:
			e.write(string(ch))
			spaces = false
		}
	}
	e.writeIndicator("\"", false, false, false)
	e.whitespace, e.indention = false, false
}
