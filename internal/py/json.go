package py

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/goccy/go-yaml"
)

// JSONOptions are the arguments of Python's json.dumps that Salt's callers
// pass: the Jinja filters (json, tojson) and Salt's json serializer
// (file.serialize, slsutil.serialize).
type JSONOptions struct {
	// Indent is nil for one line; else the text of one level (json.dumps's
	// indent=2 is "  ").
	Indent *string
	// ItemSep and KeySep are separators; "" is json.dumps's default:
	// ", " on one line, "," before a line break, and ": ".
	ItemSep, KeySep string
	SortKeys        bool
	EnsureASCII     bool
	// Other turns a value of a type JSON does not know (a template's
	// tuple) into one it does, or says why it cannot be written; nil: an
	// error naming the Go type.
	Other func(v any) (any, error)
	// TypeName names a key's type in the error for a key JSON cannot
	// have, as Python would (nil: the Go type).
	TypeName func(v any) string
}

// JSONDumps is json.dumps(v, …) with o: the same text, byte for byte, for
// nil, bool, strings, integers, floats (Infinity and NaN as Python writes
// them), lists, mappings (map[string]any, whose keys are sorted, a Go map
// having no order of its own) and ordered mappings (yaml.MapSlice, in
// their order unless SortKeys).
func JSONDumps(v any, o JSONOptions) (string, error) {
	if o.KeySep == "" {
		o.KeySep = ": "
	}
	if o.ItemSep == "" {
		o.ItemSep = ", "
		if o.Indent != nil {
			o.ItemSep = ","
		}
	}
	var b strings.Builder
	if err := writeJSON(&b, v, &o, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSON(b *strings.Builder, v any, o *JSONOptions, depth int) error {
	newline := func(d int) {
		if o.Indent != nil {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(*o.Indent, d))
		}
	}
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case string:
		writeJSONString(b, t, o.EnsureASCII)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		fmt.Fprint(b, t)
	case float64:
		switch s := Float(t); s {
		case "inf":
			b.WriteString("Infinity")
		case "-inf":
			b.WriteString("-Infinity")
		case "nan":
			b.WriteString("NaN")
		default:
			b.WriteString(s)
		}
	case []any:
		return writeJSONItems(b, '[', ']', len(t), o, depth, newline, func(i int) error {
			return writeJSON(b, t[i], o, depth+1)
		})
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		items := make(yaml.MapSlice, len(keys))
		for i, k := range keys {
			items[i] = yaml.MapItem{Key: k, Value: t[k]}
		}
		return writeJSONObject(b, items, o, depth, newline)
	case yaml.MapSlice:
		items := make(yaml.MapSlice, len(t))
		for i, it := range t {
			k, err := jsonKey(it.Key, o)
			if err != nil {
				return err
			}
			items[i] = yaml.MapItem{Key: k, Value: it.Value}
		}
		if o.SortKeys {
			sort.SliceStable(items, func(i, j int) bool { return items[i].Key.(string) < items[j].Key.(string) })
		}
		return writeJSONObject(b, items, o, depth, newline)
	default:
		if o.Other == nil {
			return fmt.Errorf("object of type %T is not JSON serializable", v)
		}
		x, err := o.Other(v)
		if err != nil {
			return err
		}
		return writeJSON(b, x, o, depth)
	}
	return nil
}

// writeJSONObject writes a mapping whose keys are strings already.
func writeJSONObject(b *strings.Builder, items yaml.MapSlice, o *JSONOptions, depth int, newline func(int)) error {
	return writeJSONItems(b, '{', '}', len(items), o, depth, newline, func(i int) error {
		writeJSONString(b, items[i].Key.(string), o.EnsureASCII)
		b.WriteString(o.KeySep)
		return writeJSON(b, items[i].Value, o, depth+1)
	})
}

// writeJSONItems writes an array or object of n items between opener and
// closer, laid out as json.dumps does: [] or {} when empty, else each
// item (written by item) after ItemSep and its indentation.
func writeJSONItems(b *strings.Builder, opener, closer byte, n int, o *JSONOptions, depth int, newline func(int), item func(i int) error) error {
	b.WriteByte(opener)
	if n == 0 {
		b.WriteByte(closer)
		return nil
	}
	for i := range n {
		if i > 0 {
			b.WriteString(o.ItemSep)
		}
		newline(depth + 1)
		if err := item(i); err != nil {
			return err
		}
	}
	newline(depth)
	b.WriteByte(closer)
	return nil
}

// jsonKey is a key as json.dumps writes it: a string, or a number or
// constant in its JSON spelling.
func jsonKey(k any, o *JSONOptions) (string, error) {
	switch t := k.(type) {
	case string:
		return t, nil
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(t), nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float64:
		var b strings.Builder
		err := writeJSON(&b, t, &JSONOptions{}, 0)
		return b.String(), err
	}
	name := fmt.Sprintf("%T", k)
	if o.TypeName != nil {
		name = o.TypeName(k)
	}
	return "", fmt.Errorf("keys must be str, int, float, bool or None, not %s", name)
}

// writeJSONString writes s as Python's json module does: with EnsureASCII
// every character past "~" as \uXXXX (a surrogate pair past U+FFFF).
func writeJSONString(b *strings.Builder, s string, ensureASCII bool) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || ensureASCII && r >= 0x7f && r < 0x10000:
			fmt.Fprintf(b, `\u%04x`, r)
		case ensureASCII && r >= 0x10000:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
