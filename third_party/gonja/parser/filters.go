package parser

import (
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

func (p *Parser) ParseFilter() (*nodes.FilterCall, error) {
	identToken := p.Match(tokens.Name)

	if identToken == nil {
		return nil, p.Error("filter name must be an identifier", p.Current())
	}

	filter := &nodes.FilterCall{
		Token:  identToken,
		Name:   identToken.Val,
		Args:   []nodes.Expression{},
		Kwargs: map[string]nodes.Expression{},
	}

	if leftParenthesis := p.Match(tokens.LeftParenthesis); leftParenthesis != nil {
		args, err := p.parseCallArguments(leftParenthesis)
		if err != nil {
			return nil, err
		}
		filter.Args, filter.Kwargs = args.Args, args.Kwargs
		filter.DynArgs, filter.DynKwargs = args.DynArgs, args.DynKwargs
	}

	return filter, nil
}
