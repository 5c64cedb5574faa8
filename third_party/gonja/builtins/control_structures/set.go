package controlStructures

import (
	"bytes"
	"fmt"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
	"github.com/pkg/errors"
)

type SetControlStructure struct {
	location    *tokens.Token
	target      nodes.Expression
	names       []string // the names of {% set a, b = pair %}
	expression  nodes.Expression
	condition   nodes.Expression
	alternative nodes.Expression
	body        *nodes.Wrapper
}

func (scs *SetControlStructure) Position() *tokens.Token {
	return scs.location
}
func (scs *SetControlStructure) String() string {
	t := scs.Position()
	return fmt.Sprintf("SetControlStructure(Line=%d Col=%d)", t.Line, t.Col)
}

func (scs *SetControlStructure) Execute(r *exec.Renderer, tag *nodes.ControlStructureBlock) error {
	var value *exec.Value

	// --- Block form: {% set x %}...{% endset %} ---
	if scs.body != nil {
		buf := new(bytes.Buffer)
		sub := r.Inherit()
		originalOutput := sub.Output
		sub.Output = buf
		err := sub.ExecuteWrapper(scs.body)
		sub.Output = originalOutput
		if err != nil {
			return err
		}
		// Jinja2's block-set captures the rendered string as a Markup
		// (safe) value. Match that semantic.
		value = exec.AsSafeValue(buf.String())
	} else {
		// --- Expression form: {% set x = expr [if cond else alt] %} ---
		if scs.condition != nil && scs.alternative != nil {
			condition := r.Eval(scs.condition)
			if condition.IsError() {
				return condition
			}
			if !condition.IsNil() && condition.IsTrue() {
				value = r.Eval(scs.expression)
			} else {
				value = r.Eval(scs.alternative)
			}
		} else {
			value = r.Eval(scs.expression)
		}
	}

	if value == nil {
		return errors.Errorf(`Invalid value in 'set' tag: %s`, scs.expression)
	}
	if value.IsError() && !(value.IsUndefined() && len(scs.names) == 0) {
		return value
	}

	if len(scs.names) > 0 {
		return scs.unpack(r, value)
	}

	switch n := scs.target.(type) {
	case *nodes.Name:
		r.Environment.Context.Set(n.Name.Val, value.Interface())
	case *nodes.GetAttribute:
		target := r.Eval(n.Node)
		if target.IsError() {
			return errors.Wrapf(target, `Unable to evaluate target %s`, n)
		}
		if err := target.Set(exec.AsValue(n.Attribute), value.Interface()); err != nil {
			return errors.Wrapf(err, `Unable to set value on "%s"`, n.Attribute)
		}
	case *nodes.GetItem:
		target := r.Eval(n.Node)
		if target.IsError() {
			return errors.Wrapf(target, `Unable to evaluate target %s`, n)
		}
		arg := r.Eval(n.Arg)
		if arg.IsError() {
			return errors.Wrapf(target, `Unable to evaluate argument %s`, n.Arg)
		}
		if err := target.Set(arg, value.Interface()); err != nil {
			return errors.Wrapf(err, `Unable to set value on "%s"`, n.Arg)
		}
	default:
		return errors.Errorf(`Illegal set target node %s`, n)
	}

	return nil
}

// unpack sets each name to an item of value, as Python's a, b = value.
func (scs *SetControlStructure) unpack(r *exec.Renderer, value *exec.Value) error {
	if !value.IsIterable() {
		return errors.Errorf("cannot unpack non-iterable %s object", value.TypeName())
	}
	items := []*exec.Value{}
	value.Iterate(func(_, _ int, key, _ *exec.Value) bool {
		items = append(items, key)
		return true
	}, func() {})
	if len(items) > len(scs.names) {
		return errors.Errorf("too many values to unpack (expected %d)", len(scs.names))
	}
	if len(items) < len(scs.names) {
		return errors.Errorf("not enough values to unpack (expected %d, got %d)", len(scs.names), len(items))
	}
	for i, name := range scs.names {
		r.Environment.Context.Set(name, items[i].Interface())
	}
	return nil
}

// parseSetNames reads the names of {% set a, b = … %} or
// {% set (a, b) = … %}, after the first target.
func parseSetNames(args *parser.Parser, first nodes.Expression) ([]string, error) {
	var targets []nodes.Expression
	if tuple, ok := first.(*nodes.Tuple); ok {
		targets = tuple.Val
	} else {
		targets = []nodes.Expression{first}
		for args.Match(tokens.Comma) != nil {
			if args.Current(tokens.Assign) != nil {
				break
			}
			target, err := args.ParseVariableOrLiteral()
			if err != nil {
				return nil, err
			}
			targets = append(targets, target)
		}
	}
	names := []string{}
	for _, target := range targets {
		name, ok := target.(*nodes.Name)
		if !ok {
			return nil, args.Error(fmt.Sprintf("can't assign to %s", target), target.Position())
		}
		names = append(names, name.Name.Val)
	}
	return names, nil
}

func setParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	cs := &SetControlStructure{
		location: p.Current(),
	}

	// Parse target (variable name / attr / item).
	ident, err := args.ParseVariableOrLiteral()
	if err != nil {
		return nil, errors.Wrap(err, `unable to parse identifier`)
	}
	switch n := ident.(type) {
	case *nodes.Name, *nodes.Call, *nodes.GetItem, *nodes.GetAttribute:
		cs.target = n
		if _, isName := n.(*nodes.Name); isName && args.Current(tokens.Comma) != nil {
			if cs.names, err = parseSetNames(args, n); err != nil {
				return nil, err
			}
		}
	case *nodes.Tuple:
		cs.target = n
		if cs.names, err = parseSetNames(args, n); err != nil {
			return nil, err
		}
	default:
		return nil, errors.Errorf(`unexpected set target %s`, n)
	}

	if args.Match(tokens.Assign) == nil {
		if len(cs.names) > 0 {
			return nil, args.Error("Expected '=' after the names to set", args.Current())
		}
		if !args.End() {
			return nil, args.Error("Expected '=' or end of tag for block-set.", args.Current())
		}
		wrapper, endargs, err := p.WrapUntil("endset")
		if err != nil {
			return nil, err
		}
		if !endargs.End() {
			return nil, endargs.Error("endset takes no arguments", nil)
		}
		cs.body = wrapper
		return cs, nil
	}

	// --- Expression form: {% set x = expr [if cond else alt] %} ---
	expr, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	// set x = 1, 2 sets a tuple, as Python does.
	if args.Current(tokens.Comma) != nil {
		tuple := &nodes.Tuple{Location: expr.Position(), Val: []nodes.Expression{expr}}
		for args.Match(tokens.Comma) != nil {
			if args.End() {
				break
			}
			item, err := args.ParseExpression()
			if err != nil {
				return nil, err
			}
			tuple.Val = append(tuple.Val, item)
		}
		expr = tuple
	}
	cs.expression = expr

	condition, alternative, err := args.ParseCondition()
	if err != nil {
		return nil, err
	}
	if condition != nil {
		cs.condition = condition
		if alternative == nil {
			return nil, args.Error("Malformed 'set' if else condition", args.Current())
		}
		cs.alternative = alternative
	}

	if !args.End() {
		return nil, args.Error("Malformed 'set' tag args.", args.Current())
	}

	return cs, nil
}
