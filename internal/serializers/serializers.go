// Package serializers is Salt's salt.serializers for yaml and json: the
// text file.serialize writes and slsutil.serialize returns, byte for byte
// as Salt's (libyaml's emitter through internal/pyyaml, Python's json
// module), so that a file Salt wrote is left alone; and the reading back.
package serializers

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/pyyaml"
	"github.com/brinehq/brine/internal/saltyaml"
)

// Serializer is one of Salt's serializers: Dump writes a data set as
// salt.serializers.<name>.serialize(v, **opts) does (without a final
// newline), Load reads one back.
type Serializer struct {
	Dump func(v any, opts map[string]any) (string, error)
	Load func(raw []byte) (any, error)
}

var byName = map[string]Serializer{
	"yaml": {Dump: dumpYAML, Load: loadYAML},
	"json": {Dump: dumpJSON, Load: loadJSON},
}

// Get returns the serializer Salt calls name.
func Get(name string) (Serializer, bool) {
	s, ok := byName[name]
	return s, ok
}

// dumpYAML is Salt's yaml serializer: yaml.dump with SafeDumper, keys
// sorted, byte for byte as libyaml writes it. Only block style is
// written: default_flow_style must be False (Salt's own default, None,
// puts the innermost collections in flow style, which brine's emitter
// does not).
func dumpYAML(v any, opts map[string]any) (string, error) {
	if _, ok := opts["default_flow_style"]; !ok {
		return "", fmt.Errorf("the yaml serializer needs default_flow_style=False: its default (None, flow style for the innermost collections) is not supported")
	}
	for k, o := range opts {
		switch k {
		case "allow_unicode":
		case "default_flow_style":
			if o != false {
				return "", fmt.Errorf("the yaml serializer option default_flow_style %s is not supported (only False)", py.Str(o))
			}
		default:
			return "", fmt.Errorf("the yaml serializer option %s is not supported", k)
		}
	}
	if py.Truth(opts["allow_unicode"]) {
		return pyyaml.DumpUnicode(v)
	}
	return pyyaml.Dump(v)
}

func loadYAML(raw []byte) (any, error) {
	v, err := saltyaml.Unmarshal(raw)
	if err != nil {
		return nil, err
	}
	return saltyaml.Plain(v), nil
}

func loadJSON(raw []byte) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return fromJSON(v), nil
}

// fromJSON turns encoding/json's numbers into Python's: whole numbers
// int, others float.
func fromJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = fromJSON(x)
		}
	case []any:
		for i, x := range t {
			t[i] = fromJSON(x)
		}
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int64(t)
		}
	}
	return v
}

// dumpJSON is Salt's json serializer: salt.utils.json.dumps, Python's
// json.dumps with ensure_ascii False unless opts say otherwise (one line,
// ", " and ": " by default; indent, separators, ensure_ascii, sort_keys).
func dumpJSON(v any, opts map[string]any) (string, error) {
	e := jsonEncoder{keySep: ": ", compact: true}
	separators := false
	for k, o := range opts {
		switch k {
		case "indent":
			switch n := o.(type) {
			case nil:
				e.indent, e.compact = "", true
			case int64:
				e.indent, e.compact = strings.Repeat(" ", int(n)), false
			case string:
				e.indent, e.compact = n, false
			default:
				return "", fmt.Errorf("the json serializer option indent must be a number or a string")
			}
		case "sort_keys":
			// Keys are sorted either way: see write.
		case "ensure_ascii":
			e.ascii = py.Truth(o)
		case "separators":
			l, ok := o.([]any)
			if !ok || len(l) != 2 {
				return "", fmt.Errorf("the json serializer option separators must be a pair of strings")
			}
			e.itemSep, e.keySep, separators = py.Str(l[0]), py.Str(l[1]), true
		default:
			return "", fmt.Errorf("the json serializer option %s is not supported", k)
		}
	}
	if !separators {
		// json.dumps: ", " on one line, "," before a line break
		e.itemSep = ","
		if e.compact {
			e.itemSep = ", "
		}
	}
	var b strings.Builder
	if err := e.write(&b, v, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

type jsonEncoder struct {
	indent, itemSep, keySep string
	ascii                   bool
	compact                 bool // indent None: one line
}

func (e *jsonEncoder) newline(b *strings.Builder, level int) {
	if e.compact {
		return
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(e.indent, level))
}

func (e *jsonEncoder) write(b *strings.Builder, v any, level int) error {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case int:
		b.WriteString(strconv.Itoa(t))
	case uint64:
		b.WriteString(strconv.FormatUint(t, 10))
	case float64:
		switch {
		case math.IsInf(t, 1):
			b.WriteString("Infinity")
		case math.IsInf(t, -1):
			b.WriteString("-Infinity")
		case math.IsNaN(t):
			b.WriteString("NaN")
		default:
			b.WriteString(py.Float(t))
		}
	case string:
		e.str(b, t)
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteString(e.itemSep)
			}
			e.newline(b, level+1)
			if err := e.write(b, x, level+1); err != nil {
				return err
			}
		}
		e.newline(b, level)
		b.WriteByte(']')
	case map[string]any:
		if len(t) == 0 {
			b.WriteString("{}")
			return nil
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		// Without sort_keys Python keeps the written order, which a
		// mapping of the SLS has lost: sorted is the one order brine
		// can promise.
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(e.itemSep)
			}
			e.newline(b, level+1)
			e.str(b, k)
			b.WriteString(e.keySep)
			if err := e.write(b, t[k], level+1); err != nil {
				return err
			}
		}
		e.newline(b, level)
		b.WriteByte('}')
	default:
		return fmt.Errorf("the dataset holds a value JSON cannot hold: %s", py.Str(v))
	}
	return nil
}

// str is a string as Python's json module writes it.
func (e *jsonEncoder) str(b *strings.Builder, s string) {
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
		case r < 0x20 || e.ascii && r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				continue
			}
			fmt.Fprintf(b, `\u%04x`, r)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
