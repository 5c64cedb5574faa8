package jinja

import (
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/internal/pyyaml"
	"github.com/brinehq/brine/internal/saltyaml"
)

// pyYAMLDump is Salt's salt.utils.yaml.safe_dump(v, default_flow_style=
// flow) as its yaml filters call it (PyYAML's emitter, allow_unicode):
// dicts with their keys sorted, a string plain when PyYAML would write
// it plain and read it back as that string, else quoted as PyYAML quotes
// it; a flow collection wrapped past 80 columns; anything PyYAML cannot
// represent (Undefined) NULL. The text has no final newline.
func pyYAMLDump(v any, flow bool) (string, error) {
	e := &pyEmitter{}
	v = sortedMaps(v)
	if flow || !isCollection(v) {
		e.flowNode(v, 0, false)
	} else {
		e.blockNode(v, 0, false, false)
	}
	return strings.TrimSpace(e.b.String()), nil
}

type pyEmitter struct {
	b      strings.Builder
	col    int
	spaced bool // the last thing written was whitespace
}

const pyBestWidth = 80

func (e *pyEmitter) write(s string) {
	e.b.WriteString(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		e.col = utf8.RuneCountInString(s[i+1:])
	} else {
		e.col += utf8.RuneCountInString(s)
	}
	e.spaced = strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\n")
}

func (e *pyEmitter) indent(n int) {
	if e.b.Len() > 0 {
		e.write("\n")
	}
	e.write(strings.Repeat(" ", n))
	e.spaced = true
}

// space writes the blank PyYAML puts before a token not preceded by
// whitespace.
func (e *pyEmitter) space() {
	if !e.spaced && e.b.Len() > 0 {
		e.write(" ")
	}
}

func isCollection(v any) bool {
	switch t := v.(type) {
	case yaml.MapSlice:
		return len(t) > 0
	case []any:
		return len(t) > 0
	case pyTuple:
		return len(t) > 0
	}
	return false
}

func asSeq(v any) ([]any, bool) {
	switch t := v.(type) {
	case []any:
		return t, true
	case pyTuple:
		return []any(t), true
	}
	return nil, false
}

// flowItems writes a flow collection of n items between open and close,
// each by item at indentation in, breaking the line before an item that
// would start past the best width, as PyYAML's emitter does.
func (e *pyEmitter) flowItems(open, close string, n, indent int, item func(i, in int)) {
	e.space()
	e.write(open)
	e.spaced = true
	in := indent + 2
	for i := range n {
		if i > 0 {
			e.write(",")
		}
		if e.col > pyBestWidth {
			e.indent(in)
		}
		item(i, in)
	}
	e.write(close)
}

// flowNode writes v in flow style; inFlow is whether it is inside a
// flow collection (which decides if a string may be plain).
func (e *pyEmitter) flowNode(v any, indent int, inFlow bool) {
	if l, ok := asSeq(v); ok {
		e.flowItems("[", "]", len(l), indent, func(i, in int) { e.flowNode(l[i], in, true) })
		return
	}
	if m, ok := v.(yaml.MapSlice); ok {
		e.flowItems("{", "}", len(m), indent, func(i, in int) {
			e.flowNode(m[i].Key, in, true)
			e.write(":")
			e.flowNode(m[i].Value, in, true)
		})
		return
	}
	e.space()
	e.write(pyYAMLScalar(v, inFlow))
}

// blockNode writes v in block style at indent; inline is whether the
// line is started ("- " or "key:" written); inMapping whether v is a
// mapping's value (where a sequence is not indented).
func (e *pyEmitter) blockNode(v any, indent int, inline, inMapping bool) {
	if !isCollection(v) {
		e.flowNode(v, indent, false)
		return
	}
	if l, ok := asSeq(v); ok {
		if inMapping {
			indent -= 2
		}
		for i, x := range l {
			if i > 0 || !inline || inMapping {
				e.indent(indent)
			} else {
				e.space()
			}
			e.write("-")
			e.spaced = false
			e.blockNode(x, indent+2, true, false)
		}
		return
	}
	for i, it := range v.(yaml.MapSlice) {
		if i > 0 || !inline || inMapping {
			e.indent(indent)
		} else {
			e.space()
		}
		e.flowNode(it.Key, indent, false)
		e.write(":")
		e.blockNode(it.Value, indent+2, true, true)
	}
}

// pyYAMLScalar is a scalar as PyYAML's SafeRepresenter and emitter write
// it.
func pyYAMLScalar(v any, inFlow bool) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		if t {
			return "true"
		}
		return "false"
	case int, int64, int32, uint, uint64:
		return jinjaStr(t)
	case float64:
		return pyyaml.Float(t)
	case string:
		return pyYAMLString(t, inFlow)
	case yaml.MapSlice:
		return "{}"
	case []any, pyTuple:
		return "[]"
	}
	// Salt's SafeOrderedDumper writes what it cannot represent
	// (Undefined) as NULL.
	return "NULL"
}

// pyYAMLString is PyYAML's choice of style for a string (analyze_scalar,
// choose_scalar_style): plain, single-quoted or double-quoted.
func pyYAMLString(s string, inFlow bool) string {
	allowPlain, allowSingle := pyAnalyze(s, inFlow)
	if allowPlain {
		if v, err := saltyaml.Unmarshal([]byte(s)); err == nil {
			if str, ok := v.(string); ok && str == s {
				return s
			}
		}
	}
	if allowSingle {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return yamlDoubleQuoted(s)
}

// pyAnalyze is what PyYAML's emitter (pyyaml.AnalyzePython) allows s to
// be written as, in a flow collection or not. A multi-line string is not
// single-quoted here: PyYAML writes it so over several lines, and a
// double-quoted string reads the same.
func pyAnalyze(s string, inFlow bool) (allowPlain, allowSingle bool) {
	a := pyyaml.AnalyzePython(s)
	allowPlain = a.AllowBlockPlain
	if inFlow {
		allowPlain = a.AllowFlowPlain
	}
	return allowPlain && !a.Empty, a.AllowSingleQuoted && !a.Multiline
}
