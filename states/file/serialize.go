package file

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/pyyaml"
	"github.com/brinehq/brine/internal/saltyaml"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// serializeFunc declares file.serialize: a file holding a data set as
// YAML or JSON, written as Salt's serializers write it (so that a file
// Salt wrote is left alone), and, with merge_if_exists, merged into what
// the file holds.
func (s *states) serializeFunc() function.Func {
	anyp := func(n string, def any) function.Param {
		return function.Param{Name: n, Kind: function.Any, Default: def}
	}
	boolp := func(n string, def bool) function.Param {
		return function.Param{Name: n, Kind: function.Bool, Default: def}
	}
	return function.Func{
		Name: "file.serialize", Doc: "Keep a file holding dataset (or the pillar value dataset_pillar) serialized as YAML or JSON.",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true}, anyp("dataset", nil),
			anyp("dataset_pillar", nil), anyp("user", nil), anyp("group", nil), anyp("mode", nil), anyp("backup", ""),
			boolp("makedirs", false), boolp("show_changes", true), boolp("create", true), boolp("merge_if_exists", false),
			anyp("encoding", nil), anyp("encoding_errors", "strict"), anyp("serializer", nil), anyp("serializer_opts", nil),
			anyp("deserializer_opts", nil)},
		VarKwargs: true,
		Run:       func(ctx context.Context, in *function.Input) (any, error) { return s.serializeState(ctx, in), nil },
	}
}

func (s *states) serializeState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	test := state.From(ctx).Test
	if name == "" {
		return state.Failed(name, "Must provide name to file.serialize")
	}
	if !in.Bool("create") {
		if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
			return state.Succeeded(name, fmt.Sprintf("File %s is not present and is not set for creation", name), nil)
		}
	}
	formatter := in.ExtraKwargs["formatter"]
	if py.Truth(in.Value("serializer")) && py.Truth(formatter) {
		return state.Failed(name, "Only one of serializer and formatter are allowed")
	}
	kind := "yaml"
	if v := in.Value("serializer"); py.Truth(v) {
		kind = strings.ToLower(py.Str(v))
	} else if py.Truth(formatter) {
		kind = strings.ToLower(py.Str(formatter))
	}
	dataset, pillarKey := in.Value("dataset"), in.Value("dataset_pillar")
	if py.Truth(dataset) && py.Truth(pillarKey) {
		return state.Failed(name, "Only one of 'dataset' and 'dataset_pillar' is permitted")
	}
	if py.Truth(pillarKey) {
		data, err := modules.PillarOf(ctx, s.env)
		if err != nil {
			return state.Failed(name, "Unable to read the pillar: %v", err)
		}
		dataset = pillarGet(data, py.Str(pillarKey))
	}
	if dataset == nil {
		return state.Failed(name, "Neither 'dataset' nor 'dataset_pillar' was defined")
	}
	ser, ok := serializers[kind]
	if !ok {
		return state.Failed(name, "The %s serializer could not be found. It either does not exist or its prerequisites are not installed.", kind)
	}
	opts, err := dictList(in.Value("serializer_opts"))
	if err != nil {
		return state.Failed(name, "serializer_opts: %v", err)
	}
	var existing map[string]any
	if in.Bool("merge_if_exists") {
		if raw, err := os.ReadFile(name); err == nil {
			old, err := ser.load(raw)
			if err != nil {
				return state.Failed(name, "Failed to deserialize existing data: %v", err)
			}
			if old != nil {
				merged := mergeRecurse(old, dataset)
				if equalData(old, merged) {
					return state.Succeeded(name, fmt.Sprintf("The file %s is in the correct state", name), nil)
				}
				existing, _ = old.(map[string]any)
				if _, isMap := merged.(map[string]any); !isMap {
					existing = nil
				}
				dataset = merged
			}
		}
	}
	if enc := in.Value("encoding"); py.Truth(enc) {
		// Salt writes the file in that encoding, and lets YAML keep
		// characters past ASCII as they are.
		if e := strings.ToLower(strings.ReplaceAll(py.Str(enc), "-", "")); e != "utf8" {
			return state.Failed(name, "encoding %s is not supported: brine writes files as UTF-8", py.Str(enc))
		}
		if _, set := opts["allow_unicode"]; !set && kind == "yaml" {
			opts["allow_unicode"] = true
		}
	}
	text, err := ser.dump(dataset, opts)
	if err != nil {
		return state.Failed(name, "Failed to serialize the dataset as %s: %v", kind, err)
	}
	text += "\n"
	r := s.managed(ctx, managedOpts{name: name, contents: text, user: in.Value("user"), group: in.Value("group"),
		mode: in.Value("mode"), backup: in.Value("backup"), makedirs: in.Bool("makedirs"), replace: true, create: true,
		showChanges: in.Bool("show_changes"), contentsNewline: true, delimiter: ":", allowEmpty: true, follow: true,
		verbatim: true})
	if test && (r.Result == nil || *r.Result) {
		// Salt words file.managed's test return its own way.
		if len(r.Changes) > 0 {
			r = state.Pending(name, fmt.Sprintf("Dataset will be serialized and stored into %s", name), r.Changes)
			if !in.Bool("show_changes") {
				r.Changes["diff"] = "<show_changes=False>"
			}
		} else {
			r = state.Succeeded(name, fmt.Sprintf("The file %s is in the correct state", name), nil)
		}
	}
	if existing != nil {
		if r.Changes == nil {
			r.Changes = map[string]any{}
		}
		r.Changes["diff"] = recursiveDiff(existing, dataset.(map[string]any))
	}
	return r
}

// pillarGet is pillar.get's key:sub:key lookup.
func pillarGet(data map[string]any, key string) any {
	var cur any = data
	for _, part := range strings.Split(key, ":") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = m[part]; !ok {
			return nil
		}
	}
	return cur
}

// dictList is Salt's repack_dictlist: a list of one-key mappings (or a
// mapping) as one mapping.
func dictList(v any) (map[string]any, error) {
	switch t := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return maps.Clone(t), nil
	case []any:
		out := map[string]any{}
		for _, item := range t {
			m, ok := item.(map[string]any)
			if !ok || len(m) != 1 {
				return nil, fmt.Errorf("each item must be a mapping of one key, not %s", py.Str(item))
			}
			for k, x := range m {
				out[k] = x
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("a list of mappings is expected, not %s", py.Str(v))
}

// mergeRecurse is Salt's dictupdate.merge_recurse: dataset merged into a
// copy of the file's data, mappings recursively, lists replaced.
func mergeRecurse(old, upd any) any {
	om, ok1 := old.(map[string]any)
	um, ok2 := upd.(map[string]any)
	if !ok1 || !ok2 {
		return upd
	}
	return jinja.DictUpdate(jinja.DeepCopy(om).(map[string]any), um, true, false)
}

// equalData is Python's == on deserialized data: 1 == 1.0, and key order
// does not count.
func equalData(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalData(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalData(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return a == b
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case bool:
		if n {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// noValue is Salt's dictdiffer NONE_VALUE: the side of a key that is not
// there.
const noValue = "<_null_>"

// recursiveDiff is Salt's RecursiveDictDiffer(old, new).diffs: per key
// that differs, {old, new} (a key on one side only has "<_null_>" on the
// other), nested mappings compared key by key.
func recursiveDiff(old, new map[string]any) map[string]any {
	out := map[string]any{}
	for k, nv := range new {
		ov, ok := old[k]
		switch {
		case !ok:
			out[k] = map[string]any{"new": nv, "old": noValue}
		default:
			om, ok1 := ov.(map[string]any)
			nm, ok2 := nv.(map[string]any)
			if ok1 && ok2 {
				if d := recursiveDiff(om, nm); len(d) > 0 {
					out[k] = d
				}
			} else if !equalData(ov, nv) {
				out[k] = map[string]any{"new": nv, "old": ov}
			}
		}
	}
	for k, ov := range old {
		if _, ok := new[k]; !ok {
			out[k] = map[string]any{"new": noValue, "old": ov}
		}
	}
	return out
}

// serializer is one of Salt's serializers: dump writes a data set (without
// the final newline the state adds), load reads a file back.
type serializer struct {
	dump func(v any, opts map[string]any) (string, error)
	load func(raw []byte) (any, error)
}

var serializers = map[string]serializer{
	"yaml": {dump: dumpYAML, load: loadYAML},
	"json": {dump: dumpJSON, load: loadJSON},
}

// dumpYAML is Salt's yaml serializer as file.serialize calls it:
// yaml.dump with default_flow_style False (block style, keys sorted),
// byte for byte as libyaml writes it.
func dumpYAML(v any, opts map[string]any) (string, error) {
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

// dumpJSON is Salt's json serializer with the state's defaults: Python's
// json.dumps(indent=2, separators=(",", ": "), sort_keys=True), non-ASCII
// written as it is.
func dumpJSON(v any, opts map[string]any) (string, error) {
	e := jsonEncoder{indent: "  ", itemSep: ",", keySep: ": "}
	for k, o := range opts {
		switch k {
		case "indent":
			switch n := o.(type) {
			case nil:
				e.indent = ""
				e.compact = true
			case int64:
				e.indent = strings.Repeat(" ", int(n))
			case string:
				e.indent = n
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
			e.itemSep, e.keySep = py.Str(l[0]), py.Str(l[1])
		default:
			return "", fmt.Errorf("the json serializer option %s is not supported", k)
		}
	}
	if e.compact && e.itemSep == "," {
		// json.dumps without indent separates items with ", ".
		e.itemSep = ", "
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
