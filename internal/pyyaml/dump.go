// Package pyyaml writes data as PyYAML's yaml.dump(data,
// Dumper=SafeDumper, default_flow_style=False) writes it (libyaml's
// emitter, which Salt's yaml serializer uses, writes the same): block
// style, mappings with their keys sorted, each string plain or quoted as
// PyYAML chooses, long strings folded at 80 columns, multi-line strings
// single-quoted over several lines. file.serialize writes YAML files with
// it, so that a file Salt wrote reads as unchanged to brine, byte for
// byte, and the other way round.
//
// The emitter is a port of PyYAML's Emitter (emitter.py) restricted to
// what safe_dump of plain data produces: no anchors, tags or block
// scalars; the scalar writers are libyaml's, which PyYAML's C dumper (the
// one Salt uses) runs.
package pyyaml

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/brinehq/brine/internal/py"
)

const (
	bestIndent = 2
	bestWidth  = 80
)

// Dump is yaml.dump(v, Dumper=SafeDumper, default_flow_style=False) as
// Salt's yaml serializer returns it: without the final newline (nor the
// "..." ending a document that is one plain scalar).
func Dump(v any) (string, error) { return dump(v, false) }

// DumpUnicode is Dump with allow_unicode (Salt's serializer when the
// state gives an encoding): characters past ASCII written as they are.
func DumpUnicode(v any) (string, error) { return dump(v, true) }

func dump(v any, unicode bool) (string, error) {
	e := &emitter{whitespace: true, indention: true, indent: -1, unicode: unicode}
	if err := e.node(v, false, false); err != nil {
		return "", err
	}
	// A document whose root is a plain scalar ends with "..." in
	// PyYAML's output: Salt's serializer cuts it off, with the final
	// newline, which is never written here.
	return e.b.String(), nil
}

type emitter struct {
	b          strings.Builder
	column     int
	whitespace bool
	indention  bool
	indent     int // -1: None
	indents    []int
	flowLevel  int
	simpleKey  bool
	unicode    bool // allow_unicode
}

func (e *emitter) write(s string) {
	e.b.WriteString(s)
	e.column += utf8.RuneCountInString(s)
}

func (e *emitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0 && flow:
		e.indent = bestIndent
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += bestIndent
	}
}

func (e *emitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *emitter) writeIndicator(ind string, needWhitespace, whitespace, indention bool) {
	if !e.whitespace && needWhitespace {
		ind = " " + ind
	}
	e.whitespace = whitespace
	e.indention = e.indention && indention
	e.write(ind)
}

func (e *emitter) writeIndent() {
	indent := e.indent
	if indent < 0 {
		indent = 0
	}
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.putBreak()
	}
	if e.column < indent {
		e.write(strings.Repeat(" ", indent-e.column))
	}
	e.whitespace, e.indention = true, true
}

// node is PyYAML's expect_node for v; mapping and simpleKey say where
// it stands (a mapping's key or value, a simple key).
func (e *emitter) node(v any, mapping, simpleKey bool) error {
	e.simpleKey = simpleKey
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 || e.flowLevel > 0 {
			return e.flowEmpty("{", "}")
		}
		return e.blockMapping(t)
	case []any:
		if len(t) == 0 || e.flowLevel > 0 {
			return e.flowEmpty("[", "]")
		}
		return e.blockSequence(t, mapping)
	}
	text, implicit, err := represent(v)
	if err != nil {
		return err
	}
	e.increaseIndent(true, false)
	err = e.scalar(text, implicit)
	e.popIndent()
	return err
}

// flowEmpty writes an empty collection ({} or []), as PyYAML's flow
// style does for one.
func (e *emitter) flowEmpty(open, close string) error {
	e.writeIndicator(open, true, true, false)
	e.writeIndicator(close, false, false, false)
	return nil
}

func (e *emitter) blockSequence(l []any, mapping bool) error {
	indentless := mapping && !e.indention
	e.increaseIndent(false, indentless)
	for _, x := range l {
		e.writeIndent()
		e.writeIndicator("-", true, false, true)
		if err := e.node(x, false, false); err != nil {
			return err
		}
	}
	e.popIndent()
	return nil
}

func (e *emitter) blockMapping(m map[string]any) error {
	e.increaseIndent(false, false)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e.writeIndent()
		if len(k) <= 128 && !e.analyze(k).Multiline {
			if err := e.node(k, true, true); err != nil {
				return err
			}
			e.writeIndicator(":", false, false, false)
		} else {
			// Too long or several lines for a simple key: libyaml's
			// "? key" then ": value".
			e.writeIndicator("?", true, false, true)
			if err := e.node(k, true, false); err != nil {
				return err
			}
			e.writeIndent()
			e.writeIndicator(":", true, false, true)
		}
		if err := e.node(m[k], true, false); err != nil {
			return err
		}
	}
	e.popIndent()
	return nil
}

// represent is SafeRepresenter's text for a scalar, and whether a plain
// scalar of that text would read back as the same type (implicit).
func represent(v any) (string, bool, error) {
	switch t := v.(type) {
	case nil:
		return "null", true, nil
	case bool:
		if t {
			return "true", true, nil
		}
		return "false", true, nil
	case int64:
		return strconv.FormatInt(t, 10), true, nil
	case int:
		return strconv.Itoa(t), true, nil
	case uint64:
		return strconv.FormatUint(t, 10), true, nil
	case float64:
		return Float(t), true, nil
	case string:
		return t, resolvesToStr(t), nil
	}
	return "", false, fmt.Errorf("cannot represent an object: %s", py.Str(v))
}

// Float is SafeRepresenter's represent_float: Python's repr in lower case,
// with ".0" before the exponent of a whole number (1e+16 is 1.0e+16, which
// YAML 1.1 reads as a float), and .nan, .inf and -.inf.
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := strings.ToLower(py.Float(f))
	if !strings.Contains(s, ".") && strings.Contains(s, "e") {
		s = strings.Replace(s, "e", ".0e", 1)
	}
	return s
}

// PyYAML's implicit resolvers (resolver.py): a plain scalar matching one
// of these reads as a bool, float, int, merge key, null, timestamp or
// value, not a string, so such a string is quoted.
var resolvers = map[byte][]*regexp.Regexp{}

func init() {
	add := func(first string, re string) {
		r := regexp.MustCompile(re)
		for i := 0; i < len(first); i++ {
			resolvers[first[i]] = append(resolvers[first[i]], r)
		}
	}
	add("yYnNtTfFoO", `^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	add("-+0123456789.", `^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|`+
		`[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	add("-+0123456789", `^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|`+
		`[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	add("<", `^(?:<<)$`)
	add("~nN\x00", `^(?:~|null|Null|NULL|)$`)
	add("0123456789", `^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?`+
		`(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
	add("=", `^(?:=)$`)
}

// resolvesToStr is whether a plain scalar s reads back as a string.
func resolvesToStr(s string) bool {
	first := byte(0)
	if s != "" {
		first = s[0]
	}
	for _, r := range resolvers[first] {
		if r.MatchString(s) {
			return false
		}
	}
	return true
}
