package jinja

import (
	"fmt"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Tags are Salt's own tags (salt.utils.jinja.SerializerExtension) that
// are not rewritten before parsing: {% profile as 'label' %}…
// {% endprofile %}. Each environment of brine (state, reactor) adds them
// to gonja's built-in tags.
func Tags() map[string]parser.ControlStructureParser {
	return map[string]parser.ControlStructureParser{"profile": parseProfile}
}

// profileTag is Salt's profile block: its body rendered where it stands,
// in the same scope (a {% set %} inside is seen after it), its label
// evaluated; Salt logs the time the body took at its "profile" log
// level, which brine does not have.
type profileTag struct {
	location *tokens.Token
	label    nodes.Expression
	body     *nodes.Wrapper
}

func (p *profileTag) Position() *tokens.Token { return p.location }

func (p *profileTag) String() string {
	return fmt.Sprintf("ProfileControlStructure(Line=%d Col=%d)", p.location.Line, p.location.Col)
}

func (p *profileTag) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	if label := r.Eval(p.label); label.IsError() {
		return label
	}
	return r.ExecuteIfWrapper(p.body)
}

// parseProfile is Salt's parse_profile: `as`, the label (an expression),
// the body up to endprofile.
func parseProfile(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	tag := &profileTag{location: p.Current()}
	if args.MatchName("as") == nil {
		return nil, args.Error("expected token 'as'", args.Current())
	}
	label, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	if !args.End() {
		return nil, args.Error("expected token 'end of statement block'", args.Current())
	}
	tag.label = label
	body, _, err := p.WrapUntil("endprofile")
	if err != nil {
		return nil, err
	}
	tag.body = body
	return tag, nil
}
