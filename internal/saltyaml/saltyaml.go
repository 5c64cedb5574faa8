// Package saltyaml reads YAML as Salt reads SLS, pillar and reaction files:
// PyYAML's safe loader, which follows YAML 1.1, with Salt's changes
// (salt/utils/yamlloader.py). A Go YAML library reads YAML 1.2, and the two
// disagree on plain scalars that formulas are full of, without an error:
//
//	mode: 0644     Salt: 644 (a leading zero is not octal in Salt)   YAML 1.2: 420
//	enable: yes    Salt: True                                        YAML 1.2: "yes"
//	time: 1:30     Salt: 90 (sexagesimal)                            YAML 1.2: "1:30"
//	ratio: 1e3     Salt: "1e3" (1.1 wants a dot and a signed exponent)
//	day: 2024-01-02  Salt: "2024-01-02" (timestamps stay text)
//
// so this package parses the document's structure with gopkg.in/yaml.v3
// and resolves every plain scalar itself, by PyYAML's implicit resolvers.
// Mappings keep their order (yaml.MapSlice, as Salt's OrderedDict), a key
// given twice is an error (Salt's "found conflicting ID"), `<<` merges as
// PyYAML's does, and a tag PyYAML's safe loader has no constructor for
// (!!python/…) is an error, never code.
//
// Integers come back as uint64 when not negative and int64 when negative,
// floats as float64: what the rest of brine gets from goccy/go-yaml.
package saltyaml

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	goyaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
	"gopkg.in/yaml.v3"
)

// Error is a document Salt's loader would refuse, at a line and column
// (1-based) of the text.
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return e.Msg
}

func errAt(n *yaml.Node, format string, args ...any) error {
	return &Error{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

// Unmarshal reads one YAML document: a mapping (yaml.MapSlice), a list
// ([]any), a scalar, or nil for an empty document. More than one document
// is an error, as with Salt's yaml renderer.
func Unmarshal(b []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(b, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errAt(&extra, "expected a single document in the stream, but found another document")
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(b, err)
	}
	c := &constructor{budget: aliasBudget(len(b))}
	return c.construct(&doc, 0)
}

// aliasBudget bounds the values a document of size n may construct: an
// alias repeats a whole subtree, and a few lines of nested aliases ("a
// billion laughs") would otherwise build gigabytes.
func aliasBudget(n int) int { return 1_000_000 + 100*n }

// constructor builds values from nodes within its budget.
type constructor struct{ budget int }

// syntaxError is where the text stops being YAML. yaml.v3 often names
// the line where the enclosing mapping began ("line 1: did not find
// expected key" for a bad indentation on line 4), so goccy/go-yaml's
// parser, which names the offending token, is asked first; else yaml.v3's
// "yaml: line N: …" becomes an Error at line N.
func syntaxError(b []byte, err error) error {
	if _, gerr := parser.ParseBytes(b, 0); gerr != nil {
		if se, ok := errors.AsType[*goyaml.SyntaxError](gerr); ok && se.Token != nil && se.Token.Position != nil {
			return &Error{Line: se.Token.Position.Line, Column: se.Token.Position.Column, Msg: se.Message}
		}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(num); err == nil {
				return &Error{Line: line, Msg: text}
			}
		}
	}
	return &Error{Msg: msg}
}

// maxDepth bounds nesting (and alias chains): a document is input.
const maxDepth = 10_000

func (c *constructor) construct(n *yaml.Node, depth int) (any, error) {
	if c.budget--; c.budget < 0 {
		return nil, errAt(n, "the document expands to too many values (aliases repeating aliases)")
	}
	if depth > maxDepth {
		return nil, errAt(n, "the document nests deeper than %d levels", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.construct(n.Content[0], depth+1)
	case yaml.AliasNode:
		return c.construct(n.Alias, depth+1)
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.SequenceNode:
		if err := checkTag(n, "!!seq"); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := c.construct(item, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		if err := checkTag(n, "!!map"); err != nil {
			return nil, err
		}
		return c.mapping(n, depth)
	}
	return nil, errAt(n, "unexpected YAML node")
}

// checkTag refuses an explicit tag on a collection other than its own.
func checkTag(n *yaml.Node, own string) error {
	if n.Style&yaml.TaggedStyle == 0 || n.Tag == own || n.Tag == "" {
		return nil
	}
	return errAt(n, "could not determine a constructor for the tag '%s'", longTag(n.Tag))
}

// longTag spells a tag as PyYAML's messages do.
func longTag(tag string) string {
	if rest, ok := strings.CutPrefix(tag, "!!"); ok {
		return "tag:yaml.org,2002:" + rest
	}
	return tag
}

// mapping builds a mapping in order, merging `<<` as PyYAML's
// flatten_mapping (with Salt's version of it) and refusing a key given
// twice.
func (c *constructor) mapping(n *yaml.Node, depth int) (goyaml.MapSlice, error) {
	pairs, err := flatten(n, depth)
	if err != nil {
		return nil, err
	}
	out := make(goyaml.MapSlice, 0, len(pairs))
	seen := make(map[any]bool, len(pairs))
	for _, p := range pairs {
		key, err := c.construct(p.key, depth+1)
		if err != nil {
			return nil, err
		}
		switch key.(type) {
		case goyaml.MapSlice, []any:
			return nil, errAt(p.key, "while constructing a mapping: found unacceptable key (a mapping or a list cannot be a key)")
		}
		if k := hashKey(key); seen[k] {
			return nil, errAt(p.key, "while constructing a mapping: found conflicting ID '%v'", keyStr(key))
		} else {
			seen[k] = true
		}
		v, err := c.construct(p.value, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, goyaml.MapItem{Key: key, Value: v})
	}
	return out, nil
}

// hashKey is a key as Python compares dict keys: 1, 1.0 and True are one.
func hashKey(k any) any {
	switch v := k.(type) {
	case bool:
		if v {
			return 1.0
		}
		return 0.0
	case uint64:
		return float64(v)
	case int64:
		return float64(v)
	}
	return k
}

type pair struct{ key, value *yaml.Node }

// flatten is the mapping's pairs with `<<` merged: the merged pairs whose
// key the mapping does not give itself come first, in the merged
// mappings' order (the last of a merge list first), as in Salt.
func flatten(n *yaml.Node, depth int) ([]pair, error) {
	if depth > maxDepth {
		return nil, errAt(n, "the document nests deeper than %d levels", maxDepth)
	}
	var own, merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			own = append(own, pair{k, v})
			continue
		}
		target := deref(v)
		switch target.Kind {
		case yaml.MappingNode:
			sub, err := flatten(target, depth+1)
			if err != nil {
				return nil, err
			}
			merged = append(merged, sub...)
		case yaml.SequenceNode:
			var subs [][]pair
			for _, s := range target.Content {
				s = deref(s)
				if s.Kind != yaml.MappingNode {
					return nil, errAt(s, "while constructing a mapping: expected a mapping for merging, but found %s", nodeKind(s))
				}
				sub, err := flatten(s, depth+1)
				if err != nil {
					return nil, err
				}
				subs = append(subs, sub)
			}
			for i := len(subs) - 1; i >= 0; i-- {
				merged = append(merged, subs[i]...)
			}
		default:
			return nil, errAt(target, "while constructing a mapping: expected a mapping or list of mappings for merging, but found %s", nodeKind(target))
		}
	}
	if len(merged) == 0 {
		return own, nil
	}
	has := make(map[string]bool, len(own))
	for _, p := range own {
		has[deref(p.key).Value] = true
	}
	out := make([]pair, 0, len(merged)+len(own))
	for _, p := range merged {
		if !has[deref(p.key).Value] {
			out = append(out, p)
		}
	}
	return append(out, own...), nil
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

func isMergeKey(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && n.Style == 0
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return "scalar"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	}
	return "node"
}

// PyYAML's implicit resolvers (YAML 1.1), which Salt's loader keeps.
var (
	reBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	reFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	reInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	reNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	reTime  = regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
)

// implicitTag is the tag PyYAML gives a plain scalar. Like PyYAML's
// resolver it looks at the first character first: most scalars (names,
// paths, words) cannot be anything but text, and are known at once.
func implicitTag(s string) string {
	if s == "" {
		return "!!null"
	}
	if !strings.ContainsRune("yYnNtTfFoO-+0123456789.<~", rune(s[0])) {
		return "!!str"
	}
	switch {
	case reBool.MatchString(s):
		return "!!bool"
	case reFloat.MatchString(s):
		return "!!float"
	case reInt.MatchString(s):
		return "!!int"
	case s == "<<":
		return "!!merge"
	case reNull.MatchString(s):
		return "!!null"
	case reTime.MatchString(s):
		return "!!timestamp"
	}
	return "!!str"
}

func scalar(n *yaml.Node) (any, error) {
	tag := "!!str"
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		tag = n.Tag
	case n.Style == 0:
		tag = implicitTag(n.Value)
	}
	switch tag {
	case "!!str", "!!timestamp", "!!merge", "!!python/unicode":
		// Salt reads timestamps as their text.
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		switch n.Value {
		case "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
			return true, nil
		case "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
			return false, nil
		}
		return nil, errAt(n, "could not read %q as a boolean", n.Value)
	case "!!int":
		return intValue(n)
	case "!!float":
		return floatValue(n)
	case "!!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(n.Value), ""))
		if err != nil {
			return nil, errAt(n, "failed to decode base64 data: %v", err)
		}
		return string(b), nil
	}
	return nil, errAt(n, "could not determine a constructor for the tag '%s'", longTag(tag))
}

// intValue is PyYAML's construct_yaml_int after Salt's change: a value
// written with a leading 0 (not 0b, 0x) is decimal, its zeros dropped.
func intValue(n *yaml.Node) (any, error) {
	s := n.Value
	if s != "0" && strings.HasPrefix(s, "0") && !strings.HasPrefix(s, "0b") && !strings.HasPrefix(s, "0x") {
		if s = strings.TrimLeft(s, "0"); s == "" {
			s = "0"
		}
	}
	s = strings.ReplaceAll(s, "_", "")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	v := new(big.Int)
	ok := true
	switch {
	case s == "0" || s == "":
		v.SetInt64(0)
	case strings.HasPrefix(s, "0b"):
		_, ok = v.SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		_, ok = v.SetString(s[2:], 16)
	case s[0] == '0':
		_, ok = v.SetString(s, 8)
	case strings.Contains(s, ":"):
		for _, d := range strings.Split(s, ":") {
			digit, err := strconv.ParseInt(d, 10, 64)
			if err != nil {
				ok = false
				break
			}
			v.Mul(v, big.NewInt(60)).Add(v, big.NewInt(digit))
		}
	default:
		_, ok = v.SetString(s, 10)
	}
	if !ok {
		return nil, errAt(n, "could not read %q as an integer", n.Value)
	}
	if neg {
		v.Neg(v)
	}
	switch {
	case v.IsUint64():
		return v.Uint64(), nil
	case v.IsInt64():
		return v.Int64(), nil
	}
	// Python's integers have no bound; past 64 bits brine keeps the
	// digits rather than lose them.
	return v.String(), nil
}

// floatValue is PyYAML's construct_yaml_float.
func floatValue(n *yaml.Node) (any, error) {
	s := strings.ToLower(strings.ReplaceAll(n.Value, "_", ""))
	sign := 1.0
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	switch {
	case s == ".inf":
		return sign * math.Inf(1), nil
	case s == ".nan":
		return math.NaN(), nil
	case strings.Contains(s, ":"):
		var v float64
		for _, d := range strings.Split(s, ":") {
			f, err := strconv.ParseFloat(d, 64)
			if err != nil {
				return nil, errAt(n, "could not read %q as a number", n.Value)
			}
			v = v*60 + f
		}
		return sign * v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, errAt(n, "could not read %q as a number", n.Value)
	}
	return sign * f, nil
}

// keyStr is a mapping key as text: in an error, and as Plain's map key.
// Unlike py.Str it prints floats with fmt (1.0 is "1", where Python gives
// "1.0"), which is what Plain's callers have always been given.
func keyStr(k any) string {
	switch v := k.(type) {
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	}
	return fmt.Sprint(k)
}

// Plain is v with every mapping a map[string]any (keys as text), for
// consumers that take Go maps; the order of the mappings is lost.
func Plain(v any) any {
	switch t := v.(type) {
	case goyaml.MapSlice:
		m := make(map[string]any, len(t))
		for _, it := range t {
			k, ok := it.Key.(string)
			if !ok {
				k = keyStr(it.Key)
			}
			m[k] = Plain(it.Value)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = Plain(x)
		}
		return out
	}
	return v
}
