package function

import (
	"context"
	"errors"
	"time"
)

// Builtins are the functions every registry starts with: Salt's test runner
// functions, which make reactions testable without side effects, and
// event.send, which lets a reaction fire an event.
var Builtins = []Func{
	{
		Name:     "test.ping",
		Doc:      "Return true.",
		ReadOnly: true,
		Run:      func(context.Context, *Input) (any, error) { return true, nil },
	},
	{
		Name:      "test.arg",
		Doc:       "Return the arguments given, as {args, kwargs}.",
		VarArgs:   true,
		VarKwargs: true,
		ReadOnly:  true,
		Run: func(_ context.Context, in *Input) (any, error) {
			args, kwargs := in.Extra, in.ExtraKwargs
			if args == nil {
				args = []any{}
			}
			if kwargs == nil {
				kwargs = map[string]any{}
			}
			return map[string]any{"args": args, "kwargs": kwargs}, nil
		},
	},
	{
		Name:   "test.sleep",
		Doc:    "Sleep s_time seconds (default 10), then return true.",
		Params: []Param{{Name: "s_time", Kind: Number, Default: int64(10), Aliases: []string{"length"}}},
		Run: func(ctx context.Context, in *Input) (any, error) {
			d := time.Duration(in.Float("s_time") * float64(time.Second))
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return true, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	},
	{
		Name:   "test.exception",
		Doc:    "Fail with message: for testing failure handling.",
		Params: []Param{{Name: "message", Kind: String, Default: "Test Exception"}},
		Run: func(_ context.Context, in *Input) (any, error) {
			return nil, errors.New(in.String("message"))
		},
	},
	{
		Name: "event.send",
		Doc:  "Fire an event with tag and data; its cause is the event being reacted to.",
		Params: []Param{
			{Name: "tag", Kind: String, Required: true},
			{Name: "data", Kind: Map},
		},
		Run: func(ctx context.Context, in *Input) (any, error) {
			if err := in.Fire(ctx, in.String("tag"), in.Map("data")); err != nil {
				return nil, err
			}
			return true, nil
		},
	},
}

// NewWithBuiltins returns a registry holding Builtins.
func NewWithBuiltins() *Registry {
	r := New()
	for _, f := range Builtins {
		if err := r.Register(f); err != nil {
			panic(err) // Builtins are static; a failure is a bug in this file
		}
	}
	return r
}
