package parser

import (
	log "github.com/sirupsen/logrus"

	"github.com/nikolalohinski/gonja/v2/logging"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// ParseTest parses `is [not] name [argument]` after expr, as Jinja does:
// the argument is a call's arguments in parentheses, or one term.
func (p *Parser) ParseTest(expr nodes.Expression) (nodes.Expression, error) {
	if logging.Enabled() {
		log.WithFields(log.Fields{
			"current": p.Current(),
		}).Trace("parseTest")
	}

	if p.Match(tokens.Is) == nil {
		return expr, nil
	}
	not := p.Match(tokens.Not)
	ident := p.Match(append([]tokens.Type{tokens.Name, tokens.In}, compareOps...)...)
	if ident == nil {
		return nil, p.Error("Expected a test name after 'is'", p.Current())
	}
	test := &nodes.TestCall{
		Token:  ident,
		Name:   ident.Val,
		Args:   []nodes.Expression{},
		Kwargs: map[string]nodes.Expression{},
	}
	// The argument is one term; in parentheses it may also be a tuple,
	// which gonja has always accepted (x is in (1, 2)).
	if p.Current(tokens.Name, tokens.String, tokens.Integer, tokens.Float) != nil && p.CurrentName("else", "if") == nil ||
		p.Current(tokens.LeftParenthesis, tokens.LeftBracket, tokens.LeftBrace) != nil {
		arg, err := p.ParseVariableOrLiteral()
		if err != nil {
			return nil, err
		}
		test.Args = append(test.Args, arg)
	}
	expr = &nodes.TestExpression{
		Expression: expr,
		Test:       test,
	}
	if not != nil {
		expr = &nodes.Negation{
			Term:     expr,
			Operator: not,
		}
	}

	if logging.Enabled() {
		log.WithFields(log.Fields{
			"expr": expr,
		}).Trace("parseTest return")
	}
	return expr, nil
}
