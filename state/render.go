package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/nikolalohinski/gonja/v2/builtins"
	gonjacfg "github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/parser"

	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/saltyaml"
	"github.com/brinehq/brine/internal/serializers"
)

// ErrNotFound is how a Source says a file is in none of its roots.
var ErrNotFound = errors.New("not found")

// Source is where SLS files, top files and the templates they import come
// from: the master's file_roots, read through the master's file server on
// an agent and directly on the master.
type Source interface {
	// Read returns the file salt://name of saltenv; a file that does not
	// exist is an error wrapping ErrNotFound.
	Read(ctx context.Context, saltenv, name string) ([]byte, error)
	// Envs lists the environments, for the top files.
	Envs(ctx context.Context) ([]string, error)
}

// memo is a Source that reads each file once per state run: a formula
// imports its map.jinja from every SLS, and each read is a round trip to
// the master.
type memo struct {
	Source
	mu    sync.Mutex
	files map[[2]string]memoFile
}

type memoFile struct {
	b   []byte
	err error
}

func newMemo(src Source) *memo {
	if m, ok := src.(*memo); ok {
		return m
	}
	return &memo{Source: src, files: map[[2]string]memoFile{}}
}

func (m *memo) Read(ctx context.Context, saltenv, name string) ([]byte, error) {
	k := [2]string{saltenv, name}
	m.mu.Lock()
	f, ok := m.files[k]
	m.mu.Unlock()
	if !ok {
		f.b, f.err = m.Source.Read(ctx, saltenv, name)
		m.mu.Lock()
		m.files[k] = f
		m.mu.Unlock()
	}
	return f.b, f.err
}

// RenderError is a template or YAML error in a file: the file, its line
// when known, and the SLS that included it.
type RenderError struct {
	File string
	Line int
	// Via says how the file was reached: "included from SLS x" or
	// "imported by x.sls" ("" for a file asked for).
	Via string
	Err error
}

func (e *RenderError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Via != "" {
		loc += " (" + e.Via + ")"
	}
	return "Rendering SLS " + loc + " failed: " + e.Err.Error()
}

func (e *RenderError) Unwrap() error { return e.Err }

// Renderer renders templates and SLS files with Salt's Jinja: its
// filters, Python's methods, `salt`, and the import_yaml/import_json/
// import_text tags. It is safe for concurrent use.
type Renderer struct {
	env *exec.Environment
	cfg *gonjacfg.Config
}

// NewRenderer returns a Renderer.
func NewRenderer() *Renderer {
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{})
	filters.Update(builtins.Filters)
	for name, f := range jinja.Filters() {
		// Replace only swaps a filter gonja has (tojson, unique);
		// Register adds Salt's own.
		if filters.Exists(name) {
			_ = filters.Replace(name, f)
		} else {
			_ = filters.Register(name, f)
		}
	}
	// Salt's Jinja options are Jinja's defaults (no trim_blocks,
	// no lstrip_blocks), and so are gonja's.
	cfg := gonjacfg.New()
	// Salt's environment is StrictUndefined: a missing pillar key or a
	// misspelt name fails the render, naming it, rather than writing "".
	cfg.StrictUndefined = true
	return &Renderer{
		env: &exec.Environment{
			Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables).Update(jinja.Globals()),
			Filters:           filters,
			Tests:             jinja.Tests(),
			ControlStructures: controlStructures(),
			Methods:           jinja.Methods(),
		},
		cfg: cfg,
	}
}

// importTag is Salt's serializer tags: {% import_yaml "x.yaml" as x %},
// the path any expression (tpldir ~ '/defaults.yaml'), rewritten into a
// call of the same name, on the same line.
var importTag = regexp.MustCompile(`(?s)\{%(-?)\s*import_(yaml|json|text)\s+(.+?)\s+as\s+(\w+)(?:\s+with(?:out)?\s+context)?\s*(-?)%\}`)

// loadTag is Salt's {% load_yaml as x %}…{% endload %} blocks (brine
// also takes endload_yaml, endload_json, endload_text).
var (
	loadOpen  = regexp.MustCompile(`\{%(-?)\s*load_(yaml|json|text)\s+as\s+(\w+)\s*(-?)%\}`)
	loadClose = regexp.MustCompile(`\{%(-?)\s*endload(?:_(?:yaml|json|text))?\s*(-?)%\}`)
	loadTag   = regexp.MustCompile(loadOpen.String() + `|` + loadClose.String())
)

// rewriteTags rewrites the import and load tags of src, the text of a
// file in directory dir: an import names dir, so that "./x" is found
// beside the file holding the import (map.jinja's './defaults.yaml'),
// whichever SLS imported that file, as Salt's loader finds it.
func rewriteTags(src, dir string) string {
	src = importTag.ReplaceAllString(src, `{%$1 set $4 = __import_$2($3, `+jinjaString(dir)+`) $5%}`)
	if !strings.Contains(src, "load_") {
		return src
	}
	// Blocks may nest: each endload closes the innermost open one.
	var open []string
	return loadTag.ReplaceAllStringFunc(src, func(m string) string {
		if g := loadOpen.FindStringSubmatch(m); g != nil {
			open = append(open, g[3]+"|"+g[2])
			return "{%" + g[1] + " set " + g[3] + " %}"
		}
		g := loadClose.FindStringSubmatch(m)
		if len(open) == 0 {
			return m
		}
		name, kind, _ := strings.Cut(open[len(open)-1], "|")
		open = open[:len(open)-1]
		if kind == "text" {
			return "{%" + g[1] + " endset " + g[2] + "%}"
		}
		return "{%" + g[1] + " endset %}{% set " + name + " = " + name + "|load_" + kind + " " + g[2] + "%}"
	})
}

// Jinja renders text (the file name of saltenv) with vars; names it
// imports are found in src, relative to name's directory when they start
// with "./" or "../", else from the environment's root.
//
// As Salt's render_jinja_tmpl, it ends the output with a newline when the
// template ends with one (Jinja itself drops it): a templated file ends as
// its source does.
func (r *Renderer) Jinja(ctx context.Context, src Source, saltenv, name string, text []byte, vars map[string]any) ([]byte, error) {
	out, err := r.jinja(ctx, src, saltenv, name, text, vars)
	if err == nil && bytes.HasSuffix(text, []byte("\n")) {
		out = append(out, '\n')
	}
	return out, err
}

// jinja renders as Jinja does, for Jinja and for the templates a template
// imports (import_text gives an imported file's text without its final
// newline, as Salt's does).
func (r *Renderer) jinja(ctx context.Context, src Source, saltenv, name string, text []byte, vars map[string]any) (out []byte, err error) {
	// gonja panics on some templates (a division by zero): a template
	// is the user's input, and its failure an error, never a crash.
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, &RenderError{File: name, Err: fmt.Errorf("the template failed: %v", p)}
		}
	}()
	l := &loader{ctx: ctx, src: src, saltenv: saltenv, root: name, text: rewriteTags(string(text), path.Dir(name)), dir: path.Dir(name)}
	tpl, err := exec.NewTemplate(name, r.cfg, l, r.env)
	if err != nil {
		return nil, &RenderError{File: name, Line: syntaxLine(err), Err: cleanParseError(err)}
	}
	// An error in a template it imports is that file's, at its line, by
	// way of this one.
	all := make(map[string]any, len(vars)+3)
	for k, v := range vars {
		all[k] = v
	}
	for _, kind := range []string{"yaml", "json", "text"} {
		all["__import_"+kind] = r.importer(ctx, l, kind, vars)
	}
	out, err = tpl.ExecuteToBytes(exec.NewContext(all))
	if err != nil {
		return nil, renderError(name, err)
	}
	return out, nil
}

// renderError is err, from executing the template name, as the file and
// line that failed and what was wrong in Jinja's words: the engine's
// TemplateError says it (what it says of the statements it went through
// is not the user's; a macro's name is, and is kept). A file other than
// name (a macro's body written in an imported file, a file name imports)
// says how name reached it.
func renderError(name string, err error) *RenderError {
	if inner, ok := errors.AsType[*RenderError](err); ok {
		e := *inner
		if e.File != name && e.Via == "" {
			e.Via = "imported by " + name
		}
		return &e
	}
	te, ok := errors.AsType[*exec.TemplateError](err)
	if !ok || te.Message == "" {
		return &RenderError{File: name, Line: execLine(err.Error()), Err: cleanExecError(err)}
	}
	e := &RenderError{File: name, Line: te.Line, Err: cleanExecError(errors.New(te.Message))}
	if te.File != "" && te.File != name {
		e.File, e.Via = te.File, "imported by "+name
	}
	if te.Macro != "" {
		e.Via = joinVia("in macro '"+te.Macro+"'", e.Via)
	}
	return e
}

// joinVia is two steps of the way to a file, the inner first.
func joinVia(inner, outer string) string {
	if inner == "" || outer == "" {
		return inner + outer
	}
	return inner + ", " + outer
}

// importer is import_yaml/import_json/import_text: the file, rendered
// with Jinja, then loaded.
func (r *Renderer) importer(ctx context.Context, l *loader, kind string, vars map[string]any) func(string, string) (any, error) {
	return func(name, dir string) (any, error) {
		from := *l
		from.dir = dir
		full, err := from.Resolve(name)
		if err != nil {
			return nil, err
		}
		b, err := l.src.Read(ctx, l.saltenv, full)
		if err != nil {
			return nil, fmt.Errorf("import_%s %q: %w", kind, name, err)
		}
		out, err := r.jinja(ctx, l.src, l.saltenv, full, b, vars)
		if err != nil {
			return nil, err
		}
		if kind == "text" {
			return string(out), nil
		}
		v, err := decodeData(out, kind == "json")
		if err != nil {
			// the imported file's error, at its line
			e := &RenderError{File: full, Err: err}
			if se, ok := errors.AsType[*saltyaml.Error](err); ok {
				e.Line, e.Err = se.Line, fmt.Errorf("%s: %s", strings.ToUpper(kind), se.Msg)
			} else if je, ok := errors.AsType[*json.SyntaxError](err); ok && je.Offset <= int64(len(out)) {
				e.Line = 1 + bytes.Count(out[:je.Offset], []byte("\n"))
			}
			return nil, e
		}
		return v, nil
	}
}

// loader reads what a template imports, includes or extends from the
// Source, in the template's environment.
type loader struct {
	ctx     context.Context
	src     Source
	saltenv string
	root    string // the template rendered, whose text is given
	text    string
	dir     string // where "./" names start
}

var _ loaders.Loader = (*loader)(nil)

func (l *loader) Resolve(name string) (string, error) {
	if name == l.root {
		return name, nil
	}
	name = strings.TrimPrefix(name, "salt://")
	if strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../") {
		name = path.Join(l.dir, name)
	}
	name = path.Clean(strings.TrimPrefix(name, "/"))
	if name == ".." || strings.HasPrefix(name, "../") {
		return "", fmt.Errorf("template %q is outside the file roots", name)
	}
	return name, nil
}

func (l *loader) Read(name string) (io.Reader, error) {
	full, err := l.Resolve(name)
	if err != nil {
		return nil, err
	}
	if full == l.root {
		return strings.NewReader(l.text), nil
	}
	b, err := l.src.Read(l.ctx, l.saltenv, full)
	if err != nil {
		return nil, fmt.Errorf("template %q in saltenv %q: %w", full, l.saltenv, err)
	}
	return strings.NewReader(rewriteTags(string(b), path.Dir(full))), nil
}

func (l *loader) Inherit(from string) (loaders.Loader, error) {
	full, err := l.Resolve(from)
	if err != nil {
		return nil, err
	}
	sub := *l
	sub.dir = path.Dir(full)
	return &sub, nil
}

func syntaxLine(err error) int {
	if se, ok := errors.AsType[*parser.SyntaxError](err); ok {
		return se.Line
	}
	return execLine(err.Error())
}

var (
	lineRe     = regexp.MustCompile(`(?:\bat )?[Ll]ine[ =](\d+)`)
	wrapperRe  = regexp.MustCompile(`(?:unable to execute template|failed to reader? template '[^']*'|Unable to render expression|unable to evaluate filter|Unable to execute controlStructure(?: at)?\s*:?\s*\w+ControlStructure\([^)]*\)|invalid call to (?:filter|function) '[^']*')\s*:?\s*`)
	spacesRe   = regexp.MustCompile(`\s+`)
	emptyColon = regexp.MustCompile(`(:\s*)+:`)
)

// execLine finds the line of a runtime error in gonja's message, the
// innermost token's.
func execLine(msg string) int {
	line := 0
	if toks := jinja.ErrorTokens(msg); len(toks) > 0 {
		line = toks[len(toks)-1].Line
	}
	if line == 0 {
		if m := lineRe.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
	}
	return line
}

// cleanParseError drops gonja's wrapper, which quotes the whole source.
func cleanParseError(err error) error {
	if se, ok := errors.AsType[*parser.SyntaxError](err); ok {
		return errors.New(se.Message)
	}
	return cleanExecError(err)
}

// cleanExecError says a runtime error without gonja's syntax-tree prints.
func cleanExecError(err error) error {
	s := jinja.StripNodes(err.Error())
	s = wrapperRe.ReplaceAllString(s, "")
	s = lineRe.ReplaceAllString(s, "")
	s = emptyColon.ReplaceAllString(s, ":")
	s = strings.Trim(spacesRe.ReplaceAllString(s, " "), " :")
	return errors.New(s)
}

// yamlLine reads the line goccy puts first in its errors: "[3:5] …".
var yamlLine = regexp.MustCompile(`^\[(\d+):(\d+)\]\s*`)

// decodeData decodes YAML (or JSON) text into plain values, maps keeping
// no order.
func decodeData(b []byte, asJSON bool) (any, error) {
	if asJSON {
		// Python's json.loads, not YAML's reading of JSON: 1e3 is the
		// float 1000.0 (YAML 1.1 reads the text "1e3"), "\/" is "/".
		ser, _ := serializers.Get("json")
		v, err := ser.LoadOrdered(b)
		if err != nil {
			return nil, fmt.Errorf("JSON: %w", err)
		}
		return jinja.Ordered(v), nil
	}
	v, err := saltyaml.Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("YAML: %w", err)
	}
	return jinja.Ordered(v), nil
}

// Pipe is a renderer pipeline (Salt's `#!jinja|yaml`).
type Pipe []string

// DefaultPipe is Salt's default renderer, jinja|yaml.
var DefaultPipe = Pipe{"jinja", "yaml"}

// pipeOf reads a file's shebang line; without one the pipe is Salt's
// default. Renderers brine does not have are refused, naming them.
func pipeOf(name string, text []byte) (Pipe, []byte, error) {
	if !bytes.HasPrefix(text, []byte("#!")) {
		return DefaultPipe, text, nil
	}
	line, rest, _ := bytes.Cut(text, []byte("\n"))
	var pipe Pipe
	for _, r := range strings.Split(strings.TrimSpace(string(line[2:])), "|") {
		r = strings.TrimSpace(r)
		if i := strings.IndexAny(r, " \t"); i >= 0 {
			r = r[:i] // renderer options, such as jinja's: not used
		}
		switch r {
		case "jinja", "yaml", "json", "text":
			pipe = append(pipe, r)
		case "gpg":
			return nil, nil, &RenderError{File: name, Line: 1, Err: errors.New(
				"the gpg renderer is not available: brine does not decrypt GPG blocks in SLS files; keep secrets in pillar, which only the agent it is meant for receives")}
		default:
			return nil, nil, &RenderError{File: name, Line: 1, Err: fmt.Errorf(
				"renderer %q is not available (brine renders jinja, yaml, json and text)", r)}
		}
	}
	// The shebang line stays, as an empty line, so that line numbers
	// hold.
	return pipe, append([]byte("\n"), rest...), nil
}

// RenderSLS renders an SLS file's text through its pipe into ordered
// data: the top-level mapping keeps its keys' order, as Salt's ordered
// YAML loader does, because state order follows it.
func (r *Renderer) RenderSLS(ctx context.Context, src Source, saltenv, name string, text []byte, vars map[string]any) (yaml.MapSlice, error) {
	pipe, text, err := pipeOf(name, text)
	if err != nil {
		return nil, err
	}
	var data any = text
	for _, step := range pipe {
		// An empty render is text still: an SLS with no states, as in
		// Salt (not a renderer's error).
		b, isText := data.([]byte)
		switch step {
		case "jinja":
			if !isText {
				return nil, &RenderError{File: name, Err: errors.New("jinja must come before yaml/json in the renderer pipe")}
			}
			out, err := r.Jinja(ctx, src, saltenv, name, b, vars)
			if err != nil {
				return nil, err
			}
			data = out
		case "yaml", "json":
			if !isText {
				return nil, &RenderError{File: name, Err: fmt.Errorf("%s given data that is not text in the renderer pipe", step)}
			}
			var v yaml.MapSlice
			if len(bytes.TrimSpace(b)) == 0 {
				data = v
				continue
			}
			// As Salt reads it: YAML 1.1 scalars, a key given twice an
			// error (internal/saltyaml).
			doc, err := saltyaml.Unmarshal(b)
			if err != nil {
				return nil, yamlError(name, b, err)
			}
			switch d := doc.(type) {
			case yaml.MapSlice:
				v = d
			case nil:
			default:
				return nil, &RenderError{File: name, Err: errors.New("YAML: the file must be a YAML dictionary (id: {state.function: [arguments]})")}
			}
			data = v
		case "text":
			data = yaml.MapSlice{}
		}
	}
	switch v := data.(type) {
	case yaml.MapSlice:
		return v, nil
	case []byte:
		if len(bytes.TrimSpace(v)) == 0 {
			return nil, nil
		}
		return nil, &RenderError{File: name, Err: errors.New("the renderer pipe gave text, not data: end it with yaml or json")}
	}
	return nil, &RenderError{File: name, Err: errors.New("SLS did not render to a dictionary")}
}

// yamlError names the file and line of a YAML error.
func yamlError(name string, b []byte, err error) error {
	msg := err.Error()
	line := 0
	if se, ok := errors.AsType[*saltyaml.Error](err); ok {
		line, msg = se.Line, se.Msg
	} else if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	msg, _, _ = strings.Cut(msg, "\n")
	if strings.Contains(msg, "cannot unmarshal") || strings.Contains(msg, "MapSlice") {
		msg = "the file must be a YAML dictionary (id: {state.function: [arguments]})"
	}
	e := &RenderError{File: name, Line: line, Err: errors.New("YAML: " + msg)}
	if line > 0 {
		lines := strings.Split(string(b), "\n")
		if line <= len(lines) {
			e.Err = fmt.Errorf("YAML: %s (rendered line %d: %q)", msg, line, strings.TrimSpace(lines[line-1]))
		}
	}
	return e
}

// jinjaString is s as a Jinja string literal.
func jinjaString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
