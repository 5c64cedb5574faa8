// Package config is Salt's config execution module: get, option, items,
// dot_vals and valid_fileproto, over the agent's configuration (Salt's
// __opts__), grains and pillar. The master's configuration Salt
// publishes in pillar["master"] is not there, nor Salt's built-in
// defaults for modules brine does not have (mongo.*, ldap.*, …).
package config

import (
	"context"
	"log/slog"
	"maps"
	"regexp"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/target"
)

// Module declares the config functions.
func Module(env *modules.Env) []function.Func {
	omit := func(name string) function.Param {
		return function.Param{Name: name, Kind: function.Bool, Default: false}
	}
	return []function.Func{
		{
			Name: "config.get", ReadOnly: true,
			Doc: "The value of key, nested keys separated by delimiter (default ':'), from the agent's configuration, " +
				"else its grains, else its pillar (else default, \"\"). merge=recurse or overwrite merges the pillar, " +
				"grains and configuration (which wins) before looking.",
			Params: []function.Param{
				{Name: "key", Kind: function.String, Required: true},
				{Name: "default", Kind: function.Any, Default: ""},
				{Name: "delimiter", Kind: function.String, Default: target.DefaultDelimiter},
				{Name: "merge", Kind: function.String},
				omit("omit_opts"), omit("omit_pillar"), omit("omit_master"), omit("omit_grains"),
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				key, delim := in.String("key"), in.String("delimiter")
				if in.Has("merge") {
					strategy := in.String("merge")
					if strategy != "recurse" && strategy != "overwrite" {
						logger(env).Warn("config.get: unsupported merge strategy; falling back to recurse", "merge", strategy)
						strategy = "recurse"
					}
					data := map[string]any{}
					if !in.Bool("omit_pillar") {
						data = merge(data, pillar(ctx, env), strategy)
					}
					data = merge(data, grains(env), strategy)
					data = merge(data, opts(env), strategy)
					if v, ok := target.Traverse(data, key, delim); ok {
						return v, nil
					}
					return in.Ordered(in.Value("default"), in.Order("default")), nil
				}
				for _, src := range sources(ctx, env, in.Bool("omit_opts"), in.Bool("omit_grains"), in.Bool("omit_pillar")) {
					if v, ok := target.Traverse(src, key, delim); ok {
						return v, nil
					}
				}
				// a default mapping iterates in the template's order
				return in.Ordered(in.Value("default"), in.Order("default")), nil
			},
		},
		{
			Name: "config.option", ReadOnly: true,
			Doc: "The value of the top-level key value in the agent's configuration, else its grains (else default, " +
				"\"\"); wildcard=True treats value as a glob and returns every match as a mapping.",
			Params: []function.Param{
				{Name: "value", Kind: function.String, Required: true},
				{Name: "default", Kind: function.Any},
				omit("omit_opts"), omit("omit_grains"), omit("omit_pillar"), omit("omit_master"), omit("omit_all"),
				{Name: "wildcard", Kind: function.Bool, Default: false},
			},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				all := in.Bool("omit_all")
				srcs := sources(ctx, env, all || in.Bool("omit_opts"), all || in.Bool("omit_grains"), all || in.Bool("omit_pillar"))
				value := in.String("value")
				if in.Bool("wildcard") {
					g := fnmatch.Compile(value)
					out := map[string]any{}
					// The first source wins: fill from the last.
					for i := len(srcs) - 1; i >= 0; i-- {
						for k, v := range srcs[i] {
							if g.Match(k) {
								out[k] = v
							}
						}
					}
					if len(out) == 0 && in.Value("default") != nil {
						return in.Value("default"), nil
					}
					return out, nil
				}
				for _, src := range srcs {
					if v, ok := src[value]; ok {
						return v, nil
					}
				}
				if d := in.Value("default"); d != nil {
					return d, nil
				}
				return "", nil
			},
		},
		{
			Name: "config.items", Doc: "The agent's whole configuration.", ReadOnly: true,
			Run: func(context.Context, *function.Input) (any, error) { return maps.Clone(opts(env)), nil },
		},
		{
			Name: "config.dot_vals", Doc: "The options named value.<something>, as a mapping.", ReadOnly: true,
			Params: []function.Param{{Name: "value", Kind: function.String, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				out := map[string]any{}
				for k, v := range opts(env) {
					if strings.HasPrefix(k, in.String("value")+".") {
						out[k] = v
					}
				}
				return out, nil
			},
		},
		{
			Name: "config.valid_fileproto", Doc: "Whether uri is a salt://, http(s):// or ftp:// URL.", ReadOnly: true,
			Params: []function.Param{{Name: "uri", Kind: function.String, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return fileProto.MatchString(in.String("uri")), nil
			},
		},
	}
}

var fileProto = regexp.MustCompile(`^(?:salt|https?|ftp)://`)

// sources are where values are looked up, in Salt's order: the agent's
// configuration, then its grains, then its pillar (then the master's
// configuration in Salt, which brine does not publish).
func sources(ctx context.Context, env *modules.Env, omitOpts, omitGrains, omitPillar bool) []map[string]any {
	var out []map[string]any
	if !omitOpts {
		out = append(out, opts(env))
	}
	if !omitGrains {
		out = append(out, grains(env))
	}
	if !omitPillar {
		out = append(out, pillar(ctx, env))
	}
	return out
}

// pillar is the pillar a call reads (a state run's, else the agent's).
func pillar(ctx context.Context, env *modules.Env) map[string]any {
	p, err := modules.PillarOf(ctx, env)
	if err != nil {
		logger(env).Warn("config: the pillar could not be read", "err", err)
		return map[string]any{}
	}
	return p
}

func opts(env *modules.Env) map[string]any {
	if env.Opts == nil {
		return map[string]any{}
	}
	return env.Opts()
}

func grains(env *modules.Env) map[string]any {
	if env.Grains == nil {
		return map[string]any{}
	}
	return env.Grains()
}

func logger(env *modules.Env) *slog.Logger {
	if env.Log != nil {
		return env.Log
	}
	return slog.New(slog.DiscardHandler)
}

// merge returns dst updated with src as Salt's dictupdate.merge: recurse
// merges mappings at every level, overwrite replaces top-level keys
// whole. Neither argument is changed.
func merge(dst, src map[string]any, strategy string) map[string]any {
	out := maps.Clone(dst)
	for k, v := range src {
		sub, isMap := v.(map[string]any)
		cur, curMap := out[k].(map[string]any)
		if strategy == "recurse" && isMap && curMap {
			out[k] = merge(cur, sub, strategy)
			continue
		}
		out[k] = v
	}
	return out
}
