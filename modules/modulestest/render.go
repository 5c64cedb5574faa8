package modulestest

import (
	"context"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/state"
)

// Render is text rendered as an SLS file's Jinja is, its `salt` calling
// reg's functions as a state run's templates call them (jinja.Salt):
// what a module's functions give a template, key order included.
func Render(ctx context.Context, reg *function.Registry, text string) (string, error) {
	salt := jinja.Salt(reg.Names(), func(name string, args []any, kwargs map[string]any) (any, error) {
		return reg.Call(ctx, name, args, kwargs, nil)
	})
	out, err := state.NewRenderer().Jinja(ctx, nil, "base", "test.sls", []byte(text), map[string]any{"salt": salt})
	return string(out), err
}
