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
	// As Jinja's: a call's arguments in parentheses (x is match('a',
	// ignorecase=True)), else one term. gonja has always taken a tuple
	// in parentheses as the one argument (x is in (1, 2)): several
	// positional arguments and nothing else are still that.
	if leftParenthesis := p.Match(tokens.LeftParenthesis); leftParenthesis != nil {
		args, err := p.parseCallArguments(leftParenthesis)
		if err != nil {
			return nil, err
		}
		if len(args.Args) > 1 && len(args.Kwargs) == 0 && args.DynArgs == nil && args.DynKwargs == nil && ident.Val == "in" {
			test.Args = append(test.Args, &nodes.Tuple{Location: leftParenthesis, Val: args.Args})
		} else {
			test.Args, test.Kwargs = args.Args, args.Kwargs
			if args.DynArgs != nil || args.DynKwargs != nil {
				return nil, p.Error("*args and **kwargs are not supported in a test's arguments", leftParenthesis)
			}
		}
	} else if p.Current(tokens.Name, tokens.String, tokens.Integer, tokens.Float) != nil && p.CurrentName("else", "if", "or", "and") == nil ||
		p.Current(tokens.LeftBracket, tokens.LeftBrace) != nil {
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
