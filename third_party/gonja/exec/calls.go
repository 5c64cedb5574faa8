package exec

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/pkg/errors"
)

func (e *Evaluator) evalCall(node *nodes.Call) *Value {
	fn := e.Eval(node.Func)
	if fn.IsUndefined() {
		if _, isName := node.Func.(*nodes.Name); isName {
			return fn
		}
	}
	if !fn.IsCallable() {
		getAttributeNode, ok := node.Func.(*nodes.GetAttribute)
		if node.Parent == nil || !ok {
			if fn.IsError() {
				// an undefined name or item, or what failed in
				// evaluating it, says what is wrong
				return fn
			}
			return AsValue(errors.Errorf(`'%s' object is not callable`, fn.TypeName()))
		}
		return e.evalMethod(node.Parent, getAttributeNode.Attribute, node)
	}
	if fn.IsError() {
		return AsValue(errors.Wrapf(fn, `unable to evaluate function '%s'`, node.Func))
	}

	var current reflect.Value
	var isSafe bool

	var params []reflect.Value
	var err error
	t := fn.Val.Type()

	if t.NumIn() == 1 && t.In(0) == reflect.TypeFor[*VarArgs]() {
		params, err = e.evalVarArgs(node)
	} else if t.NumIn() == 2 && t.In(0) == reflect.TypeFor[*Evaluator]() && t.In(1) == reflect.TypeFor[*VarArgs]() {
		params, err = e.evalVarArgs(node)
		params = append([]reflect.Value{reflect.ValueOf(e)}, params...)
	} else {
		params, err = e.evalParams(node, fn)
	}
	if err != nil {
		return AsValue(errors.Wrapf(err, `unable to evaluate parameters`))
	}
	functionName := calleeName(node.Func)

	// Call it and get first return parameter back
	values := fn.Val.Call(params)
	rv := values[0]
	if t.NumOut() == 2 {
		e := values[1].Interface()
		if e != nil {
			err, ok := e.(error)
			if !ok {
				return AsValue(fmt.Errorf("second return value of function '%s' is not an error", functionName))
			}
			if callErr, ok := err.(*InvalidCallError); ok {
				return AsValue(fmt.Errorf("invalid call to function '%s': %s", functionName, callErr.Error()))
			}
			return AsValue(err)
		}
	}

	if rv.Type() != typeOfValuePtr {
		current = reflect.ValueOf(rv.Interface())
	} else {
		// Return the function call value
		current = rv.Interface().(*Value).Val
		isSafe = rv.Interface().(*Value).Safe
	}

	if !current.IsValid() {
		// Value is not valid (e. g. NIL value)
		return AsValue(nil)
	}
	value := &Value{Val: current, Safe: isSafe}
	if value.IsError() {
		if err, ok := value.Interface().(*InvalidCallError); ok {
			return AsValue(fmt.Errorf("invalid call to function '%s': %s", functionName, err.Error()))
		}
	}
	return value
}

func (e *Evaluator) evalMethod(parentNode nodes.Node, method string, call *nodes.Call) *Value {
	parent := e.Eval(parentNode)
	if parent.IsError() {
		return AsValue(errors.Wrapf(parent, "unable to evaluate '%s'", parentNode))
	}
	parameters, evalErr := e.evalArguments(call.Args, call.Kwargs, call.DynArgs, call.DynKwargs, call.KwargsOrder...)
	if evalErr != nil {
		return AsValue(evalErr)
	}
	result, found, err := e.callMethod(parent, method, parameters)
	if !found && err == nil {
		// Jinja's: the attribute is undefined
		err = UndefinedMember(parent, method)
		if !parent.IsString() && !parent.IsBool() && !parent.IsNumber() && !parent.IsDict() && !parent.IsList() {
			err = errors.Errorf(`'%s' is not callable on %s`, method, parent)
		}
	}
	if err != nil {
		if callErr, ok := err.(*InvalidCallError); ok {
			return AsValue(fmt.Errorf("invalid call to method '%s' of %s: %s", method, parent.String(), callErr.Error()))
		}
		return AsValue(err)
	}
	if n, ok := parentNode.(*nodes.Name); ok && e.Environment.Context.Has(n.Name.Val) {
		e.Environment.Context.Replace(n.Name.Val, parent.Interface())
	}

	return ToValue(result)
}

// CallMethod calls value's method name with args, as a template's
// value.name(…) does (a template's dict and list changed in place);
// found is false when the value has no such method. Salt's method_call
// filter is this.
func (e *Evaluator) CallMethod(value *Value, name string, args *VarArgs) (result *Value, found bool) {
	out, found, err := e.callMethod(value, name, args)
	if !found {
		return AsValue(nil), false
	}
	if err != nil {
		if callErr, ok := err.(*InvalidCallError); ok {
			return AsValue(fmt.Errorf("invalid call to method '%s' of %s: %s", name, value.String(), callErr.Error())), true
		}
		return AsValue(err), true
	}
	return ToValue(out), true
}

// callMethod is value's method name called with parameters; found is
// false when the value has none of that name.
func (e *Evaluator) callMethod(parent *Value, method string, parameters *VarArgs) (result any, found bool, err error) {
	switch {
	case parent.IsString():
		if method, ok := e.Environment.Methods.Str.Get(method); ok {
			found = true
			result, err = method(parent.String(), parent, parameters)
		}
	case parent.IsBool():
		if method, ok := e.Environment.Methods.Bool.Get(method); ok {
			found = true
			result, err = method(parent.Bool(), parent, parameters)
		}
	case parent.IsFloat():
		if method, ok := e.Environment.Methods.Float.Get(method); ok {
			found = true
			result, err = method(parent.Float(), parent, parameters)
		}
	case parent.IsInteger():
		if method, ok := e.Environment.Methods.Int.Get(method); ok {
			found = true
			result, err = method(parent.Integer(), parent, parameters)
		}
	case parent.IsDict():
		// a template's dict keeps its order, and its methods change it
		// in place, as Python's do
		if method == "fromkeys" {
			// a class method: a new dict, whatever the dict it is
			// called on
			result, err = dictFromkeys(parameters)
			return result, true, err
		}
		if dict, isDict := parent.Interface().(*Dict); isDict {
			if result, found, err = dictMethod(dict, method, parameters); found {
				break
			}
		}
		if method, ok := e.Environment.Methods.Dict.Get(method); ok {
			found = true
			if goMap, isMap := parent.Interface().(map[string]any); isMap {
				// the map itself, not a copy: a Go map from the
				// context (Salt's pillar) is changed in place, as a
				// Python dict is one object
				result, err = method(goMap, parent, parameters)
				break
			}
			dict := parent.ToGoSimpleType(false)
			if err, ok := dict.(error); err != nil && ok {
				return nil, true, fmt.Errorf("failed to cast '%s' to a Go type: %s", parent.String(), err)
			}
			goMap, ok := dict.(map[string]any)
			if !ok {
				return nil, true, fmt.Errorf("failed to cast '%s' to map[string]interface{}: %s", parent.String(), err)
			}
			result, err = method(goMap, parent, parameters)
		}
	case parent.IsList():
		if method, ok := e.Environment.Methods.List.Get(method); ok {
			found = true
			list := parent.ToGoSimpleType(false)
			if err, ok := list.(error); err != nil && ok {
				return nil, true, fmt.Errorf("failed to cast '%s' to a Go type: %s", parent.String(), err)
			}
			goList, ok := list.([]any)
			if !ok {
				return nil, true, fmt.Errorf("failed to cast '%s' to []interface{}: %s", parent.String(), err)
			}
			result, err = method(goList, parent, parameters)
		}
	default:
		return nil, false, nil
	}
	return plainStrings(result), found, err
}

var typeString = reflect.TypeFor[string]()

// plainStrings is a method's result with a string (or the strings of a
// list) of a named Go type, as gonja's str methods give, a Go string:
// Python has one str type, and Go code given the value sees a string.
func plainStrings(result any) any {
	rv := reflect.ValueOf(result)
	switch {
	case !rv.IsValid():
	case rv.Kind() == reflect.String && rv.Type() != typeString:
		return rv.String()
	case rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.String && rv.Type().Elem() != typeString:
		out := make([]string, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).String()
		}
		return out
	}
	return result
}

// calleeName is a function as the template calls it: name, salt.cmd.run,
// salt['cmd.run'].
func calleeName(node nodes.Node) string {
	switch n := node.(type) {
	case *nodes.Name:
		return n.Name.Val
	case *nodes.GetAttribute:
		if n.Attribute != "" {
			return calleeName(n.Node) + "." + n.Attribute
		}
		return calleeName(n.Node) + "." + strconv.Itoa(n.Index)
	case *nodes.GetItem:
		switch arg := n.Arg.(type) {
		case *nodes.String:
			return calleeName(n.Node) + "[" + PyQuote(arg.Val) + "]"
		case *nodes.Integer:
			return calleeName(n.Node) + "[" + strconv.Itoa(arg.Val) + "]"
		}
		return calleeName(n.Node) + "[…]"
	case *nodes.Call:
		return calleeName(n.Func) + "(…)"
	}
	return "function"
}
