package modulestest

import (
	"context"
	"testing"

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

// Case is a template and what Salt 3006.6 renders for it; Name names the
// subtest ("" for the template itself). It is an unnamed struct type, so
// that a table lists its cases without field names.
type Case = struct{ Name, Text, Want string }

// CheckRenders renders each case's template (Render) and reports where
// the output or an error differs from Salt's.
func CheckRenders(t *testing.T, reg *function.Registry, cases []Case) {
	t.Helper()
	for _, c := range cases {
		name := c.Name
		if name == "" {
			name = c.Text
		}
		t.Run(name, func(t *testing.T) {
			got, err := Render(context.Background(), reg, c.Text)
			if err != nil || got != c.Want {
				t.Errorf("%s\n= %s, %v\nSalt: %s", c.Text, got, err, c.Want)
			}
		})
	}
}
