package state

import (
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"

	"github.com/brinehq/brine/internal/jinja"
)

// Salt's formulas import variables, not only macros:
// `{% from "apache/map.jinja" import apache with context %}` is how a
// formula reads its map. gonja's from/import bring macros alone, so brine
// replaces both: the imported template runs (seeing the importer's
// context, which in Salt holds salt, grains and pillar in any case), and
// the names asked for are read from what it set.

func controlStructures() *exec.ControlStructureSet {
	set := exec.NewControlStructureSet(map[string]parser.ControlStructureParser{})
	set.Update(builtins.ControlStructures)
	set.Update(exec.NewControlStructureSet(jinja.Tags()))
	_ = set.Replace("from", parseFrom)
	_ = set.Replace("import", parseImport)
	return set
}

type importNode struct {
	location *tokens.Token
	filename nodes.Expression
	names    map[string]string // alias → name (from … import)
	as       string            // import … as
}

func (n *importNode) Position() *tokens.Token { return n.location }

func (n *importNode) String() string {
	return fmt.Sprintf("Import(Line=%d Col=%d)", n.location.Line, n.location.Col)
}

func parseFrom(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	n := &importNode{location: p.Current(), names: map[string]string{}}
	filename, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	n.filename = filename
	if args.MatchName("import") == nil {
		return nil, args.Error("Expected import keyword", args.Current())
	}
	for !args.End() {
		if tok := args.MatchName("with", "without"); tok != nil {
			if args.MatchName("context") == nil {
				return nil, args.Error("Expected context after "+tok.Val, args.Current())
			}
			break
		}
		name := args.Match(tokens.Name)
		if name == nil {
			return nil, args.Error("Expected a name to import", args.Current())
		}
		alias := name.Val
		if args.MatchName("as") != nil {
			a := args.Match(tokens.Name)
			if a == nil {
				return nil, args.Error("Expected a name after as", args.Current())
			}
			alias = a.Val
		}
		n.names[alias] = name.Val
		if args.Match(tokens.Comma) == nil && !args.End() && args.CurrentName("with", "without") == nil {
			return nil, args.Error("Expected ','", args.Current())
		}
	}
	if len(n.names) == 0 {
		return nil, args.Error("Expected a name to import", args.Current())
	}
	return n, nil
}

func parseImport(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	n := &importNode{location: p.Current()}
	filename, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	n.filename = filename
	if args.MatchName("as") == nil {
		return nil, args.Error(`Expected "as"`, args.Current())
	}
	alias := args.Match(tokens.Name)
	if alias == nil {
		return nil, args.Error("Expected a name after as", args.Current())
	}
	n.as = alias.Val
	if tok := args.MatchName("with", "without"); tok != nil && args.MatchName("context") == nil {
		return nil, args.Error("Expected context after "+tok.Val, args.Current())
	}
	return n, nil
}

// topSet finds the names a template sets at its top level (and its
// macros), for `import … as x`: x.name reads them.
var topSet = regexp.MustCompile(`\{%-?\s*(?:set|macro)\s+(\w+)`)

func (n *importNode) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	fv := r.Eval(n.filename)
	if fv.IsError() {
		return fmt.Errorf("import: %w", fv)
	}
	filename, err := r.Loader.Resolve(fv.String())
	if err != nil {
		return err
	}
	loader, err := r.Loader.Inherit(filename)
	if err != nil {
		return err
	}
	tpl, err := exec.NewTemplate(filename, r.Config, loader, r.Environment)
	if err != nil {
		if _, ok := errors.AsType[*parser.SyntaxError](err); ok {
			return &RenderError{File: filename, Line: syntaxLine(err), Err: cleanParseError(err),
				Via: "imported by " + r.RootNode.Identifier}
		}
		// the file could not be read: the import's error, at its line
		// (its text, not the chain, whose innermost error says less)
		return errors.New(cleanParseError(err).Error())
	}
	ctx := r.Environment.Context.Inherit()
	sub := exec.NewRenderer(&exec.Environment{
		Context:           ctx,
		Tests:             r.Environment.Tests,
		Filters:           r.Environment.Filters,
		ControlStructures: r.Environment.ControlStructures,
		Methods:           r.Environment.Methods,
	}, io.Discard, r.Config, loader, tpl)
	if err := sub.Execute(); err != nil {
		// the imported file's error, and the file that imported it
		e := renderError(filename, err)
		e.Via = joinVia(e.Via, "imported by "+r.RootNode.Identifier)
		return e
	}
	get := func(name string) (any, bool) {
		if m, ok := tpl.Macros()[name]; ok {
			fn, err := exec.MacroNodeToFunc(m, sub)
			if err != nil {
				return nil, false
			}
			return fn, true
		}
		return ctx.Get(name)
	}
	if n.as != "" {
		src, err := readAll(loader, filename)
		if err != nil {
			return err
		}
		module := map[string]any{}
		for _, m := range topSet.FindAllStringSubmatch(src, -1) {
			if v, ok := get(m[1]); ok {
				module[m[1]] = v
			}
		}
		r.Environment.Context.Set(n.as, module)
		return nil
	}
	for alias, name := range n.names {
		v, ok := get(name)
		if !ok {
			return fmt.Errorf("the template %s does not export %q", filename, name)
		}
		r.Environment.Context.Set(alias, v)
	}
	return nil
}

func readAll(l interface {
	Read(string) (io.Reader, error)
}, name string) (string, error) {
	rd, err := l.Read(name)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(rd)
	return string(b), err
}
