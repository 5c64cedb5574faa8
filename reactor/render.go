package reactor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/nikolalohinski/gonja/v2/builtins"
	gonjacfg "github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"

	"github.com/brinehq/brine/internal/jinja"
)

// renderer renders reaction files with Jinja (gonja). Compiled templates are
// cached by path and recompiled when the file's size or modification time
// changes, so edits are live (as in Salt) without parsing on every event.
type renderer struct {
	env *exec.Environment
	cfg *gonjacfg.Config

	mu    sync.RWMutex
	cache map[string]*compiled
	roots map[string][]string // file_roots, where included templates are found
}

type compiled struct {
	tpl   *exec.Template
	cols  columnMap // where the output rewrite inserted text, for error columns
	lines int       // lines of the source
	// usesSalt is false when the source never names `salt`: the look-up
	// object need not be built for it.
	usesSalt bool
	mtime    time.Time
	size     int64
}

func newRenderer() *renderer {
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{})
	filters.Update(builtins.Filters)
	// Salt's own filters that reaction files use.
	_ = filters.Register("json", filterJSON)
	_ = filters.Register("yaml", filterYAML)
	_ = filters.Register(scalarFilter, filterScalar)
	return &renderer{
		env: &exec.Environment{
			Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables),
			Filters:           filters,
			Tests:             builtins.Tests,
			ControlStructures: exec.NewControlStructureSet(jinja.Tags()).Update(builtins.ControlStructures),
			Methods:           jinja.Methods(),
		},
		cfg:   strictConfig(),
		cache: map[string]*compiled{},
		roots: map[string][]string{},
	}
}

// setRoots sets file_roots (on a reload): templates compile again, since
// what they may include changed.
func (r *renderer) setRoots(roots map[string][]string) {
	r.mu.Lock()
	r.roots = roots
	r.cache = map[string]*compiled{}
	r.mu.Unlock()
}

// template returns the compiled template for path, compiling it when it is
// new or changed on disk.
func (r *renderer) template(path string) (*compiled, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Stage: StageMapping, File: path, Err: ErrFileMissing}
		}
		return nil, &Error{Stage: StageMapping, File: path, Err: err}
	}
	r.mu.RLock()
	c := r.cache[path]
	r.mu.RUnlock()
	if c != nil && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
		return c, nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Stage: StageMapping, File: path, Err: err}
	}
	tpl, cols, err := r.compile(path, src)
	if err != nil {
		return nil, err
	}
	c = &compiled{tpl: tpl, cols: cols, lines: lineCount(src), usesSalt: bytes.Contains(src, []byte("salt")),
		mtime: fi.ModTime(), size: fi.Size()}
	r.mu.Lock()
	r.cache[path] = c
	r.mu.Unlock()
	return c, nil
}

func (r *renderer) compile(path string, src []byte) (*exec.Template, columnMap, error) {
	r.mu.RLock()
	roots := r.roots
	r.mu.RUnlock()
	rewritten, cols := rewriteOutputs(string(src), r.cfg)
	loader := newTemplateLoader(path, []byte(rewritten), roots, r.cfg)
	tpl, err := exec.NewTemplate(path, r.cfg, loader, r.env)
	if err != nil {
		return nil, nil, &Error{Stage: StageRender, File: path, Line: r.syntaxLine(err, string(src)), Err: cleanParseError(err)}
	}
	return tpl, cols, nil
}

// syntaxLine finds the line of a Jinja syntax error. The parser reports it,
// except for lexer errors (an unbalanced delimiter), whose position we get
// by lexing again.
func (r *renderer) syntaxLine(err error, src string) int {
	if se, ok := errors.AsType[*parser.SyntaxError](err); ok && se.Line > 0 {
		return se.Line
	}
	for s := tokens.LexAll(src, r.cfg); ; s.Next() {
		if tok := s.Current(); tok.Type == tokens.Error {
			return 1 + strings.Count(src[:min(tok.Pos, len(src))], "\n")
		}
		if s.End() {
			return 0
		}
	}
}

// cleanParseError drops gonja's wrapper, which quotes the whole source.
func cleanParseError(err error) error {
	if inner := errors.Unwrap(err); inner != nil {
		if se, ok := inner.(*parser.SyntaxError); ok {
			return errors.New(se.Message)
		}
		return inner
	}
	return err
}

var renderLine = regexp.MustCompile(`at line (\d+)`)

// render executes the template for path with the Jinja context: tag,
// data and, if the file uses it, salt(). The output holds a token where
// each `{{ … }}` wrote its value (scalar.go); outs has the values.
// sameLines reports whether the output has as many lines as the source:
// then (Jinja tags keep their line) a line of the output is the same line
// of the file, which is what error messages should point at.
func (r *renderer) render(path, tag string, data map[string]any, salt func() map[string]any) (out []byte, outs *outputs, sameLines bool, err error) {
	c, err := r.template(path)
	if err != nil {
		return nil, nil, false, err
	}
	outs = newOutputs()
	vars := map[string]any{"tag": tag, "data": data, outputsVar: outs}
	if c.usesSalt {
		vars["salt"] = salt()
	}
	out, err = c.tpl.ExecuteToBytes(exec.NewContext(vars))
	if err != nil {
		line, col, msg := renderError(err.Error(), c.cols)
		if te, ok := errors.AsType[*exec.TemplateError](err); ok && te.Message != "" {
			// The engine's own words (Jinja's) are the cause; the
			// column only the rewritten source's tokens tell.
			_, _, msg = renderError(te.Message, c.cols)
			if line == 0 {
				line = te.Line
			}
		}
		return nil, nil, false, &Error{Stage: StageRender, File: path, Line: line, Column: col, Err: errors.New(msg)}
	}
	return out, outs, lineCount(out) == c.lines, nil
}

// lineCount counts lines; a final newline (which Jinja drops) does not
// start one.
func lineCount(b []byte) int {
	return bytes.Count(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) + 1
}

// filterJSON and filterYAML are Salt's json and yaml filters (compact
// JSON, one-line flow YAML), whose output the reaction's rewrite keeps
// as the value it stands for (remember).
func filterJSON(e *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	return serializeFilter(e, in, true)
}

func filterYAML(e *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	return serializeFilter(e, in, false)
}

func serializeFilter(e *exec.Evaluator, in *exec.Value, asJSON bool) *exec.Value {
	if in.IsError() {
		return in
	}
	v := jinja.GoValue(in)
	text, err := jinja.Serialize(v, asJSON)
	if err != nil {
		return exec.AsValue(fmt.Errorf("serializing %s: %w", in.String(), err))
	}
	remember(e, text, v)
	return exec.AsSafeValue(text)
}

// strictConfig is gonja's configuration with Salt's StrictUndefined: a
// reaction using data['nosuchkey'] fails, naming it, as in Salt, rather
// than passing "" on.
func strictConfig() *gonjacfg.Config {
	c := gonjacfg.New()
	c.StrictUndefined = true
	return c
}
