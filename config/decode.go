package config

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// DecodeError is a configuration value of the wrong kind, told in the
// terms of the file rather than of the Go type it is read into:
// `master:3: publish_port: want a port number, got "abc"`. goccy's own
// messages ("cannot unmarshal string into Go struct field
// Settings.PublishPort of type int") name Go types, fields and no key path.
type DecodeError struct {
	File string
	Line int
	// Key is the key path: "bus.cluster.routes[1]".
	Key string
	// Want says what the key takes ("a port number"), Got what it held
	// (`"abc"`, "a list"); Msg replaces both when the check was a custom
	// one (a type's own parser) with its own words.
	Want, Got, Msg string
}

func (e *DecodeError) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = "want " + e.Want + ", got " + e.Got
	}
	where := e.File
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Key == "" {
		return where + ": " + msg
	}
	return where + ": " + e.Key + ": " + msg
}

// DecodeNode decodes node, the value at key path (empty for a whole
// file's mapping) of file, into out. When it does not fit, the error is a
// *DecodeError naming the line and key path of the first value that does
// not, and what that value should have been.
func DecodeNode(file string, path []string, node ast.Node, out any) error {
	err := yaml.NodeToValue(node, out)
	if err == nil {
		return nil
	}
	t := reflect.TypeOf(out)
	if t != nil && t.Kind() == reflect.Pointer {
		if de := check(node, t.Elem(), path); de != nil {
			de.File = file
			return de
		}
	}
	// The walk found nothing wrong where goccy did: say what goccy said, in
	// the same words the walk would have used where it can.
	line, msg := ErrorLine(err, nodeLineOf(node))
	return &DecodeError{File: file, Line: line, Key: keyPath(path), Msg: msg}
}

// check walks node along type t, the way goccy decodes it, and returns the
// first value that does not fit (nil when all do). Leaves (scalars, and
// types that parse themselves) are decoded on their own, so that check
// accepts exactly what goccy accepts.
func check(node ast.Node, t reflect.Type, path []string) *DecodeError {
	node = unwrap(node)
	if node == nil {
		return nil
	}
	if _, isNull := node.(*ast.NullNode); isNull {
		return nil
	}
	if _, isAlias := node.(*ast.AliasNode); isAlias {
		return nil // an anchor's value is checked where it is written
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if parsesItself(t) || t == durationType {
		return leaf(node, t, path)
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.Struct:
		pairs, ok := Pairs(node)
		if !ok {
			return mismatch(node, t, path)
		}
		fields := structFields(t)
		for _, kv := range pairs {
			k := Key(kv.Key)
			if f, ok := fields[k]; ok {
				if de := check(kv.Value, f.Type, append(path[:len(path):len(path)], k)); de != nil {
					return de
				}
			}
		}
		return nil
	case reflect.Map:
		pairs, ok := Pairs(node)
		if !ok {
			return mismatch(node, t, path)
		}
		for _, kv := range pairs {
			k := Key(kv.Key)
			if k == "<<" {
				continue
			}
			if de := check(kv.Value, t.Elem(), append(path[:len(path):len(path)], k)); de != nil {
				return de
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return leaf(node, t, path) // []byte: a string
		}
		seq, ok := node.(*ast.SequenceNode)
		if !ok {
			return mismatch(node, t, path)
		}
		for i, v := range seq.Values {
			p := append(path[:len(path):len(path)], "["+strconv.Itoa(i)+"]")
			if de := check(v, t.Elem(), p); de != nil {
				return de
			}
		}
		return nil
	}
	return leaf(node, t, path)
}

// leaf decodes node into a fresh t: what goccy refuses there is the
// mismatch.
func leaf(node ast.Node, t reflect.Type, path []string) *DecodeError {
	err := yaml.NodeToValue(node, reflect.New(t).Interface())
	if err == nil {
		return nil
	}
	if parsesItself(t) && !isGoccyTypeError(err) {
		// The type's own message (slack's "want a string or a list of
		// strings"), without the position goccy or the type put in front:
		// the position is ours to give.
		_, msg := ErrorLine(err, 0)
		return &DecodeError{Line: nodeLineOf(node), Key: keyPath(path), Msg: stripPosition(msg)}
	}
	return mismatch(node, t, path)
}

func mismatch(node ast.Node, t reflect.Type, path []string) *DecodeError {
	key := ""
	if len(path) > 0 {
		key = path[len(path)-1]
	}
	return &DecodeError{Line: nodeLineOf(node), Key: keyPath(path), Want: want(t, key), Got: got(node)}
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	textType     = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// parsesItself reports whether t (or *t) decodes itself: an UnmarshalYAML
// of any of goccy's forms, or UnmarshalText.
func parsesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	if _, ok := pt.MethodByName("UnmarshalYAML"); ok {
		return true
	}
	return pt.Implements(textType)
}

func isGoccyTypeError(err error) bool {
	var (
		te *yaml.TypeError
		oe *yaml.OverflowError
		ue *yaml.UnexpectedNodeTypeError
	)
	return errors.As(err, &te) || errors.As(err, &oe) || errors.As(err, &ue)
}

// want says what a value of type t is, in a configuration's terms; key,
// the last element of the key path, tells a port from another number.
func want(t reflect.Type, key string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		return "a duration such as 90s, 15m or 168h"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if key == "port" || strings.HasSuffix(key, "_port") {
			return "a port number"
		}
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if key == "port" || strings.HasSuffix(key, "_port") {
			return "a port number"
		}
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		if e := t.Elem(); e.Kind() == reflect.String {
			return "a list of strings"
		}
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return "another kind of value"
}

// got describes what node holds: a scalar as written, quoted, containers
// by kind.
func got(node ast.Node) string {
	switch n := unwrap(node).(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode:
		return strconv.Quote(n.Value)
	case nil:
		return "nothing"
	default:
		if tk := n.GetToken(); tk != nil {
			return strconv.Quote(tk.Value)
		}
		return strconv.Quote(strings.TrimSpace(n.String()))
	}
}

// unwrap looks through tags (!!str) and anchors (&a) to the value.
func unwrap(n ast.Node) ast.Node {
	for {
		switch t := n.(type) {
		case *ast.TagNode:
			n = t.Value
		case *ast.AnchorNode:
			n = t.Value
		default:
			return n
		}
	}
}

// structFields maps a struct's YAML key names to its fields, as goccy
// does: the yaml tag's name, else the lower-cased field name; inline and
// embedded structs lend theirs.
func structFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if (strings.Contains(opts, "inline") || (f.Anonymous && name == "")) && ft.Kind() == reflect.Struct {
			for k, v := range structFields(ft) {
				if _, taken := out[k]; !taken {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

func keyPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func nodeLineOf(n ast.Node) int {
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// positionPrefix is the "line 3 column 4: " or "[3:4] " a parser's message
// may start with.
var positionPrefix = regexp.MustCompile(`^(?:line \d+ column \d+:\s*|\[\d+:\d+\]\s*)`)

func stripPosition(msg string) string { return positionPrefix.ReplaceAllString(msg, "") }

// goccyMessage turns goccy's decoding errors, which name Go types, into
// what the value should have been; other messages pass unchanged.
func goccyMessage(err error) (string, bool) {
	var (
		te *yaml.TypeError
		oe *yaml.OverflowError
		ue *yaml.UnexpectedNodeTypeError
	)
	switch {
	case errors.As(err, &te):
		g := "a value of another kind"
		if te.Token != nil {
			g = strconv.Quote(te.Token.Value)
		}
		return "want " + want(te.DstType, "") + ", got " + g, true
	case errors.As(err, &oe):
		return fmt.Sprintf("want a smaller number, got %s", oe.SrcNum), true
	case errors.As(err, &ue):
		return "want " + nodeTypeName(ue.Expected) + ", got " + nodeTypeName(ue.Actual), true
	}
	if msg, ok := strings.CutPrefix(err.Error(), "time: invalid duration "); ok {
		return "want a duration such as 90s, 15m or 168h, got " + msg, true
	}
	return "", false
}

func nodeTypeName(t ast.NodeType) string {
	switch t {
	case ast.MappingType, ast.MappingValueType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.StringType:
		return "a string"
	case ast.IntegerType, ast.FloatType:
		return "a number"
	case ast.BoolType:
		return "true or false"
	case ast.NullType:
		return "nothing"
	}
	return "a value"
}
