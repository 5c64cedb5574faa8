package saltutil

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
)

// syncKinds are Salt's saltutil.sync_* functions in sync_all's order: the
// function's name, the key of sync_all's return, and the file server
// directory Salt syncs from (salt://_<dir>).
var syncKinds = []struct{ fun, key, dir string }{
	{"sync_clouds", "clouds", "clouds"}, {"sync_beacons", "beacons", "beacons"},
	{"sync_modules", "modules", "modules"}, {"sync_states", "states", "states"},
	{"sync_sdb", "sdb", "sdb"}, {"sync_grains", "grains", "grains"},
	{"sync_renderers", "renderers", "renderers"}, {"sync_returners", "returners", "returners"},
	{"sync_output", "output", "output"}, {"sync_utils", "utils", "utils"},
	{"sync_log_handlers", "log_handlers", "log_handlers"}, {"sync_executors", "executors", "executors"},
	{"sync_proxymodules", "proxymodules", "proxy"}, {"sync_engines", "engines", "engines"},
	{"sync_thorium", "thorium", "thorium"}, {"sync_serializers", "serializers", "serializers"},
	{"sync_matchers", "matchers", "matchers"}, {"sync_pillar", "pillar", "pillar"},
}

// syncFuncs declares saltutil.sync_all and the sync_* functions, and
// refresh_modules. brine's modules are built into the agent: it loads no
// Python from salt://_modules and its kin, so a sync has nothing to bring
// and returns Salt's shape with nothing synced — formulas that call
// saltutil.sync_all before a highstate keep working. A file server that
// does hold such modules makes the sync an error naming them, since the
// formula expects functions brine will not have.
func syncFuncs(env *modules.Env) []function.Func {
	params := func(refresh bool) []function.Param {
		ps := []function.Param{{Name: "saltenv", Kind: function.Any}}
		if refresh {
			ps = append(ps, function.Param{Name: "refresh", Kind: function.Bool, Default: true})
		}
		return append(ps, function.Param{Name: "extmod_whitelist", Kind: function.Any},
			function.Param{Name: "extmod_blacklist", Kind: function.Any})
	}
	var fs []function.Func
	for _, k := range syncKinds {
		fs = append(fs, function.Func{
			Name: "saltutil." + k.fun, Params: params(k.fun != "sync_sdb"),
			Doc: fmt.Sprintf("Salt's sync of salt://_%s: [] (brine's modules are built in; custom Python %s in the file server are an error).", k.dir, k.key),
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if err := noCustom(ctx, env, in.Value("saltenv"), k.dir); err != nil {
					return nil, err
				}
				if (k.key == "grains" || k.key == "pillar") && in.Bool("refresh") {
					if err := refreshPillar(ctx, env); err != nil {
						return nil, err
					}
				}
				return []any{}, nil
			},
		})
	}
	fs = append(fs,
		function.Func{
			Name: "saltutil.sync_all",
			Doc:  "Salt's sync of every salt://_<kind> directory: {kind: []} (brine's modules are built in; custom Python modules in the file server are an error); refresh=True refreshes the pillar, as Salt.",
			Params: []function.Param{{Name: "saltenv", Kind: function.Any}, {Name: "refresh", Kind: function.Bool, Default: true},
				{Name: "extmod_whitelist", Kind: function.Any}, {Name: "extmod_blacklist", Kind: function.Any},
				{Name: "clean_pillar_cache", Kind: function.Bool, Default: false}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				out := map[string]any{}
				for _, k := range syncKinds {
					// Salt syncs pillar modules only on a masterless minion.
					if k.key == "pillar" && !masterless(env) {
						continue
					}
					if err := noCustom(ctx, env, in.Value("saltenv"), k.dir); err != nil {
						return nil, err
					}
					out[k.key] = []any{}
				}
				if in.Bool("refresh") {
					if err := refreshPillar(ctx, env); err != nil {
						return nil, err
					}
				}
				return out, nil
			},
		},
		function.Func{
			Name: "saltutil.refresh_modules", VarKwargs: true,
			Doc: "True: brine's modules are built in, there is nothing to reload.",
			Run: func(context.Context, *function.Input) (any, error) { return true, nil },
		},
	)
	return fs
}

// masterless says whether the agent runs without a master (Salt's
// file_client: local, which `brine call --local` sets too).
func masterless(env *modules.Env) bool {
	if env.Opts == nil {
		return env.Files == nil
	}
	return env.Opts()["file_client"] == "local"
}

// refreshPillar asks the master for the pillar again, as Salt's sync
// functions' refresh does; without a master there is none to refresh.
func refreshPillar(ctx context.Context, env *modules.Env) error {
	if env.Pillar == nil {
		return nil
	}
	_, err := env.Pillar(ctx, true)
	return err
}

// noCustom fails when the file server holds Python modules under
// salt://_<dir> in the environments saltenv names (a name, a
// comma-separated list or a list; base when not given): brine would
// silently not have what the formula syncs them for.
func noCustom(ctx context.Context, env *modules.Env, saltenv any, dir string) error {
	if env.Files == nil {
		return nil
	}
	var envs []string
	switch t := saltenv.(type) {
	case nil:
		envs = []string{"base"}
	case string:
		envs = strings.Split(t, ",")
	case []any:
		for _, e := range t {
			envs = append(envs, fmt.Sprint(e))
		}
	default:
		return fmt.Errorf("saltenv: want an environment name or a list, got %v", t)
	}
	for _, e := range envs {
		files, err := env.Files.List(ctx, strings.TrimSpace(e), "_"+dir+"/")
		if err != nil {
			return fmt.Errorf("listing salt://_%s in %s: %w", dir, e, err)
		}
		var custom []string
		for _, f := range files {
			if strings.HasSuffix(f, ".py") || strings.HasSuffix(f, ".pyx") {
				custom = append(custom, "salt://"+f)
			}
		}
		if len(custom) > 0 {
			return fmt.Errorf("brine runs no custom Python modules, and the file server holds some in %s: %s", e, py.ReprList(custom))
		}
	}
	return nil
}
