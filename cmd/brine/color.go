package main

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/brinehq/brine/cli/agentcmd"
)

// hue is the colour of a word in human output.
type hue int

const (
	plain hue = iota
	green
	yellow
	red
)

// ansi are the SGR sequences of the hues; reset ends each.
var ansi = [...]string{plain: "", green: "\x1b[32m", yellow: "\x1b[33m", red: "\x1b[31m"}

const reset = "\x1b[0m"

// palette colours status words in human output, so that what failed stands
// out on a terminal. It is off when the output is not a terminal (a pipe,
// a file: scripts get plain text), when NO_COLOR is set to anything
// (https://no-color.org), and for --json.
type palette struct{ on bool }

// paletteFor is the palette for output written to w.
func paletteFor(w io.Writer, asJSON bool) palette {
	return palette{on: !asJSON && agentcmd.ColorOn(w)}
}

// paint wraps s in h's colour when the palette is on.
func (p palette) paint(h hue, s string) string {
	if !p.on || h == plain || s == "" {
		return s
	}
	return ansi[h] + s + reset
}

// statusHue is the colour of a status, by its first word: green for what
// went well, yellow for what is under way or needs a look, red for what
// failed.
func statusHue(s string) hue {
	word, _, _ := strings.Cut(s, " ")
	switch strings.TrimRight(word, ":,;") {
	case "ok", "created", "destroyed", "succeeded", "PASS":
		return green
	case "running", "skipped", "warning":
		return yellow
	case "failed", "error", "FAIL", "cancelled", "interrupted":
		return red
	}
	return plain
}

// checkHue is the colour of a check's outcome: "ok…" passed, "not checked"
// was not reached, anything else is the error that failed it.
func checkHue(s string) hue {
	switch {
	case s == "ok" || strings.HasPrefix(s, "ok "):
		return green
	case s == "not checked":
		return yellow
	}
	return red
}

// table lays rows out in columns two spaces apart, as the text/tabwriter
// setup it replaces did, but pads each cell before colouring it, so that
// colour codes never shift a column. The last column is not padded.
type table struct {
	pal  palette
	rows [][]string
	hues map[int]func(string) hue
}

// newTable starts a table with its header row, which is never coloured.
func newTable(pal palette, header ...string) *table {
	return &table{pal: pal, rows: [][]string{header}, hues: map[int]func(string) hue{}}
}

// color colours the cells of the column named name with hueOf.
func (t *table) color(name string, hueOf func(string) hue) {
	for i, h := range t.rows[0] {
		if h == name {
			t.hues[i] = hueOf
		}
	}
}

// row adds a row; it must have as many cells as the header.
func (t *table) row(cells ...string) {
	t.rows = append(t.rows, cells)
}

// write writes the table to w.
func (t *table) write(w io.Writer) error {
	widths := make([]int, len(t.rows[0]))
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for n, r := range t.rows {
		for i, c := range r {
			text := c
			if i < len(r)-1 {
				text += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2)
			}
			if hueOf := t.hues[i]; hueOf != nil && n > 0 {
				// Colour the cell's text, not its padding.
				text = t.pal.paint(hueOf(c), c) + text[len(c):]
			}
			b.WriteString(text)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
