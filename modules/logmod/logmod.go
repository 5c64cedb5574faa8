// Package logmod is Salt's log execution module (salt/modules/logmod.py):
// log.debug, info, warning, error, critical and exception write the
// message to the agent's log and return True, so that templates can
// {% do salt['log.info'](msg) %}.
package logmod

import (
	"context"
	"log/slog"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/modules"
)

// Module declares the log functions.
func Module(env *modules.Env) []function.Func {
	level := func(name string, lvl slog.Level) function.Func {
		return function.Func{
			Name: "log." + name, ReadOnly: true,
			Doc:    "Write message to the agent's log at " + name + " level; True.",
			Params: []function.Param{{Name: "message", Kind: function.Any, Required: true}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				logger := env.Log
				if logger == nil {
					logger = slog.Default()
				}
				logger.Log(ctx, lvl, jinja.PyStr(in.Value("message")), "module", "log")
				return true, nil
			},
		}
	}
	return []function.Func{
		level("debug", slog.LevelDebug),
		level("info", slog.LevelInfo),
		level("warning", slog.LevelWarn),
		level("error", slog.LevelError),
		level("critical", slog.LevelError+4),
		level("exception", slog.LevelError),
	}
}
