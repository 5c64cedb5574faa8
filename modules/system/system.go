// Package system is Salt's system execution module's power functions:
// reboot, shutdown, poweroff and halt, which run shutdown(8), poweroff(8)
// and halt(8) as Salt does.
//
// They are guarded: an agent refuses them unless its configuration says
// `allow_reboot: True`. A mistyped target or a reaction gone wrong should
// not be able to take a fleet down; the machines that may be rebooted
// remotely say so themselves.
package system

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/cmd"
)

// Guard is the agent option that allows the power functions.
const Guard = "allow_reboot"

// runner runs a command without a shell and returns its output (stderr
// merged, trailing whitespace stripped) and exit status: cmd.Run, or a
// recorder in tests.
type runner func(ctx context.Context, argv ...string) (string, int, error)

// Module declares the system functions.
func Module(env *modules.Env) []function.Func { return functions(env, cmd.Run) }

func functions(env *modules.Env, run runner) []function.Func {
	guard := " Refused unless the agent's configuration sets " + Guard + ": True."
	atTime := function.Param{Name: "at_time", Kind: function.Any}
	power := func(what string, argv func(*function.Input) ([]string, error)) function.Handler {
		return func(ctx context.Context, in *function.Input) (any, error) {
			if !allowed(env) {
				return nil, fmt.Errorf("%s: refused: this agent does not allow remote %s (set %s: True in its configuration to allow it)",
					in.Func, what, Guard)
			}
			args, err := argv(in)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", in.Func, err)
			}
			out, code, err := run(ctx, args...)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", in.Func, err)
			}
			// As cmd.run in Salt's function: the command's status is the job's.
			modules.SetRetcode(ctx, code)
			return out, nil
		}
	}
	fixed := func(argv ...string) func(*function.Input) ([]string, error) {
		return func(*function.Input) ([]string, error) { return argv, nil }
	}
	scheduled := func(flag string) func(*function.Input) ([]string, error) {
		return func(in *function.Input) ([]string, error) {
			when, err := when(in.Value("at_time"))
			if err != nil {
				return nil, err
			}
			return []string{"shutdown", flag, when}, nil
		}
	}
	return []function.Func{
		{
			Name: "system.reboot", Params: []function.Param{atTime}, Run: power("reboots", scheduled("-r")),
			Doc: "Reboot the machine (shutdown -r): now, or at_time minutes from now, or at a time \"hh:mm\"." + guard,
		},
		{
			Name: "system.shutdown", Params: []function.Param{atTime}, Run: power("shutdowns", scheduled("-h")),
			Doc: "Shut the machine down (shutdown -h): now, or at_time minutes from now, or at a time \"hh:mm\"." + guard,
		},
		{
			Name: "system.poweroff", Run: power("power-offs", fixed("poweroff")),
			Doc: "Power the machine off now (poweroff)." + guard,
		},
		{
			Name: "system.halt", Run: power("halts", fixed("halt")),
			Doc: "Halt the machine now (halt)." + guard,
		},
	}
}

// allowed reports whether the agent's configuration allows the power
// functions: the option must be the boolean true, not merely present.
func allowed(env *modules.Env) bool {
	if env.Opts == nil {
		return false
	}
	b, ok := env.Opts()[Guard].(bool)
	return ok && b
}

// timeSpec is what shutdown(8) takes as a time: now, +minutes, hh:mm.
var timeSpec = regexp.MustCompile(`^(now|\+[0-9]+|[0-9]{1,2}:[0-9]{2})$`)

// when reads at_time as shutdown's time: none is now, a number of minutes
// is "+N" (Salt passes the bare number, which systemd's shutdown refuses).
func when(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "now", nil
	case int64:
		if t < 0 {
			return "", fmt.Errorf("at_time must not be negative, got %d", t)
		}
		return "+" + strconv.FormatInt(t, 10), nil
	case float64:
		if t < 0 || t != float64(int64(t)) {
			return "", fmt.Errorf("at_time must be whole minutes, got %s", py.Str(t))
		}
		return "+" + strconv.FormatInt(int64(t), 10), nil
	case string:
		if n, err := strconv.ParseUint(t, 10, 32); err == nil {
			return "+" + strconv.FormatUint(n, 10), nil
		}
		if timeSpec.MatchString(t) {
			return t, nil
		}
	}
	return "", errors.New(`at_time must be minutes from now, "+minutes", "hh:mm" or "now", got ` + py.Str(v))
}
