// Package serializers is Salt's salt.serializers for yaml and json: the
// text file.serialize writes and slsutil.serialize returns, byte for byte
// as Salt's (libyaml's emitter through internal/pyyaml, Python's json
// module), so that a file Salt wrote is left alone; and the reading back.
package serializers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/pyyaml"
	"github.com/brinehq/brine/internal/saltyaml"
)

// Serializer is one of Salt's serializers: Dump writes a data set as
// salt.serializers.<name>.serialize(v, **opts) does (without a final
// newline), Load reads one back, LoadOrdered too with its mappings
// yaml.MapSlices in the order the text writes them, as Python's dicts
// keep it: for a caller that iterates them, a template.
type Serializer struct {
	Dump        func(v any, opts map[string]any) (string, error)
	Load        func(raw []byte) (any, error)
	LoadOrdered func(raw []byte) (any, error)
}

var byName = map[string]Serializer{
	"yaml": {Dump: dumpYAML, Load: loadYAML, LoadOrdered: saltyaml.Unmarshal},
	"json": {Dump: dumpJSON, Load: loadJSON, LoadOrdered: loadJSONOrdered},
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
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value")
	}
	return fromJSON(v), nil
}

// loadJSONOrdered is loadJSON's data with each object a yaml.MapSlice
// in the order its keys are written, as Python's json.loads keeps them.
func loadJSONOrdered(raw []byte) (any, error) {
	v, err := loadJSON(raw)
	if err != nil {
		return nil, err
	}
	o, err := keyorder.ReadJSON(raw)
	if err != nil {
		return nil, err
	}
	return keyorder.MapSlices(v, o), nil
}

// fromJSON turns encoding/json's numbers into Python's: a number written
// without a fraction or an exponent an int (a float when it overflows
// int64), any other a float, as json.loads reads 1 and 1.0.
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
	case json.Number:
		if !strings.ContainsAny(string(t), ".eE") {
			if n, err := t.Int64(); err == nil {
				return n
			}
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

// dumpJSON is Salt's json serializer: salt.utils.json.dumps, Python's
// json.dumps (py.JSONDumps) with ensure_ascii False unless opts say
// otherwise (one line, ", " and ": " by default; indent, separators,
// ensure_ascii, sort_keys). An ordered mapping (yaml.MapSlice, a
// template's dict) is written in its order unless sort_keys, as Python's
// dicts; a Go map, which has no order, with its keys sorted.
func dumpJSON(v any, opts map[string]any) (string, error) {
	o := py.JSONOptions{}
	for k, x := range opts {
		switch k {
		case "indent":
			switch n := x.(type) {
			case nil:
				o.Indent = nil
			case int64:
				ind := strings.Repeat(" ", int(n))
				o.Indent = &ind
			case string:
				o.Indent = &n
			default:
				return "", fmt.Errorf("the json serializer option indent must be a number or a string")
			}
		case "sort_keys":
			o.SortKeys = py.Truth(x)
		case "ensure_ascii":
			o.EnsureASCII = py.Truth(x)
		case "separators":
			l, ok := x.([]any)
			if !ok || len(l) != 2 {
				return "", fmt.Errorf("the json serializer option separators must be a pair of strings")
			}
			o.ItemSep, o.KeySep = py.Str(l[0]), py.Str(l[1])
		default:
			return "", fmt.Errorf("the json serializer option %s is not supported", k)
		}
	}
	o.Other = func(v any) (any, error) {
		return nil, fmt.Errorf("the dataset holds a value JSON cannot hold: %s", py.Str(v))
	}
	return py.JSONDumps(v, o)
}
