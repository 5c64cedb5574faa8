package reactor

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/brinehq/brine/config"
)

// Kind is the client a reaction goes through, Salt's `<kind>.<mod.fun>`.
type Kind string

// Reaction kinds. `cmd.*` is Salt's old name for local and compiles to Local.
const (
	Runner Kind = "runner" // a registry function on the master
	Local  Kind = "local"  // a job on minions (tgt)
	Wheel  Kind = "wheel"  // master management (keys, config)
	Caller Kind = "caller" // a masterless minion call
)

// Reaction is one compiled call of a reaction file: what will run for an
// event, with where it came from.
type Reaction struct {
	ID   string `json:"id"`
	File string `json:"file"`
	// Line is the line of the call (the `runner.x.y:` key); of the rendered
	// text when RenderedLine is set (see Error.Rendered).
	Line         int            `json:"line"`
	RenderedLine bool           `json:"rendered_line,omitempty"`
	Kind         Kind           `json:"kind"`
	Fun          string         `json:"fun"`
	Args         []any          `json:"args,omitempty"`
	Kwargs       map[string]any `json:"kwargs,omitempty"`
	// Tgt, TgtType and Ret address a local job (Salt's cmd_async).
	Tgt     any    `json:"tgt,omitempty"`
	TgtType string `json:"tgt_type,omitempty"`
	Ret     string `json:"ret,omitempty"`
	// Extra holds other cmd_async parameters (jid, metadata, timeout, …)
	// of a local reaction.
	Extra map[string]any `json:"extra,omitempty"`
	// Require and Onfail are requisites on other reactions of the same event.
	Require []Ref `json:"require,omitempty"`
	Onfail  []Ref `json:"onfail,omitempty"`
	// Retry overrides the reactor's policy when set (`retry:` in the file);
	// its zero fields are the policy's.
	Retry *Retry `json:"retry,omitempty"`
	// Warnings are ignored parts a user should know about (arg/kwarg next to args).
	Warnings []string `json:"warnings,omitempty"`
}

// Ref names another reaction: `- wheel: accept_minion` (Kind set) or
// `- accept_minion` (any kind).
type Ref struct {
	Kind Kind   `json:"kind,omitempty"`
	ID   string `json:"id"`
}

// String prints the requisite as written in a reaction file.
func (r Ref) String() string {
	if r.Kind == "" {
		return r.ID
	}
	return string(r.Kind) + ": " + r.ID
}

// Call is the reaction as Salt would name it: "runner.test.arg".
func (r *Reaction) Call() string { return string(r.Kind) + "." + r.Fun }

// checker validates a runner call against the function registry.
type checker interface {
	Check(name string, args []any, kwargs map[string]any) error
	Accepts(name, param string) bool
}

// highEntry is one top-level id of a rendered file.
type highEntry struct {
	id   string
	line int
	body ast.Node
}

// parseHigh parses rendered YAML into its top-level ids, in file order. An
// empty document (every Jinja branch false) has no reactions. outs are the
// values the template wrote (nil: none): they are marked where they stand
// as whole values, and written into ids as text.
func parseHigh(file string, text []byte, outs *outputs) ([]highEntry, error) {
	f, err := parser.ParseBytes(text, 0)
	if err != nil {
		return nil, yamlError(file, err)
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			return nil, &Error{Stage: StageYAML, File: file, Line: nodeLine(doc.Body), Err: errors.New("more than one YAML document")}
		}
		body = doc.Body
	}
	if body == nil {
		return nil, nil
	}
	if _, ok := body.(*ast.NullNode); ok {
		return nil, nil
	}
	outs.markWhole(body)
	pairs, ok := config.Pairs(body)
	if !ok {
		return nil, &Error{Stage: StageYAML, File: file, Line: nodeLine(body),
			Err: fmt.Errorf("want a mapping of reaction ids, got %s", body.Type())}
	}
	seen := map[string]int{}
	out := make([]highEntry, 0, len(pairs))
	for _, p := range pairs {
		id, line := outs.expand(config.Key(p.Key), false), nodeLine(p.Key)
		if first, dup := seen[id]; dup {
			return nil, &Error{Stage: StageYAML, File: file, Line: line, ID: id,
				Err: fmt.Errorf("duplicate reaction id (first at line %d)", first)}
		}
		seen[id] = line
		out = append(out, highEntry{id: id, line: line, body: p.Value})
	}
	return out, nil
}

func yamlError(file string, err error) error {
	line, msg := config.ErrorLine(err, 0)
	return &Error{Stage: StageYAML, File: file, Line: line, Err: errors.New(msg)}
}

func nodeLine(n ast.Node) int {
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// compileFile turns a rendered reaction file into reactions. Each bad
// reaction is one error; good reactions of the same file still compile.
// outs are the values the template wrote (nil: none).
func compileFile(file string, text []byte, outs *outputs, funcs checker) ([]*Reaction, []error) {
	high, err := parseHigh(file, text, outs)
	if err != nil {
		return nil, []error{err}
	}
	var out []*Reaction
	var errs []error
	for _, h := range high {
		pairs, ok := config.Pairs(h.body)
		if !ok {
			errs = append(errs, &Error{Stage: StageCompile, File: file, Line: h.line, ID: h.id,
				Err: errors.New("want `<kind>.<module.function>:` followed by a list of arguments")})
			continue
		}
		for _, p := range pairs {
			key, line := config.Key(p.Key), nodeLine(p.Key)
			if strings.HasPrefix(key, "__") { // __sls__, __env__: Salt's bookkeeping
				continue
			}
			if outs.has(key) {
				errs = append(errs, &Error{Stage: StageCompile, File: file, Line: line, ID: h.id,
					Err: fmt.Errorf("the function %q %w (a reaction's function is the file's)", outs.expand(key, true), errFromData)})
				continue
			}
			var items any
			if err := yaml.NodeToValue(p.Value, &items); err != nil {
				errs = append(errs, yamlError(file, err))
				continue
			}
			if items, err = outs.value(items); err != nil {
				errs = append(errs, &Error{Stage: StageCompile, File: file, Line: line, ID: h.id, Err: err})
				continue
			}
			r, err := compileReaction(h.id, key, items, funcs)
			if err != nil {
				errs = append(errs, &Error{Stage: StageCompile, File: file, Line: line, ID: h.id, Err: err})
				continue
			}
			r.File, r.Line = file, line
			out = append(out, r)
		}
	}
	return out, errs
}

// item is one `- key: value` of a reaction's argument list.
type item struct {
	key string
	val any
}

func compileReaction(id, key string, value any, funcs checker) (*Reaction, error) {
	kind, fun, _ := strings.Cut(key, ".")
	var list []any
	switch v := value.(type) {
	case nil:
	case []any:
		list = v
	default:
		return nil, fmt.Errorf("%s: arguments must be a list (`- name: value` items), got %s", key, typeName(value))
	}
	var items []item
	for _, x := range list {
		switch v := x.(type) {
		case string: // Salt's `local: [cmd.run, …]` form names the function in the list
			if fun != "" {
				return nil, fmt.Errorf("%s: unexpected bare item %q (want `- name: value`)", key, v)
			}
			fun = v
		case map[string]any:
			if len(v) != 1 {
				return nil, fmt.Errorf("%s: list item with %d keys, want one `- name: value` per item", key, len(v))
			}
			for k, val := range v {
				items = append(items, item{k, val})
			}
		default:
			return nil, fmt.Errorf("%s: list item %v, want `- name: value`", key, x)
		}
	}
	r := &Reaction{ID: id, Fun: fun}
	switch kind {
	case "runner", "wheel", "caller", "local":
		r.Kind = Kind(kind)
	case "cmd":
		r.Kind = Local
	default:
		return nil, fmt.Errorf("unknown reaction type %q in %q (want runner, local, wheel, caller or cmd)", kind, key)
	}
	if r.Fun == "" || !strings.Contains(r.Fun, ".") {
		return nil, fmt.Errorf("%s: want %s.<module>.<function>", key, kind)
	}
	rest, err := r.takeCommon(items)
	if err != nil {
		return nil, err
	}
	if err := r.bindArgs(rest, funcs); err != nil {
		return nil, err
	}
	if r.Kind == Runner {
		if err := funcs.Check(r.Fun, r.Args, r.Kwargs); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// takeCommon removes what every kind understands: requisites, retry, order.
func (r *Reaction) takeCommon(items []item) ([]item, error) {
	rest := items[:0:0]
	for _, it := range items {
		var err error
		switch it.key {
		case "require":
			r.Require, err = parseRefs(it.val)
		case "onfail":
			r.Onfail, err = parseRefs(it.val)
		case "retry":
			var rt Retry
			rt, err = parseRetry(it.val, Retry{}) // unset fields come from the reactor's policy
			r.Retry = &rt
		case "order":
		default:
			rest = append(rest, it)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.key, err)
		}
	}
	return rest, nil
}

func parseRefs(v any) ([]Ref, error) {
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	var out []Ref
	for _, x := range list {
		switch t := x.(type) {
		case string:
			out = append(out, Ref{ID: t})
		case map[string]any:
			keys := slices.Sorted(maps.Keys(t))
			for _, k := range keys {
				id, ok := t[k].(string)
				if !ok {
					return nil, fmt.Errorf("%s: want a reaction id, got %v", k, t[k])
				}
				kind := Kind(k)
				switch k {
				case "cmd":
					kind = Local
				case "runner", "local", "wheel", "caller":
				case "id":
					kind = ""
				default:
					return nil, fmt.Errorf("unknown reaction type %q (want runner, local, wheel, caller, cmd or id)", k)
				}
				out = append(out, Ref{Kind: kind, ID: id})
			}
		default:
			return nil, fmt.Errorf("want `- <kind>: <id>` items, got %v", x)
		}
	}
	return out, nil
}

// bindArgs reads the arguments in every schema Salt accepts: unified
// `args`, `arg`/`kwarg`, and legacy keyword items.
func (r *Reaction) bindArgs(items []item, funcs checker) error {
	r.Kwargs = map[string]any{}
	var unified, hasArg bool
	for _, it := range items {
		if it.key == "args" {
			unified = true
		}
		if it.key == "arg" || it.key == "kwarg" {
			hasArg = true
		}
	}
	if unified && hasArg {
		r.Warnings = append(r.Warnings, "arg/kwarg are ignored because args is given (as in Salt)")
	}
	nameGiven := false
	for _, it := range items {
		switch {
		case r.Kind == Local && r.takeTarget(it):
		case it.key == "args":
			if err := r.takeUnified(it.val); err != nil {
				return err
			}
		case it.key == "arg":
			if unified {
				continue
			}
			if l, ok := it.val.([]any); ok {
				r.Args = append(r.Args, l...)
			} else {
				r.Args = append(r.Args, it.val)
			}
		case it.key == "kwarg":
			if unified {
				continue
			}
			m, ok := it.val.(map[string]any)
			if !ok && it.val != nil {
				return fmt.Errorf("kwarg: want a mapping, got %s", typeName(it.val))
			}
			for k, v := range m {
				r.Kwargs[k] = v
			}
		case r.Kind == Local:
			if r.Extra == nil {
				r.Extra = map[string]any{}
			}
			r.Extra[it.key] = it.val
		case unified:
			return fmt.Errorf("%q next to args: with the args schema, arguments go in args", it.key)
		case it.key == "name" && r.Kind != Caller:
			// Salt passes name to runners and wheels only when the function
			// declares it (format_call's expected_extra_kws).
			nameGiven = true
			if r.Kind != Runner || funcs.Accepts(r.Fun, "name") {
				r.Kwargs["name"] = it.val
			}
		default:
			r.Kwargs[it.key] = it.val
		}
	}
	// Salt's state compiler sets name to the id when it is not given, and
	// format_call hands it to a function that takes a name.
	if r.Kind == Runner && !unified && !nameGiven && funcs.Accepts(r.Fun, "name") {
		if _, ok := r.Kwargs["name"]; !ok {
			r.Kwargs["name"] = r.ID
		}
	}
	if r.Kind == Local && r.Tgt == nil {
		return errors.New("local reaction needs tgt (the minions to run on)")
	}
	return nil
}

func (r *Reaction) takeTarget(it item) bool {
	switch it.key {
	case "tgt":
		r.Tgt = it.val
	case "tgt_type", "expr_form": // expr_form: the name before Salt 2017.7
		r.TgtType = fmt.Sprint(it.val)
	case "ret":
		r.Ret = fmt.Sprint(it.val)
	default:
		return false
	}
	return true
}

// takeUnified reads `args:`, a list of single-key mappings (Salt's
// "dictlist"); a caller reaction may also list positional values.
func (r *Reaction) takeUnified(v any) error {
	list, ok := v.([]any)
	if !ok {
		if m, isMap := v.(map[string]any); isMap { // tolerated: a plain mapping
			for k, x := range m {
				r.Kwargs[k] = x
			}
			return nil
		}
		return fmt.Errorf("args: incorrect argument format: want a list of `- name: value`, got %s", typeName(v))
	}
	for _, x := range list {
		m, isMap := x.(map[string]any)
		switch {
		case isMap:
			for k, val := range m {
				r.Kwargs[k] = val
			}
		case r.Kind == Caller:
			r.Args = append(r.Args, x)
		default:
			return fmt.Errorf("args: incorrect argument format: item %v is not `name: value` (only caller reactions take positional args)", x)
		}
	}
	return nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case bool:
		return "a boolean"
	}
	return "a number"
}
