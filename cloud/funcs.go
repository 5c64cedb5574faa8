package cloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/brinehq/brine/function"
)

// Functions are the cloud runner functions, Salt's cloud runner: reactions
// call runner.cloud.profile and runner.cloud.destroy, operators `brine run`.
// They run in the master and fire the same events as `brine cloud`, caused
// by the event whose reaction called them (which loop protection follows).
type Functions struct {
	// Load reads the cloud configuration; it is called on every call, so
	// edited files apply without a restart.
	Load func() (*Config, error)
	// Openers are the drivers, by name.
	Openers map[string]Opener
	// Publisher fires the events of calls made with no cause (brine run).
	Publisher Publisher
	// Deployer is the deploy step; nil skips it with a warning.
	Deployer Deployer
	// Keys deletes destroyed VMs' agent keys; nil leaves them.
	Keys KeyDeleter
	// Log receives the lifecycle's messages (default: discard).
	Log *slog.Logger
}

// Funcs are cloud.profile, cloud.destroy and cloud.list.
func (f *Functions) Funcs() []function.Func {
	return []function.Func{
		{
			Name: "cloud.profile",
			Doc:  "Create instances from profile prof, like salt-cloud -p; existing ones are reported, not created again.",
			Params: []function.Param{
				{Name: "prof", Kind: function.String, Required: true, Aliases: []string{"profile"}},
				{Name: "instances", Kind: function.Any, Required: true, Aliases: []string{"names"}},
				{Name: "parallel", Kind: function.Int, Default: int64(DefaultParallel)},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return f.run(ctx, in, func(c *Cloud, names []string) (*Plan, error) { return c.PlanProfile(ctx, in.String("prof"), names) })
			},
		},
		{
			Name: "cloud.destroy",
			Doc:  "Destroy instances, like salt-cloud -d; names no provider has are reported as absent.",
			Params: []function.Param{
				{Name: "instances", Kind: function.Any, Required: true, Aliases: []string{"names"}},
				{Name: "parallel", Kind: function.Int, Default: int64(DefaultParallel)},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return f.run(ctx, in, func(c *Cloud, names []string) (*Plan, error) { return c.PlanDestroy(ctx, names) })
			},
		},
		{
			Name:     "cloud.list",
			Doc:      "List the nodes of provider (an alias, or all) with state, IPs and MACs, like salt-cloud -Q.",
			Params:   []function.Param{{Name: "provider", Kind: function.String, Default: "all"}},
			ReadOnly: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return f.list(ctx, in.String("provider"))
			},
		},
	}
}

// instanceNames reads Salt's instances: a list, or names separated by commas.
func instanceNames(in *function.Input) ([]string, error) {
	var names []string
	switch v := in.Value("instances").(type) {
	case string:
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	case []any:
		for _, x := range v {
			s, ok := x.(string)
			if !ok || s == "" {
				return nil, &function.ArgError{Func: in.Func, Arg: "instances", Err: fmt.Errorf("%w: want names, got %v", function.ErrArgumentType, x)}
			}
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		return nil, &function.ArgError{Func: in.Func, Arg: "instances", Err: fmt.Errorf("%w: want a name or a list of names", function.ErrArgumentType)}
	}
	return names, nil
}

func (f *Functions) open(in *function.Input) (*Cloud, error) {
	cfg, err := f.Load()
	if err != nil {
		return nil, err
	}
	log := f.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opts := []Option{WithLogger(log)}
	if f.Deployer != nil {
		opts = append(opts, WithDeployer(f.Deployer))
	}
	if f.Keys != nil {
		opts = append(opts, WithKeys(f.Keys))
	}
	return New(cfg, f.Openers, callPublisher{in: in, fallback: f.Publisher}, opts...), nil
}

// run plans and carries out one call; any failed VM fails the call (so a
// reaction retries it, which is safe: what exists is not made again).
func (f *Functions) run(ctx context.Context, in *function.Input, plan func(c *Cloud, names []string) (*Plan, error)) (any, error) {
	names, err := instanceNames(in)
	if err != nil {
		return nil, err
	}
	c, err := f.open(in)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	p, err := plan(c, names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Func, err)
	}
	out, err := Outcomes(c.Run(ctx, p, int(in.Int("parallel"))))
	if err != nil {
		return out, fmt.Errorf("%s: %w", in.Func, err)
	}
	return out, nil
}

func (f *Functions) list(ctx context.Context, provider string) (any, error) {
	c, err := f.open(nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	aliases := c.Config().ProviderNames()
	if provider != "all" {
		if _, ok := c.Config().Providers[provider]; !ok {
			return nil, fmt.Errorf("cloud.list: %w: unknown provider %q", ErrConfig, provider)
		}
		aliases = []string{provider}
	}
	out := map[string]any{}
	for _, alias := range aliases {
		nodes, err := c.nodesByName(ctx, alias)
		if err != nil {
			return nil, fmt.Errorf("cloud.list: %w", err)
		}
		out[alias] = nodes
	}
	return out, nil
}

// callPublisher fires through the call (so the events carry its cause),
// or through fallback when the caller gave no way to.
type callPublisher struct {
	in       *function.Input
	fallback Publisher
}

// Publish implements Publisher.
func (p callPublisher) Publish(ctx context.Context, tag string, data map[string]any) (string, error) {
	if p.in != nil {
		err := p.in.Fire(ctx, tag, data)
		if !errors.Is(err, function.ErrNoEvents) {
			return "", err
		}
	}
	if p.fallback == nil {
		return "", fmt.Errorf("firing %s: %w", tag, function.ErrNoEvents)
	}
	return p.fallback.Publish(ctx, tag, data)
}
