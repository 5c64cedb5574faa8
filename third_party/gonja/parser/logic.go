package parser

import (
	"github.com/nikolalohinski/gonja/v2/logging"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
	log "github.com/sirupsen/logrus"
)

var compareOps = []tokens.Type{
	tokens.Equals,
	tokens.Ne,
	tokens.GreaterThan,
	tokens.GreaterThanOrEqual,
	tokens.LowerThan,
	tokens.LowerThanOrEqual,
}

func BinOp(token *tokens.Token) *nodes.BinOperator {
	return &nodes.BinOperator{Token: token}
}

// ParseLogicalExpression parses an expression without an inline if, the
// `or` level of Jinja's grammar.
func (p *Parser) ParseLogicalExpression() (nodes.Expression, error) {
	if logging.Enabled() {
		log.WithFields(log.Fields{
			"current": p.Current(),
		}).Trace("ParseLogicalExpression")
	}
	return p.parseOr()
}

func (p *Parser) parseOr() (nodes.Expression, error) {
	expr, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.Current(tokens.Or) != nil {
		op := BinOp(p.Pop())
		right, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		if right == nil {
			return nil, p.Error("Expected an expression after 'or'", p.Current())
		}
		expr = &nodes.BinaryExpression{Left: expr, Right: right, Operator: op}
	}
	return expr, nil
}

func (p *Parser) parseAnd() (nodes.Expression, error) {
	expr, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.Current(tokens.And) != nil {
		op := BinOp(p.Pop())
		right, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		if right == nil {
			return nil, p.Error("Expected an expression after 'and'", p.Current())
		}
		expr = &nodes.BinaryExpression{Left: expr, Right: right, Operator: op}
	}
	return expr, nil
}

// parseNot is `not` applied to a comparison, or to another `not`.
func (p *Parser) parseNot() (nodes.Expression, error) {
	if op := p.Match(tokens.Not); op != nil {
		expr, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		if expr == nil {
			return nil, p.Error("Expected an expression after 'not'", p.Current())
		}
		return &nodes.Negation{Operator: op, Term: expr}, nil
	}
	return p.parseCompare()
}

// parseCompare parses comparisons, `in` and `not in` as Python does: they
// bind looser than arithmetic and filters, and chain (a < b < c is
// a < b and b < c).
func (p *Parser) parseCompare() (nodes.Expression, error) {
	expr, err := p.ParseMath()
	if err != nil {
		return nil, err
	}
	var result nodes.Expression
	left := expr
	for {
		var op, not *tokens.Token
		switch {
		case p.Current(compareOps...) != nil, p.Current(tokens.In) != nil:
			op = p.Pop()
		case p.Current(tokens.Not) != nil && p.Peek(tokens.In) != nil:
			not = p.Pop()
			op = p.Pop()
		}
		if op == nil {
			break
		}
		right, err := p.ParseMath()
		if err != nil {
			return nil, err
		}
		if right == nil {
			return nil, p.Error("Expected an expression", p.Current())
		}
		var comparison nodes.Expression = &nodes.BinaryExpression{Left: left, Right: right, Operator: BinOp(op)}
		if not != nil {
			comparison = &nodes.Negation{Operator: not, Term: comparison}
		}
		if result == nil {
			result = comparison
		} else {
			and := &tokens.Token{Type: tokens.And, Val: "and", Pos: op.Pos, Line: op.Line, Col: op.Col}
			result = &nodes.BinaryExpression{Left: result, Right: comparison, Operator: BinOp(and)}
		}
		left = right
	}
	if result == nil {
		return expr, nil
	}
	return result, nil
}
