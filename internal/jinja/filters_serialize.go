package jinja

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/brinehq/brine/internal/py"
)

// The filters of Salt's SerializerExtension and its tojson: Python's
// json.dumps, pprint and yaml.safe_dump as Salt calls them.

// jsonOptions are json.dumps's: sort_keys, ensure_ascii, indent.
type jsonOptions struct {
	sortKeys, ensureASCII, pretty bool
	indent                        int
}

// pyJSON is Python's json.dumps(v) (py.JSONDumps) over a template's
// values: ", " and ": " between items, with ensure_ascii non-ASCII as
// \uXXXX; with indent, one item a line; a tuple is a list.
func pyJSON(v any, o jsonOptions) (string, error) {
	po := py.JSONOptions{SortKeys: o.sortKeys, EnsureASCII: o.ensureASCII, Other: jsonOther, TypeName: pyTypeName}
	if o.pretty {
		ind := strings.Repeat(" ", o.indent)
		po.Indent = &ind
	}
	return py.JSONDumps(v, po)
}

// jsonOther is what json.dumps makes of a template's own types.
func jsonOther(v any) (any, error) {
	switch t := v.(type) {
	case pyTuple:
		return []any(t), nil
	case pyByteString:
		return nil, pyErr("Object of type bytes is not JSON serializable")
	case pyUndefined:
		return nil, pyErr("Object of type StrictUndefined is not JSON serializable")
	}
	return nil, pyErr("Object of type %s is not JSON serializable", pyTypeName(v))
}

// jsonIndent reads json's indent argument: None, or a number of spaces.
func jsonIndent(v any) (int, bool) {
	if v == nil {
		return 0, false
	}
	n, ok := asInt(v)
	return n, ok
}

// filterJSONSalt is Salt's json filter: salt.utils.json.dumps
// (ensure_ascii off) with sort_keys=True, indent=None, safe.
func filterJSONSalt(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() && !in.IsUndefined() {
		return in
	}
	args, err := bind("json", va, []param{opt("sort_keys", true), opt("indent", nil)})
	if err != nil {
		return exec.AsValue(err)
	}
	v, err := goOrdered(in)
	if err != nil {
		return exec.AsValue(err)
	}
	n, pretty := jsonIndent(args[1])
	s, err := pyJSON(v, jsonOptions{sortKeys: truthy(args[0]), indent: n, pretty: pretty})
	if err != nil {
		return exec.AsValue(err)
	}
	return exec.AsSafeValue(s)
}

// filterToJSONSalt is Salt's tojson(val, indent=None, **options):
// salt.utils.json.dumps with ensure_ascii on unless an option says
// otherwise, the dict's order kept (sort_keys off unless given), and <,
// >, & and ' escaped as \u003c…, safe for HTML.
func filterToJSONSalt(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() && !in.IsUndefined() {
		return in
	}
	o := jsonOptions{ensureASCII: true}
	indent := va.GetKeywordArgument("indent", nil)
	if len(va.Args) > 0 {
		indent = va.Args[0]
	}
	if len(va.Args) > 1 {
		return exec.AsValue(fmt.Errorf("tojson() takes from 1 to 2 positional arguments but %d were given", len(va.Args)+1))
	}
	for k, v := range va.KwArgs {
		switch k {
		case "indent":
		case "ensure_ascii":
			o.ensureASCII = v.IsTrue()
		case "sort_keys":
			o.sortKeys = v.IsTrue()
		default:
			return exec.AsValue(fmt.Errorf("dumps() got an unexpected keyword argument '%s'", k))
		}
	}
	o.indent, o.pretty = jsonIndent(GoValue(indent))
	v, err := goOrdered(in)
	if err != nil {
		return exec.AsValue(err)
	}
	s, err := pyJSON(v, o)
	if err != nil {
		return exec.AsValue(err)
	}
	s = strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "'", `\u0027`).Replace(s)
	return exec.AsSafeValue(s)
}

// filterPython is Salt's python filter: pprint.pformat of the value (a
// dict's keys sorted, Undefined as such).
func filterPython(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() && !in.IsUndefined() {
		return in
	}
	if _, err := bind("python", va, nil); err != nil {
		return exec.AsValue(err)
	}
	v, err := goOrdered(in)
	if err != nil {
		return exec.AsValue(err)
	}
	return exec.AsSafeValue(pyRepr(sortedMaps(v)))
}

// filterDictToSLSYAMLParams is Salt's dict_to_sls_yaml_params: each key
// a one-item mapping of a list, in the dict's order, in block style (or
// flow_style=True), as a state's arguments.
func filterDictToSLSYAMLParams(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	args, err := bind("dict_to_sls_yaml_params", va, []param{opt("flow_style", false)})
	if err != nil {
		return exec.AsValue(err)
	}
	v, err := goOrdered(in)
	if err != nil {
		return exec.AsValue(err)
	}
	m, ok := v.(yaml.MapSlice)
	if !ok {
		return exec.AsValue(fmt.Errorf("'%s' object has no attribute 'items'", pyTypeName(v)))
	}
	list := make([]any, 0, len(m))
	for _, it := range m {
		list = append(list, yaml.MapSlice{it})
	}
	s, err := pyYAMLDump(list, truthy(args[0]))
	if err != nil {
		return exec.AsValue(err)
	}
	return exec.AsSafeValue(s)
}

// filterLoadText is Salt's load_text: the text itself.
func filterLoadText(in any, _ []any) (any, error) { return jinjaStr(in), nil }

// filterXML is Salt's xml filter: a dictionary (or list of pairs) as an
// XML document, scalars as text, a dictionary's scalars as attributes.
func filterXML(in any, _ []any) (any, error) {
	items, err := xmlItems(in)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" ?>\n")
	if len(items) == 0 {
		return nil, pyErr("Value is not a dict or list. Cannot render as XML")
	}
	// ElementTree's root is the last top-level element made.
	var root *xmlNode
	for _, it := range items {
		root = xmlBuild(it.tag, it.val, nil)
	}
	if root != nil {
		root.write(&b, 0)
	}
	return b.String(), nil
}

type xmlPair struct {
	tag string
	val any
}

type xmlNode struct {
	tag      string
	attrs    [][2]string
	text     string
	children []*xmlNode
}

func xmlItems(v any) ([]xmlPair, error) {
	switch t := v.(type) {
	case map[string]any:
		out := make([]xmlPair, 0, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			out = append(out, xmlPair{k, t[k]})
		}
		return out, nil
	case []any:
		if len(t) > 0 {
			if _, ok := t[0].(string); ok {
				return nil, pyErr("Value is not a dict or list. Cannot render as XML")
			}
		}
		return nil, nil
	}
	return nil, pyErr("Value is not a dict or list. Cannot render as XML")
}

func xmlBuild(tag string, val any, parent *xmlNode) *xmlNode {
	if l, ok := val.([]any); ok {
		var last *xmlNode
		for _, x := range l {
			last = xmlBuild(tag, x, parent)
		}
		return last
	}
	n := &xmlNode{tag: tag}
	if parent != nil {
		parent.children = append(parent.children, n)
	}
	switch t := val.(type) {
	case string, int, bool, float64:
		n.text = jinjaStr(t)
		return n
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			switch t[k].(type) {
			case map[string]any, []any:
				xmlBuild(k, t[k], n)
			default:
				n.attrs = append(n.attrs, [2]string{k, jinjaStr(t[k])})
			}
		}
	}
	return n
}

func xmlEscape(s string, attr bool) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	s = r.Replace(s)
	if attr {
		s = strings.NewReplacer(`"`, "&quot;", "\n", "&#10;", "\t", "&#9;", "\r", "&#13;").Replace(s)
	}
	return s
}

// write is minidom's toprettyxml(indent=" ").
func (n *xmlNode) write(b *strings.Builder, depth int) {
	pad := strings.Repeat(" ", depth)
	b.WriteString(pad + "<" + n.tag)
	sort.SliceStable(n.attrs, func(i, j int) bool { return false })
	for _, a := range n.attrs {
		b.WriteString(" " + a[0] + `="` + xmlEscape(a[1], true) + `"`)
	}
	switch {
	case n.text == "" && len(n.children) == 0:
		b.WriteString("/>\n")
	case len(n.children) == 0:
		b.WriteString(">" + xmlEscape(n.text, false) + "</" + n.tag + ">\n")
	default:
		b.WriteString(">\n")
		if n.text != "" {
			b.WriteString(pad + " " + xmlEscape(n.text, false) + "\n")
		}
		for _, c := range n.children {
			c.write(b, depth+1)
		}
		b.WriteString(pad + "</" + n.tag + ">\n")
	}
}
