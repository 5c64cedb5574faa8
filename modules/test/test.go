// Package test is Salt's test execution module: functions that check an
// agent answers (ping, echo, version), show how arguments arrive (arg,
// kwarg) and exercise the job machinery itself (sleep, exception, retcode),
// so that targeting, timeouts, kill_job and failure handling can be tried
// without touching the machine.
//
// These are the agent's test.* functions; function.Builtins holds the
// master's runner functions of the same names, which reactions call.
package test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
)

// Module declares the test functions.
func Module(env *modules.Env) []function.Func {
	return []function.Func{
		{
			Name: "test.ping", Doc: "Return True: the agent is up and answering (not an ICMP ping).", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return true, nil },
		},
		{
			Name: "test.true", Doc: "Return True.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return true, nil },
		},
		{
			Name: "test.false", Doc: "Return False.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return false, nil },
		},
		{
			Name: "test.echo", Doc: "Return text as given.", ReadOnly: true,
			Params: []function.Param{{Name: "text", Kind: function.Any, Required: true}},
			Run:    func(_ context.Context, in *function.Input) (any, error) { return in.Value("text"), nil },
		},
		{
			Name: "test.outputter", Doc: "Return data as given, to try an outputter on it.", ReadOnly: true,
			Params: []function.Param{{Name: "data", Kind: function.Any, Required: true}},
			Run:    func(_ context.Context, in *function.Input) (any, error) { return in.Value("data"), nil },
		},
		{
			Name: "test.version", Doc: "The agent's version.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return env.Version, nil },
		},
		{
			Name: "test.arg", Doc: "Return the arguments as {args, kwargs}; kwargs include the job's __pub_* keys.",
			VarArgs: true, VarKwargs: true, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return map[string]any{"args": args(in), "kwargs": kwargs(in, true)}, nil
			},
		},
		{
			Name: "test.arg_clean", Doc: "Return the arguments as {args, kwargs}, without the job's __pub_* keys.",
			VarArgs: true, VarKwargs: true, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return map[string]any{"args": args(in), "kwargs": kwargs(in, false)}, nil
			},
		},
		{
			Name: "test.arg_type", Doc: "Return the Python type each argument would have in Salt, as {args, kwargs}.",
			VarArgs: true, VarKwargs: true, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				as := args(in)
				ts := make([]any, len(as))
				for i, a := range as {
					ts[i] = pyType(a)
				}
				kw := map[string]any{}
				for k, v := range kwargs(in, true) {
					kw[k] = pyType(v)
				}
				return map[string]any{"args": ts, "kwargs": kw}, nil
			},
		},
		{
			Name: "test.kwarg", Doc: "Return the keyword arguments, the job's __pub_* keys included.",
			VarKwargs: true, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) { return kwargs(in, true), nil },
		},
		{
			Name: "test.sleep", Doc: "Sleep length seconds, then return True; the job can be killed meanwhile.",
			Params: []function.Param{{Name: "length", Kind: function.Number, Required: true}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return sleep(ctx, time.Duration(in.Float("length")*float64(time.Second)))
			},
		},
		{
			Name: "test.rand_sleep", Doc: "Sleep a random whole number of seconds from 0 to max (default 60), then return True.",
			Params: []function.Param{{Name: "max", Kind: function.Int, Default: int64(60)}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				limit := in.Int("max")
				if limit < 0 {
					return nil, fmt.Errorf("test.rand_sleep: max must not be negative, got %d", limit)
				}
				return sleep(ctx, time.Duration(rand.Int64N(limit+1))*time.Second)
			},
		},
		{
			Name: "test.fib", Doc: "The num-th Fibonacci number and the seconds it took to compute, as [number, seconds].",
			Params:   []function.Param{{Name: "num", Kind: function.Int, Required: true}},
			ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				start := time.Now()
				n, err := fib(in.Int("num"))
				if err != nil {
					return nil, err
				}
				return []any{n, time.Since(start).Seconds()}, nil
			},
		},
		{
			Name: "test.collatz", Doc: "The Collatz sequence from start (1 excluded) and the seconds it took, as [steps, seconds].",
			Params:   []function.Param{{Name: "start", Kind: function.Int, Required: true}},
			ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				begin := time.Now()
				steps, err := collatz(in.Int("start"))
				if err != nil {
					return nil, err
				}
				return []any{steps, time.Since(begin).Seconds()}, nil
			},
		},
		{
			Name: "test.exception", Doc: "Fail with message (default \"Test Exception\"), to try failure handling.",
			Params: []function.Param{{Name: "message", Kind: function.String, Default: "Test Exception"}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return nil, errors.New(in.String("message"))
			},
		},
		{
			Name: "test.assertion", Doc: "Fail unless assertion is true (Python truthiness), as Salt's test.assertion.",
			Params: []function.Param{{Name: "assertion", Kind: function.Any, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				if !py.Truth(in.Value("assertion")) {
					return nil, errors.New("test.assertion: AssertionError")
				}
				return nil, nil
			},
		},
		{
			Name: "test.retcode", Doc: "Set the job's retcode to code (default 42) and return True, to try retcode handling.",
			Params: []function.Param{{Name: "code", Kind: function.Int, Default: int64(42)}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				modules.SetRetcode(ctx, int(in.Int("code")))
				return true, nil
			},
		},
		{
			Name: "test.get_opts", Doc: "The agent's configuration, as Salt's __opts__.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return opts(env), nil },
		},
		{
			Name: "test.opts_pkg", Doc: "The agent's configuration with its grains under \"grains\".", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) {
				out := opts(env)
				if env.Grains != nil {
					out["grains"] = env.Grains()
				}
				return out, nil
			},
		},
		{
			Name: "test.cross_test", Doc: "Call the execution function func with the positional arguments args (a list).",
			Params: []function.Param{
				{Name: "func", Kind: function.String, Required: true},
				{Name: "args", Kind: function.List},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if env.Functions == nil {
					return nil, errors.New("test.cross_test: the agent's functions are not registered yet")
				}
				return env.Functions.Call(ctx, in.String("func"), in.List("args"), nil, nil)
			},
		},
	}
}

// args returns the positional arguments, an empty list rather than null.
func args(in *function.Input) []any {
	if in.Extra == nil {
		return []any{}
	}
	return in.Extra
}

// kwargs returns the keyword arguments, with or without the __pub_* keys a
// job adds (Salt's test.arg shows them, arg_clean does not).
func kwargs(in *function.Input, pub bool) map[string]any {
	out := maps.Clone(in.ExtraKwargs)
	if out == nil {
		out = map[string]any{}
	}
	if !pub {
		maps.DeleteFunc(out, func(k string, _ any) bool { return strings.HasPrefix(k, "__pub_") })
	}
	return out
}

// opts returns a copy of the agent's options, empty without any.
func opts(env *modules.Env) map[string]any {
	if env.Opts == nil {
		return map[string]any{}
	}
	return maps.Clone(env.Opts())
}

// sleep waits d, or until the job is killed.
func sleep(ctx context.Context, d time.Duration) (any, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// maxFib is the largest n whose Fibonacci number fits an int64 (Salt's
// recursive version would not finish for much smaller numbers anyway).
const maxFib = 92

func fib(n int64) (int64, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("test.fib: Negative number is not allowed: %d", n)
	case n > maxFib:
		return 0, fmt.Errorf("test.fib: %d is too large: the result would not fit 64 bits (at most %d)", n, maxFib)
	}
	a, b := int64(0), int64(1)
	for range n {
		a, b = b, a+b
	}
	return a, nil
}

// maxCollatz bounds the sequence so that a start whose sequence overflows
// fails instead of looping.
const maxCollatz = 1 << 40

func collatz(n int64) ([]any, error) {
	if n < 1 {
		return nil, fmt.Errorf("test.collatz: start must be a positive integer, got %d", n)
	}
	steps := []any{}
	for n != 1 {
		if n > maxCollatz {
			return nil, fmt.Errorf("test.collatz: the sequence exceeds %d", int64(maxCollatz))
		}
		steps = append(steps, n)
		if n%2 == 0 {
			n /= 2
		} else {
			n = 3*n + 1
		}
	}
	return steps, nil
}

// pyType names the Python type a value decodes to on a Salt minion.
func pyType(v any) string {
	name := "object"
	switch v.(type) {
	case nil:
		name = "NoneType"
	case bool:
		name = "bool"
	case int64:
		name = "int"
	case float64:
		name = "float"
	case string:
		name = "str"
	case []any:
		name = "list"
	case map[string]any:
		name = "dict"
	}
	return "<class '" + name + "'>"
}
