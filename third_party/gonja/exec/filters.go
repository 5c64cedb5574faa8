package exec

import (
	"fmt"

	"github.com/pkg/errors"

	"github.com/nikolalohinski/gonja/v2/nodes"
)

// FilterFunction is the type filter functions must fulfill
type FilterFunction func(e *Evaluator, in *Value, params *VarArgs) *Value

// EvaluateFiltered evaluates a filtered expression
func (e *Evaluator) EvaluateFiltered(expr *nodes.FilteredExpression) *Value {
	value := e.Eval(expr.Expression)

	for _, filter := range expr.Filters {
		value = e.ExecuteFilter(filter, value)
		if value.IsError() {
			return AsValue(errors.Wrapf(value, "unable to evaluate filter %s", filter))
		}
	}

	return value
}

// ExecuteFilter executes a filter node
func (e *Evaluator) ExecuteFilter(fc *nodes.FilterCall, v *Value) *Value {
	params, err := e.evalArguments(fc.Args, fc.Kwargs, fc.DynArgs, fc.DynKwargs)
	if err != nil {
		return AsValue(errors.Wrapf(err, "unable to evaluate the arguments of filter '%s'", fc.Name))
	}
	return e.ExecuteFilterByName(fc.Name, v, params)
}

// ExecuteFilterByName executes a filter given its name
func (e *Evaluator) ExecuteFilterByName(name string, in *Value, params *VarArgs) *Value {
	filter, ok := e.Environment.Filters.Get(name)
	if !e.Environment.Filters.Exists(name) || !ok {
		return AsValue(errors.Errorf("No filter named '%s'.", name))
	}
	returnedValue := filter(e, in, params)
	if returnedValue.IsError() {
		err, ok := returnedValue.Interface().(*InvalidCallError)
		if ok {
			return AsValue(fmt.Errorf("invalid call to filter '%s': %s", name, err.Error()))
		}
	}

	return returnedValue
}
