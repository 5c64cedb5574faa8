package jinja

import (
	"fmt"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Python's itertools as Salt's SerializerExtension offers them as filters
// (combinations, permutations, product, zip, …). Python yields tuples;
// brine gives lists of lists, which | list and for loops read alike.

// varFilter is a filter taking any number of iterables after the value.
func varFilter(name string, kw []param, f func(lists [][]any, kwargs []any) (any, error)) exec.FilterFunction {
	return func(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		kwargs, err := bind(name, &exec.VarArgs{KwArgs: va.KwArgs}, kw)
		if err != nil {
			return exec.AsValue(err)
		}
		lists := make([][]any, 0, len(va.Args)+1)
		for _, v := range append([]*exec.Value{in}, va.Args...) {
			l, err := asList(GoValue(v))
			if err != nil {
				return exec.AsValue(fmt.Errorf("%s: %w", name, err))
			}
			lists = append(lists, l)
		}
		out, err := f(lists, kwargs)
		if err != nil {
			return exec.AsValue(fmt.Errorf("%s: %w", name, err))
		}
		return exec.AsValue(out)
	}
}

func tupleOf(l []any, idx []int) []any {
	t := make([]any, len(idx))
	for i, j := range idx {
		t[i] = l[j]
	}
	return t
}

// combinations is itertools.combinations(iterable, r), with replacement
// when repl.
func combinations(repl bool) pyFunc {
	return func(in any, args []any) (any, error) {
		pool, err := asList(in)
		if err != nil {
			return nil, err
		}
		r, ok := asInt(args[0])
		if !ok || r < 0 {
			return nil, fmt.Errorf("r must be non-negative")
		}
		n := len(pool)
		out := []any{}
		idx := make([]int, r)
		var rec func(pos, start int)
		rec = func(pos, start int) {
			if pos == r {
				out = append(out, tupleOf(pool, idx))
				return
			}
			for i := start; i < n; i++ {
				idx[pos] = i
				if repl {
					rec(pos+1, i)
				} else {
					rec(pos+1, i+1)
				}
			}
		}
		if repl && n == 0 && r > 0 {
			return out, nil
		}
		rec(0, 0)
		return out, nil
	}
}

// permutations is itertools.permutations(iterable, r=None).
func permutations(in any, args []any) (any, error) {
	pool, err := asList(in)
	if err != nil {
		return nil, err
	}
	n := len(pool)
	r := n
	if args[0] != nil {
		var ok bool
		if r, ok = asInt(args[0]); !ok || r < 0 {
			return nil, fmt.Errorf("r must be non-negative")
		}
	}
	out := []any{}
	if r > n {
		return out, nil
	}
	used := make([]bool, n)
	idx := make([]int, r)
	var rec func(pos int)
	rec = func(pos int) {
		if pos == r {
			out = append(out, tupleOf(pool, idx))
			return
		}
		for i := 0; i < n; i++ {
			if !used[i] {
				used[i], idx[pos] = true, i
				rec(pos + 1)
				used[i] = false
			}
		}
	}
	rec(0)
	return out, nil
}

// compress is itertools.compress(data, selectors).
func compress(in any, args []any) (any, error) {
	data, err := asList(in)
	if err != nil {
		return nil, err
	}
	sel, err := asList(args[0])
	if err != nil {
		return nil, err
	}
	out := []any{}
	for i := 0; i < len(data) && i < len(sel); i++ {
		if truthy(sel[i]) {
			out = append(out, data[i])
		}
	}
	return out, nil
}

// product is itertools.product(*iterables, repeat=1).
func product(lists [][]any, kwargs []any) (any, error) {
	repeat, ok := asInt(kwargs[0])
	if !ok || repeat < 0 {
		return nil, fmt.Errorf("repeat argument cannot be negative")
	}
	var pools [][]any
	for i := 0; i < repeat; i++ {
		pools = append(pools, lists...)
	}
	out := []any{[]any{}}
	for _, pool := range pools {
		var next []any
		for _, prefix := range out {
			for _, x := range pool {
				t := append(append([]any{}, prefix.([]any)...), x)
				next = append(next, t)
			}
		}
		out = next
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

// zipLists is zip(*iterables), or itertools.zip_longest with fillvalue.
func zipLists(longest bool) func([][]any, []any) (any, error) {
	return func(lists [][]any, kwargs []any) (any, error) {
		n := -1
		for _, l := range lists {
			switch {
			case n < 0:
				n = len(l)
			case longest && len(l) > n, !longest && len(l) < n:
				n = len(l)
			}
		}
		out := []any{}
		for i := 0; i < n; i++ {
			t := make([]any, len(lists))
			for j, l := range lists {
				if i < len(l) {
					t[j] = l[i]
				} else {
					t[j] = kwargs[0]
				}
			}
			out = append(out, t)
		}
		return out, nil
	}
}

// filterMethodCall is Salt's method_call(obj, f_name, *args, **kwargs):
// the value's method called as the template's obj.f_name(…) calls it,
// or None when it has none (getattr's default).
func filterMethodCall(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if len(va.Args) == 0 {
		return exec.AsValue(fmt.Errorf("method_call() missing 1 required positional argument: 'f_name'"))
	}
	rest := &exec.VarArgs{Args: va.Args[1:], KwArgs: va.KwArgs}
	out, _ := e.CallMethod(in, va.Args[0].String(), rest)
	return out
}
