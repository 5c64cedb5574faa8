package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/internal/py"
	filemod "github.com/brinehq/brine/modules/file"
	"github.com/brinehq/brine/state"
)

// whitespaceRegexp is Salt's build_whitespace_split_regex: each line of
// text as its words separated by any whitespace, the whole a line of the
// file.
func whitespaceRegexp(text string) string {
	var b strings.Builder
	for _, line := range splitLines(text, false) {
		words := strings.Fields(line)
		for i, w := range words {
			words[i] = regexp.QuoteMeta(w)
		}
		b.WriteString(`(?:[\s]+)?` + strings.Join(words, `(?:[\s]+)`))
	}
	return `(?m)^` + b.String() + `$`
}

// searchFile is file.search with multiline: whether pattern matches the
// file's text anywhere. A pattern Go cannot compile is looked for as
// plain text.
func searchFile(text, pattern string) bool {
	re, err := regexp.Compile("(?m)" + pattern)
	if err != nil {
		return strings.Contains(text, pattern)
	}
	return re.MatchString(text)
}

func (s *states) appendState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	test := state.From(ctx).Test
	if name == "" {
		return state.Failed(name, "Must provide name to file.append")
	}
	if in.Bool("makedirs") {
		dir := filepath.Dir(name)
		if !test {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				if _, err := s.call(ctx, "file.mkdir", []any{dir}, nil); err != nil {
					return state.Failed(name, "%v", err)
				}
			}
		}
	}
	if ok, _ := checkFile(name); !ok {
		t := s.touch(ctx, name, nil, nil, in.Bool("makedirs"))
		if test {
			return t
		}
		if ok, msg := checkFile(name); !ok {
			return state.Failed(name, "%s", msg)
		}
	}
	text := in.Value("text")
	if src := in.Value("source"); py.Truth(src) {
		body, msg := s.sourceText(ctx, src, in)
		if msg != "" {
			return state.Failed(name, "%s", msg)
		}
		text = body
	}
	if text == nil {
		return state.Failed(name, "No text found to append. Nothing appended")
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	content := string(raw)
	slines := splitLines(content, false)
	var appendLines []string
	for _, chunk := range strList(text) {
		pattern := chunk
		if in.Bool("ignore_whitespace") {
			pattern = whitespaceRegexp(chunk)
		}
		if searchFile(content, pattern) {
			continue
		}
		appendLines = append(appendLines, splitLines(chunk, false)...)
	}
	diff := func(old, new []string) string { return strings.Join(unifiedDiff(old, new), "\n") }
	if test {
		nlines := append(append([]string{}, slines...), appendLines...)
		if len(appendLines) == 0 {
			return state.Succeeded(name, fmt.Sprintf("File %s is in correct state", name), nil)
		}
		changes := map[string]any{"diff": diff(slines, nlines)}
		if !isText(raw) {
			changes["diff"] = "Replace binary file"
		}
		return state.Pending(name, fmt.Sprintf("File %s is set to be updated", name), changes)
	}
	comment := fmt.Sprintf("File %s is in correct state", name)
	if len(appendLines) > 0 {
		args := make([]any, len(appendLines))
		for i, l := range appendLines {
			args[i] = l
		}
		if _, err := s.call(ctx, "file.append", []any{name}, map[string]any{"args": args}); err != nil {
			return state.Failed(name, "%v", err)
		}
		comment = fmt.Sprintf("Appended %d lines", len(appendLines))
	}
	now, err := os.ReadFile(name)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	var changes map[string]any
	if nlines := splitLines(string(now), false); strings.Join(nlines, "\x00") != strings.Join(slines, "\x00") || len(nlines) != len(slines) {
		changes = map[string]any{"diff": diff(slines, nlines)}
		if !isText(now) {
			changes["diff"] = "Replace binary file"
		}
	}
	return state.Succeeded(name, comment, changes)
}

// sourceText reads file.append's source (salt:// or a local path, or the
// first of a list that exists), rendered when a template is given.
func (s *states) sourceText(ctx context.Context, v any, in *function.Input) (string, string) {
	o := managedOpts{source: v, template: in.String("template"), context: in.Value("context"), defaults: in.Value("defaults")}
	src, msg := s.resolveSource(ctx, o, in.String("name"), "")
	if msg != "" {
		return "", msg
	}
	if msg := s.load(ctx, src, o, in.String("name"), ""); msg != "" {
		return "", msg
	}
	return string(src.data), ""
}

func (s *states) replaceState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	test := state.From(ctx).Test
	if name == "" {
		return state.Failed(name, "Must provide name to file.replace")
	}
	if ok, msg := checkFile(name); !ok {
		if in.Bool("ignore_if_missing") && strings.Contains(msg, "file not found") {
			return state.Succeeded(name, "No changes needed to be made", nil)
		}
		return state.Failed(name, "%s", msg)
	}
	o := filemod.ReplaceOpts{Count: int(in.Int("count")), Flags: in.Value("flags"),
		Backup: filemod.BackupSuffix(in.Value("backup")), AppendIfNotFound: in.Bool("append_if_not_found"),
		PrependIfNotFound: in.Bool("prepend_if_not_found"), ShowChanges: in.Bool("show_changes"),
		BackslashLiteral: in.Bool("backslash_literal"), DryRun: test}
	if v := in.Value("not_found_content"); v != nil {
		nf := py.Str(v)
		o.NotFoundContent = &nf
	}
	out, err := filemod.Replace(name, in.String("pattern"), py.Str(in.Value("repl")), o)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	return edited(name, out, test, "Changes would have been made")
}

func (s *states) lineState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	test := state.From(ctx).Test
	if name == "" {
		return state.Failed(name, "Must provide name to file.line")
	}
	// Salt first has file.managed create the file (create: True) and keep
	// its owner and mode, whatever that returns.
	s.managed(ctx, managedOpts{name: name, create: in.Bool("create"), user: in.Value("user"), group: in.Value("group"),
		mode: in.Value("file_mode"), replace: false, showChanges: true, contentsNewline: true, delimiter: ":",
		allowEmpty: true, follow: true})
	if ok, msg := checkFile(name); !ok {
		return state.Failed(name, "%s", msg)
	}
	mode := strings.ToLower(in.String("mode"))
	if mode == "" {
		return state.Failed(name, "Mode was not defined. How to process the file?")
	}
	var content *string
	if v := in.Value("content"); v != nil {
		c := py.Str(v)
		content = &c
	}
	if mode != "delete" && content == nil {
		return state.Failed(name, "Content can only be empty if mode is ['delete']")
	}
	var match, before, after *string
	for _, p := range []struct {
		key string
		dst **string
	}{{"match", &match}, {"before", &before}, {"after", &after}} {
		if in.Has(p.key) {
			v := in.String(p.key)
			*p.dst = &v
		}
	}
	out, err := lineEdit(name, content, match, mode, in.String("location"), before, after, in.Bool("show_changes"),
		in.Bool("backup"), in.Bool("indent"), test)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	return edited(name, out, test, "Changes would be made")
}

// edited is the answer of file.replace, file.line and file.blockreplace
// for what their edit returned (out: the diff, or true without
// show_changes; false when nothing changed). would is the test-mode
// comment, which Salt words differently in file.replace.
func edited(name string, out any, test bool, would string) state.Result {
	if !py.Truth(out) {
		return state.Succeeded(name, "No changes needed to be made", nil)
	}
	changes := map[string]any{"diff": out}
	if test {
		return state.Pending(name, would, changes)
	}
	return state.Succeeded(name, "Changes were made", changes)
}

// eol is the line ending a line carries ("" for none).
func eol(line string) string {
	switch {
	case strings.HasSuffix(line, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(line, "\n"), strings.HasSuffix(line, "\r"):
		return line[len(line)-1:]
	}
	return ""
}

// regexToStatic is Salt's _regex_to_static: the lines a regular
// expression (or, literally, the text) matches.
func regexToStatic(body []string, pattern *string) ([]string, error) {
	if pattern == nil || *pattern == "" || len(body) == 0 {
		return nil, nil
	}
	re, err := regexp.Compile("(?s)" + *pattern)
	var out []string
	for _, l := range body {
		if strings.Contains(l, *pattern) ||
			err == nil && (re.MatchString(l) || re.MatchString(strings.TrimRight(l, "\r\n"))) {
			out = append(out, l)
		}
	}
	return out, nil
}

// lineIndent gives line the indentation of src when indent is set.
func lineIndent(src, line string, indent bool) string {
	if !indent {
		return line
	}
	ws := src[:len(src)-len(strings.TrimLeft(src, " \t"))]
	return ws + strings.TrimLeft(line, " \t\n\r\f\v")
}

// lineEOL gives line the ending of src (a newline when src has none).
func lineEOL(src, line string) string {
	end := eol(src)
	if end == "" {
		end = "\n"
	}
	return strings.TrimRight(line, " \t\n\r\f\v") + end
}

// startsTill is Salt's _starts_till: whether src and probe agree word by
// word up to some point (0 when equal, -1 when not at all).
func startsTill(src, probe string) int {
	if src == "" || probe == "" {
		return -1
	}
	src, probe = strings.TrimRight(src, "\n\r"), strings.TrimRight(probe, "\n\r")
	if src == probe {
		return 0
	}
	strip := func(s string) string {
		first, rest, ok := strings.Cut(s, " ")
		if ok && len(first) < 2 && rest != "" {
			return rest
		}
		return s
	}
	words := func(s string) []string { return strings.Fields(s) }
	a, b := words(strip(src)), words(strip(probe))
	if len(a) >= len(b) {
		a, b = b, a
	}
	joined := strings.Join(b, " ")
	for idx := range a {
		prb := strings.Join(a[:len(a)-(idx+1)], " ")
		if prb != "" && strings.HasPrefix(joined, prb) {
			return idx
		}
	}
	return -1
}

func occurrence(probe []string, target string) error {
	switch n := len(probe); {
	case n > 1:
		return commentf("Found more than expected occurrences in \"%s\" expression", target)
	case n == 0:
		return commentf("Found no expected occurrences in \"%s\" expression", target)
	}
	return nil
}

func index(body []string, line string) int {
	for i, l := range body {
		if l == line {
			return i
		}
	}
	return -1
}

func insertAt(body []string, i int, line string) []string {
	body = append(body, "")
	copy(body[i+1:], body[i:])
	body[i] = line
	return body
}

// lineEdit is the file.line execution function, Salt's algorithm.
func lineEdit(path string, content, match *string, mode, location string, before, after *string,
	showChanges, backup, indent, test bool) (any, error) {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, commentf("File \"%s\" does not exists or is not a file.", path)
	}
	switch mode {
	case "insert", "ensure", "delete", "replace":
	default:
		return nil, commentf("Unknown mode: \"%s\"", mode)
	}
	if before == nil && after == nil && (match == nil || *match == "") {
		match = content
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	body := splitLines(string(raw), true)
	orig := append([]string{}, body...)
	if n := len(body); n > 0 && eol(body[n-1]) != "" {
		body = append(body, "")
	}
	afterL, _ := regexToStatic(body, after)
	beforeL, _ := regexToStatic(body, before)
	matchL, _ := regexToStatic(body, match)
	c := ""
	if content != nil {
		c = *content
	}
	switch {
	case len(raw) == 0 && (mode == "delete" || mode == "replace"):
		body = nil
	case mode == "delete" && len(matchL) > 0:
		var out []string
		for _, l := range body {
			if l != matchL[0] {
				out = append(out, l)
			}
		}
		body = out
	case mode == "replace" && len(matchL) > 0:
		i := index(body, matchL[0])
		body[i] = lineIndent(body[i], c, indent)
	case mode == "insert":
		if location == "" && len(beforeL) == 0 && len(afterL) == 0 {
			return nil, commentf(`On insert must be defined either "location" or "before/after" conditions.`)
		}
		switch {
		case location == "start":
			if len(body) > 0 {
				body = insertAt(body, 0, lineEOL(body[0], c))
			} else {
				body = append(body, c+"\n")
			}
		case location == "end":
			switch n := len(body); {
			case n > 1 && body[n-1] == "":
				// The file ends with a newline: the line goes after
				// its last one and ends as it does (Salt of this
				// algorithm's age left a blank line before it).
				body[n-1] = lineEOL(body[n-2], lineIndent(body[n-2], c, indent))
			case n > 0:
				body = append(body, lineIndent(body[n-1], c, indent))
			default:
				body = append(body, c)
			}
		case len(beforeL) > 0 && len(afterL) > 0:
			if err := occurrence(beforeL, "before"); err != nil {
				return nil, err
			}
			if err := occurrence(afterL, "after"); err != nil {
				return nil, err
			}
			var out []string
			inRange := false
			for _, l := range body {
				if l == afterL[0] {
					inRange = true
				} else if l == beforeL[0] && inRange {
					out = append(out, lineIndent(l, c, indent))
				}
				out = append(out, l)
			}
			body = out
		case len(beforeL) > 0:
			if err := occurrence(beforeL, "before"); err != nil {
				return nil, err
			}
			body = insertBefore(index(body, beforeL[0]), body, c, indent)
		default:
			if err := occurrence(afterL, "after"); err != nil {
				return nil, err
			}
			body = insertAfter(index(body, afterL[0]), body, c, indent)
		}
	case mode == "ensure":
		switch {
		case len(beforeL) > 0 && len(afterL) > 0:
			if err := occurrence(beforeL, "before"); err != nil {
				return nil, err
			}
			if err := occurrence(afterL, "after"); err != nil {
				return nil, err
			}
			there := false
			for _, l := range body {
				if strings.Contains(l, c) {
					there = true
				}
			}
			if !there {
				i := index(body, afterL[0])
				if i < len(body)-1 && body[i+1] == beforeL[0] {
					body = insertAt(body, i+1, lineIndent(body[i], c, indent))
				} else {
					return nil, commentf(`Found more than one line between boundaries "before" and "after".`)
				}
			}
		case len(beforeL) > 0:
			if err := occurrence(beforeL, "before"); err != nil {
				return nil, err
			}
			body = insertBefore(index(body, beforeL[0]), body, c, indent)
		case len(afterL) > 0:
			if err := occurrence(afterL, "after"); err != nil {
				return nil, err
			}
			body = insertAfter(index(body, afterL[0]), body, c, indent)
		default:
			return nil, commentf("Wrong conditions? Unable to ensure line without knowing where to put it before and/or after.")
		}
	}
	if len(body) > 0 {
		for i, l := range body {
			if eol(l) == "" && i+1 < len(body) {
				prev := 1
				if i > 0 {
					prev = i - 1
				}
				body[i] = lineEOL(body[prev], l)
			}
		}
		if body[len(body)-1] == "" {
			body = body[:len(body)-1]
		}
	}
	newText := strings.Join(body, "")
	changed := newText != string(raw)
	if backup && changed && !test {
		stamp := time.Now().Format("2006-01-02-15-04-05")
		if err := atomicfile.WriteBytes(path+"."+stamp, raw, fi.Mode().Perm()); err != nil {
			return nil, commentf("Unable to create the backup file of %s. Exception: %v", path, err)
		}
	}
	var diff string
	if changed {
		if showChanges {
			diff = getDiff(orig, body)
		}
		if !test {
			if err := filemod.WriteKeeping(path, []byte(newText), fi); err != nil {
				return nil, err
			}
		}
	}
	if showChanges && diff != "" {
		return diff, nil
	}
	return changed, nil
}

// insertBefore is Salt's _insert_line_before: no duplicate of the line
// just above.
func insertBefore(i int, body []string, content string, indent bool) []string {
	if i == 0 || startsTill(body[i-1], content) < 0 {
		body = insertAt(body, i, lineIndent(body[i], content, indent))
	}
	return body
}

// insertAfter is Salt's _insert_line_after: no duplicate of the line just
// below.
func insertAfter(i int, body []string, content string, indent bool) []string {
	if i+1 >= len(body) || body[i+1] == "" || startsTill(body[i+1], content) < 0 {
		body = insertAt(body, i+1, lineIndent(body[i], content, indent))
	}
	return body
}
