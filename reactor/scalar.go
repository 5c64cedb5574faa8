package reactor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
	gonjacfg "github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/tokens"

	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/saltyaml"
)

// Event data must never change the structure of a reaction: a value with a
// newline and `runner.event.send:` in it, written into the YAML by
// `{{ data['v'] }}`, would otherwise add a reaction that fires any tag
// (Salt has that hole; brine must not). So every `{{ … }}` of a reaction
// file writes an opaque token into the text instead of its value, and the
// values go back in after the YAML is parsed, as values: the structure —
// reaction ids, functions, argument names — is the template's alone.
//
// A token that is a whole unquoted scalar becomes a typed value, as YAML
// would have read the text: an integer stays an integer, a list a list, a
// string that reads as a number or a boolean becomes one (Salt's files rely
// on `ttl: {{ data['ttl'] }}` being a number), but a string never becomes a
// mapping or a list. A value the template marked safe (the json and yaml
// filters, `| safe`) may, since the template asked for it. A token inside
// a longer string, or in quotes, is replaced by its text.

// scalarFilter is the filter every output expression is piped through.
const scalarFilter = "__brine_scalar"

// outputsVar is the context variable holding the render's outputs.
const outputsVar = "__brine_outputs"

// rewriteOutputs pipes the value of every `{{ … }}` of src through the
// scalar filter, without moving a line: `{{ a }}` becomes
// `{{ (a) | __brine_scalar }}`, and Jinja's inline conditional
// `{{ a if c else b }}` becomes `{{ (a) | f if c else (b) | f }}`. Raw blocks
// are left alone; a source the lexer rejects is returned as it is, for the
// compiler to report with its own message.
func rewriteOutputs(src string, cfg *gonjacfg.Config) (string, columnMap) {
	var b strings.Builder
	last := 0
	cols := columnMap{}
	shift := map[int]int{} // bytes inserted so far on a line
	put := func(at int, text string) {
		b.WriteString(src[last:at])
		b.WriteString(text)
		last = at
		line := 1 + strings.Count(src[:at], "\n")
		col := at - strings.LastIndex(src[:at], "\n") // 1-based
		cols.add(line, col+shift[line], len(text))
		shift[line] += len(text)
	}
	const wrap = ") | " + scalarFilter + " "
	open, depth, cond := false, 0, false
	for s := tokens.LexAll(src, cfg); !s.End(); s.Next() {
		tok := s.Current()
		switch tok.Type {
		case tokens.Error:
			return src, nil
		case tokens.VariableBegin:
			put(tok.Pos+len(tok.Val), "(")
			open, depth, cond = true, 0, false
		case tokens.LeftParenthesis, tokens.LeftBracket, tokens.LeftBrace:
			depth++
		case tokens.RightParenthesis, tokens.RightBracket, tokens.RightBrace:
			depth--
		case tokens.Name:
			switch {
			case !open || depth != 0:
			case tok.Val == "if" && !cond:
				put(tok.Pos, wrap)
				cond = true
			case tok.Val == "else" && cond:
				put(tok.Pos+len(tok.Val), " (")
				cond = false
			}
		case tokens.VariableEnd:
			if !cond {
				put(tok.Pos, wrap)
			}
			open = false
		}
	}
	if open {
		return src, nil
	}
	b.WriteString(src[last:])
	return b.String(), cols
}

// output is one value a template wrote.
type output struct {
	text  string // as Jinja prints it
	value any    // the value itself
	safe  bool   // marked safe by the template (json, yaml, safe filters)
	// whole is set when the token is a whole unquoted scalar of the YAML.
	whole bool
}

// outputs are the values one render wrote, by token index.
type outputs struct {
	// pre starts every token of this render: brine<nonce>v<index>x is plain
	// YAML in any position, and the random nonce keeps text the template
	// writes itself from passing for a token.
	pre  string
	vals []output
	// encoded are the values the json and yaml filters encoded, by their
	// text: where the text stands as a whole value, the value goes back.
	encoded map[string]any
}

func newOutputs() *outputs { return &outputs{pre: fmt.Sprintf("brine%012xv", rand.Uint64()>>16)} }

// remember records that text is v encoded by a filter of the render e runs.
func remember(e *exec.Evaluator, text string, v any) {
	o := renderOutputs(e)
	if o == nil {
		return
	}
	if o.encoded == nil {
		o.encoded = map[string]any{}
	}
	o.encoded[text] = v
}

// renderOutputs is the outputs of the render e runs (nil outside one).
func renderOutputs(e *exec.Evaluator) *outputs {
	v, _ := e.Environment.Context.Get(outputsVar)
	o, _ := v.(*outputs)
	return o
}

func (o *outputs) token(i int) string { return o.pre + strconv.Itoa(i) + "x" }

// scan reads a token at the start of s: its index and length, or -1.
func (o *outputs) scan(s string) (index, n int) {
	p := o.pre
	if !strings.HasPrefix(s, p) {
		return -1, 0
	}
	digits := 0
	for digits < len(s)-len(p) && s[len(p)+digits] >= '0' && s[len(p)+digits] <= '9' {
		digits++
	}
	end := len(p) + digits
	if digits == 0 || end >= len(s) || s[end] != 'x' {
		return -1, 0
	}
	i, err := strconv.Atoi(s[len(p):end])
	if err != nil || i >= len(o.vals) {
		return -1, 0
	}
	return i, end + 1
}

// index returns the output a token names, or -1 when tok is not exactly
// one token of this render.
func (o *outputs) index(tok string) int {
	if o == nil {
		return -1
	}
	if i, n := o.scan(tok); n == len(tok) {
		return i
	}
	return -1
}

// has reports whether s holds a token of this render.
func (o *outputs) has(s string) bool {
	return o != nil && strings.Contains(s, o.pre)
}

// expand replaces every token in s by its text; display replaces newlines
// in values by `\n`, so that the text keeps the template's lines.
func (o *outputs) expand(s string, display bool) string {
	if !o.has(s) {
		return s
	}
	var b strings.Builder
	p := o.pre
	for {
		at := strings.Index(s, p)
		if at < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:at])
		i, n := o.scan(s[at:])
		if i < 0 {
			b.WriteString(p)
			s = s[at+len(p):]
			continue
		}
		t := o.expand(o.vals[i].text, display)
		if display {
			t = strings.ReplaceAll(t, "\n", `\n`)
		}
		b.WriteString(t)
		s = s[at+n:]
	}
}

// filterScalar records the value of an output expression and writes its
// token.
func filterScalar(e *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	o := renderOutputs(e)
	if o == nil {
		// A template included without context has no event data.
		return in
	}
	o.vals = append(o.vals, output{text: in.PyString(), value: jinja.GoValue(in), safe: in.Safe})
	return exec.AsSafeValue(o.token(len(o.vals) - 1))
}

// markWhole walks the parsed YAML and marks the tokens that are whole
// unquoted scalars.
func (o *outputs) markWhole(n ast.Node) {
	if o == nil || n == nil {
		return
	}
	ast.Walk(visitFunc(func(n ast.Node) {
		s, ok := n.(*ast.StringNode)
		if !ok || s.Token == nil || s.Token.Type != token.StringType {
			return
		}
		if i := o.index(s.Value); i >= 0 {
			o.vals[i].whole = true
		}
	}), n)
}

type visitFunc func(ast.Node)

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	f(n)
	return f
}

// errFromData reports a token where the structure of a reaction is decided.
var errFromData = errors.New("comes from event data")

// value puts the outputs back into v, a value decoded from the YAML (see
// the comment at the top). Keys of mappings may not hold tokens: argument
// names are the template's.
func (o *outputs) value(v any) (any, error) {
	if o == nil {
		return v, nil
	}
	switch t := v.(type) {
	case string:
		if i := o.index(t); i >= 0 && o.vals[i].whole {
			return o.typed(o.vals[i]), nil
		}
		return o.expand(t, false), nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			var err error
			if out[i], err = o.value(x); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if o.has(k) {
				return nil, fmt.Errorf("the name %q %w (argument names are the reaction file's)", o.expand(k, true), errFromData)
			}
			var err error
			if out[k], err = o.value(x); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

// typed is the value of a whole unquoted token, with the Go types the
// YAML decoder gives (as the value had it gone through the text).
func (o *outputs) typed(out output) any {
	switch v := out.value.(type) {
	case string:
		if enc, ok := o.encoded[v]; ok && out.safe {
			// `{{ x | json }}` as a whole value: x itself.
			return yamlTypes(enc)
		}
		if out.safe && !o.has(v) {
			// The template asked for YAML here (`| safe`).
			if y, err := saltyaml.Unmarshal([]byte(v)); err == nil {
				return saltyaml.Plain(y)
			}
			return v
		}
		return scalar(v)
	case map[string]any, []any:
		return yamlTypes(v)
	}
	return scalar(out.text)
}

// yamlTypes returns v with the Go types the YAML decoder gives: uint64 for
// an integer that is not negative, int64 for one that is, float64,
// map[string]any and []any.
func yamlTypes(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = yamlTypes(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = yamlTypes(x)
		}
		return out
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return yamlTypes(i)
		}
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t.String()
	case int:
		return yamlTypes(int64(t))
	case int32:
		return yamlTypes(int64(t))
	case int64:
		if t >= 0 {
			return uint64(t)
		}
		return t
	case uint:
		return uint64(t)
	case uint32:
		return uint64(t)
	case float32:
		return float64(t)
	}
	return v
}

// plainScalar matches text YAML reads as one plain scalar: no newline, no
// indicator at the start, no `: ` or ` #` inside.
var plainScalar = regexp.MustCompile(`^[^-?:,\[\]{}#&*!|>'"%@` + "`" + `\s][^\n]*$`)

// scalar reads s as YAML reads a plain scalar (42, 1.5, true, null), and
// keeps it a string otherwise: never a mapping or a list.
func scalar(s string) any {
	switch s {
	case "":
		return nil
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	case "~", "null", "Null", "NULL":
		return nil
	}
	if !strings.ContainsAny(s[:1], "-+.0123456789") {
		return s // no number starts otherwise: most values (names, words) end here
	}
	if !plainScalar.MatchString(s) || strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return s
	}
	// As Salt's loader reads it: YAML 1.1 (yes is True, 0644 is 644).
	doc, err := saltyaml.Unmarshal([]byte("v: " + s))
	if err != nil {
		return s
	}
	m, _ := saltyaml.Plain(doc).(map[string]any)
	switch v := m["v"].(type) {
	case map[string]any, []any:
		return s
	default:
		return v
	}
}
