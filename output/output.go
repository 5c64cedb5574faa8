// Package output prints job returns the way Salt's outputters do, so that
// `brine exec` (salt), `brine call` (salt-call) and the scripts written
// against Salt's text see the same thing: nested (the default), json, yaml,
// txt, raw and highstate. Values are what JSON decoding gives (maps, lists,
// strings, int64 or float64 as Decode gives them, bools, nil); maps print
// with sorted keys,
// as Salt's do for plain dicts.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/pyjson"
)

// Formats are the outputters, as --out names them.
var Formats = []string{"nested", "json", "yaml", "txt", "raw", "highstate", "quiet"}

// Options tune an outputter.
type Options struct {
	// Color paints as Salt does on a terminal.
	Color bool
	// StateOutput is Salt's state_output for the highstate outputter:
	// full (the default), terse, mixed (full for failures only),
	// changes (full for failures and changes), and their _id forms
	// (the id shown in terse lines instead of the name).
	StateOutput string
	// StateQuiet is Salt's state_verbose False: states that succeeded
	// without changes are left out (the summary still counts them).
	StateQuiet bool
}

// StateOutputs are the values StateOutput takes.
var StateOutputs = []string{"full", "terse", "mixed", "changes", "full_id", "terse_id", "mixed_id", "changes_id"}

// CheckStateOutput refuses an unknown state_output.
func CheckStateOutput(s string) error {
	if s != "" && !slices.Contains(StateOutputs, s) {
		return fmt.Errorf("unknown state_output %q (want one of %s)", s, strings.Join(StateOutputs, ", "))
	}
	return nil
}

// Salt's colours (salt.utils.color).
const (
	cyan        = "\x1b[0;36m"
	green       = "\x1b[0;32m"
	lightYellow = "\x1b[1;33m"
	lightRed    = "\x1b[1;31m"
	endColor    = "\x1b[0;0m"
)

// Check refuses an unknown outputter name, listing the known ones.
func Check(format string) error {
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("unknown outputter %q (want one of %s)", format, strings.Join(Formats, ", "))
	}
	return nil
}

// Returns is a set of returns by id, printed in the order added.
type Returns struct {
	IDs    []string
	Values map[string]any
}

// Add appends one id's return.
func (r *Returns) Add(id string, v any) {
	if r.Values == nil {
		r.Values = map[string]any{}
	}
	if _, ok := r.Values[id]; !ok {
		r.IDs = append(r.IDs, id)
	}
	r.Values[id] = v
}

// Write prints rets with the outputter format: the {id: return} mapping
// Salt's CLI hands its outputter, once per return as it arrives or once
// for all (--static).
func Write(w io.Writer, format string, rets Returns, o Options) error {
	var s string
	switch format {
	case "", "nested":
		var b strings.Builder
		for _, id := range rets.IDs {
			nested(&b, rets.Values[id], 0, id, o.Color, true)
		}
		s = b.String()
	case "highstate":
		var b strings.Builder
		for _, id := range rets.IDs {
			highstate(&b, id, rets.Values[id], o)
		}
		s = b.String()
	case "json":
		raw, err := orderedJSON(rets)
		if err != nil {
			return err
		}
		out, err := pyjson.Format(raw, true)
		if err != nil {
			return err
		}
		s = string(out) + "\n"
	case "yaml":
		var b strings.Builder
		for _, id := range rets.IDs {
			out, err := yaml.MarshalWithOptions(map[string]any{id: rets.Values[id]}, yaml.IndentSequence(true))
			if err != nil {
				return err
			}
			b.Write(out)
		}
		s = b.String()
	case "txt":
		var b strings.Builder
		for _, id := range rets.IDs {
			v := rets.Values[id]
			if str, ok := v.(string); ok {
				for _, line := range splitLines(str) {
					fmt.Fprintf(&b, "%s: %s\n", id, line)
				}
				continue
			}
			fmt.Fprintf(&b, "%s: %s\n", id, Repr(v))
		}
		s = b.String()
	case "raw":
		var b strings.Builder
		b.WriteString("{")
		for i, id := range rets.IDs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(py.Repr(id) + ": " + py.ReprValue(rets.Values[id]))
		}
		b.WriteString("}\n")
		s = b.String()
	case "quiet":
		return nil
	default:
		return Check(format)
	}
	_, err := io.WriteString(w, s)
	return err
}

// Nested is Salt's nested outputter of one value at indent 0.
func Nested(v any, color bool) string {
	var b strings.Builder
	nested(&b, v, 0, "", color, false)
	return b.String()
}

// splitLines is Python's str.splitlines for \n and \r\n text.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func paint(on bool, color, s string) string {
	if !on {
		return s
	}
	return color + s + endColor
}

// nested writes v as salt/output/nested.py does: scalars on their own line
// at indent, strings line by line, lists as "- item" (nested containers
// under "|_"), mappings as "key:" lines with values 4 deeper, a mapping
// below the top preceded by "----------". With key set, v is the value of
// that top-level key (the minion id).
func nested(b *strings.Builder, v any, indent int, key string, color, top bool) {
	if top {
		b.WriteString(paint(color, cyan, key) + ":\n")
		nestedValue(b, v, 4, "", color)
		return
	}
	nestedValue(b, v, indent, "", color)
}

func nestedValue(b *strings.Builder, v any, indent int, prefix string, color bool) {
	pad := strings.Repeat(" ", indent)
	line := func(c, s string) { b.WriteString(pad + paint(color, c, prefix+s) + "\n") }
	switch t := v.(type) {
	case nil, bool, float64, int64, int:
		line(lightYellow, py.ReprValue(t))
	case string:
		for i, l := range splitLines(t) {
			p := prefix
			if i > 0 {
				p = strings.Repeat(" ", len(prefix))
			}
			b.WriteString(pad + paint(color, green, p+l) + "\n")
		}
	case []any:
		for _, x := range t {
			switch x.(type) {
			case []any, map[string]any:
				b.WriteString(pad + paint(color, green, "|_") + "\n")
				p := "- "
				if _, ok := x.(map[string]any); ok {
					p = ""
				}
				nestedValue(b, x, indent+2, p, color)
			default:
				nestedValue(b, x, indent, "- ", color)
			}
		}
	case map[string]any:
		if indent > 0 {
			b.WriteString(pad + paint(color, cyan, "----------") + "\n")
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			b.WriteString(pad + paint(color, cyan, prefix+k) + ":\n")
			nestedValue(b, t[k], indent+4, "", color)
		}
	default:
		line(lightYellow, fmt.Sprint(t))
	}
}

// Repr is Python's repr of a decoded JSON value: what Salt's raw and txt
// outputters print.
func Repr(v any) string { return py.ReprValue(v) }

// orderedJSON encodes rets as one JSON object in the order added.
func orderedJSON(rets Returns) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, id := range rets.IDs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(id)
		v, err := json.Marshal(rets.Values[id])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Decode reads a JSON value as events' data is read (bus.Numbers): an
// integer stays an integer, other numbers are floats, which print as
// Python prints them.
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return bus.Numbers(v), nil
}

// Runner is a runner function's return that names its outputter, as
// state.orchestrate's {data: {id: …}, outputter, retcode}: salt-run prints
// data with that outputter and exits with retcode.
type Runner struct {
	Format  string
	Returns Returns
	Retcode int
}

// RunnerReturn recognises such a return (decoded); ok is false for any
// other value. An unknown outputter is nested.
func RunnerReturn(v any) (r Runner, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap || m["outputter"] == nil {
		return r, false
	}
	data, isMap := m["data"].(map[string]any)
	if !isMap {
		return r, false
	}
	r.Format, _ = m["outputter"].(string)
	if Check(r.Format) != nil {
		r.Format = "nested"
	}
	for _, id := range slices.Sorted(maps.Keys(data)) {
		r.Returns.Add(id, data[id])
	}
	r.Retcode = int(numberOrZero(m["retcode"]))
	return r, true
}

// ParseRunner is RunnerReturn of a return as JSON: the runner returns that
// name their outputter are state.orchestrate's {data, outputter, retcode}
// and jobs.lookup_jid's {outputter, data}.
func ParseRunner(raw []byte) (Runner, bool) {
	v, err := Decode(raw)
	if err != nil {
		return Runner{}, false
	}
	return RunnerReturn(v)
}

// WriteRunner prints a runner function's return (JSON) as salt-run does:
// with the outputter it names, else as YAML, the way salt-run's default
// outputter shows nested data (key order and integers kept). It returns
// the retcode such a return carries (a failed orchestration's), which is
// salt-run's exit status.
func WriteRunner(w io.Writer, raw []byte, o Options) (retcode int, err error) {
	if r, ok := ParseRunner(raw); ok {
		return r.Retcode, Write(w, r.Format, r.Returns, o)
	}
	if len(raw) == 0 {
		raw = []byte("null")
	}
	b, err := yaml.JSONToYAML(raw)
	if err != nil {
		return 0, err
	}
	_, err = w.Write(b)
	return 0, err
}
