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
	// extend, insert, pop, remove and clear are Python's, changing the
	// list as append does.
	"extend": func(_ []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		var iterable any
		if err := arguments.Take(
			exec.PositionalArgument("iterable", nil, exec.AnyArgument(&iterable)),
		); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}
		items := exec.ToValue(iterable)
		if !items.IsIterable() {
			return nil, fmt.Errorf("TypeError: '%s' object is not iterable", items.TypeName())
		}
		list := selfValue.Val
		items.Iterate(func(_, _ int, item, _ *exec.Value) bool {
			list = reflect.Append(list, reflect.ValueOf(item))
			return true
		}, func() {})
		*selfValue = *exec.ToValue(list)
		return nil, nil
	},
	"insert": func(_ []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		var (
			index int
			x     any
		)
		if err := arguments.Take(
			exec.PositionalArgument("index", nil, exec.IntArgument(&index)),
			exec.PositionalArgument("object", nil, exec.AnyArgument(&x)),
		); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}
		list := selfValue.Val
		n := list.Len()
		if index < 0 {
			index = max(index+n, 0)
		}
		index = min(index, n)
		out := reflect.MakeSlice(list.Type(), 0, n+1)
		out = reflect.AppendSlice(out, list.Slice(0, index))
		out = reflect.Append(out, reflect.ValueOf(exec.ToValue(x)))
		out = reflect.AppendSlice(out, list.Slice(index, n))
		*selfValue = *exec.ToValue(out)
		return nil, nil
	},
	"pop": func(_ []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		index := -1
		if err := arguments.Take(
			exec.PositionalArgument("index", exec.AsValue(-1), exec.IntArgument(&index)),
		); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}
		list := selfValue.Val
		n := list.Len()
		if n == 0 {
			return nil, fmt.Errorf("IndexError: pop from empty list")
		}
		if index < 0 {
			index += n
		}
		if index < 0 || index >= n {
			return nil, fmt.Errorf("IndexError: pop index out of range")
		}
		item := exec.ToValue(list.Index(index))
		out := reflect.MakeSlice(list.Type(), 0, n-1)
		out = reflect.AppendSlice(out, list.Slice(0, index))
		out = reflect.AppendSlice(out, list.Slice(index+1, n))
		*selfValue = *exec.ToValue(out)
		return item, nil
	},
	"remove": func(_ []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		var x any
		if err := arguments.Take(
			exec.PositionalArgument("value", nil, exec.AnyArgument(&x)),
		); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}
		list := selfValue.Val
		target := exec.ToValue(x)
		for i := 0; i < list.Len(); i++ {
			if exec.ToValue(list.Index(i)).EqualValueTo(target) {
				out := reflect.MakeSlice(list.Type(), 0, list.Len()-1)
				out = reflect.AppendSlice(out, list.Slice(0, i))
				out = reflect.AppendSlice(out, list.Slice(i+1, list.Len()))
				*selfValue = *exec.ToValue(out)
				return nil, nil
			}
		}
		return nil, fmt.Errorf("ValueError: list.remove(x): x not in list")
	},
	"clear": func(_ []any, selfValue *exec.Value, arguments *exec.VarArgs) (any, error) {
		if err := arguments.Take(); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}
		*selfValue = *exec.ToValue(reflect.MakeSlice(selfValue.Val.Type(), 0, 0))
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
