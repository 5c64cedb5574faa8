package config

import (
	"errors"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// The helpers below read goccy YAML syntax trees, which every part that
// reports file:line for its own configuration section walks.

// Pairs returns the key/value pairs of a YAML mapping node, and false when n
// is not a mapping.
func Pairs(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch t := n.(type) {
	case *ast.MappingNode:
		return t.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{t}, true
	}
	return nil, false
}

// Key returns a mapping key as a string: a quoted key without its quotes.
func Key(k ast.MapKeyNode) string {
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	return strings.TrimSpace(k.String())
}

// ErrorLine returns the line a goccy YAML error points at (def when it
// points nowhere) and its message without the source excerpt; a decoding
// error says what the value should have been, never which Go type it was
// to be read into.
func ErrorLine(err error, def int) (int, string) {
	line := def
	ye, isYAML := errors.AsType[yaml.Error](err)
	if isYAML {
		if tok := ye.GetToken(); tok != nil && tok.Position != nil {
			line = tok.Position.Line
		}
	}
	if msg, ok := goccyMessage(err); ok {
		return line, msg
	}
	if !isYAML {
		return def, err.Error()
	}
	return line, ye.GetMessage()
}
