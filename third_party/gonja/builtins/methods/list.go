package methods

import (
	"fmt"
	"reflect"

	"github.com/nikolalohinski/gonja/v2/exec"
)

var listMethods = exec.NewMethodSet[[]any](map[string]exec.Method[[]any]{
	"append": func(_ []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		var (
			x any
		)
		if err := arguments.Take(
			exec.PositionalArgument("x", nil, exec.AnyArgument(&x)),
		); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}

		*selfValue = *exec.ToValue(reflect.Append(selfValue.Val, reflect.ValueOf(exec.ToValue(x))))

		return nil, nil
	},
	"reverse": func(_ []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		if err := arguments.Take(); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}
		reversed := reflect.MakeSlice(selfValue.Val.Type(), 0, 0)
		for i := selfValue.Val.Len() - 1; i >= 0; i-- {
			reversed = reflect.Append(reversed, selfValue.Val.Index(i))
		}
		for i := 0; i < selfValue.Val.Len(); i++ {
			selfValue.Val.Index(i).Set(reversed.Index(i))
		}

		return nil, nil
	},
	"copy": func(self []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		if err := arguments.Take(); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}
		return self, nil
	},
	"index": func(self []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		// Python's list.index(x, start=0, end=len): the first index of x
		// in the slice, which may count from the end.
		if len(arguments.Args) < 1 || len(arguments.Args) > 3 || len(arguments.KwArgs) > 0 {
			return nil, exec.ErrInvalidCall(fmt.Errorf("index expected at least 1 argument, got %d", len(arguments.Args)))
		}
		bounds := []int{0, len(self)}
		for i, arg := range arguments.Args[1:] {
			if !arg.IsInteger() {
				return nil, fmt.Errorf("slice indices must be integers or have an __index__ method")
			}
			n := arg.Integer()
			if n < 0 {
				n += len(self)
			}
			bounds[i] = min(max(n, 0), len(self))
		}
		x := arguments.Args[0]
		for i := bounds[0]; i < bounds[1]; i++ {
			if selfValue.Index(i).EqualValueTo(x) {
				return i, nil
			}
		}
		return nil, fmt.Errorf("%s is not in list", x.Repr())
	},
	"count": func(self []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		var x any
		if err := arguments.Take(
			exec.PositionalArgument("x", nil, exec.AnyArgument(&x)),
		); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}
		n := 0
		for i := range self {
			if selfValue.Index(i).EqualValueTo(exec.ToValue(x)) {
				n++
			}
		}
		return n, nil
	},
})
