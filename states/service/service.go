// Package service is Salt's service state module: service.running,
// service.dead, service.enabled, service.disabled and service.mod_watch
// (the restart or reload a watch requisite triggers), with Salt's
// arguments, changes ({name: True}) and comments.
//
// The states read and change services only through the service execution
// functions (status, start, stop, restart, reload, enable, disable,
// enabled, available), as Salt's states call __salt__: the init system
// (systemd or SysV) is chosen there, once.
package service

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// Module declares the service states for env's agent.
func Module(env *modules.Env) []function.Func {
	s := &states{env: env}
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	enable := function.Param{Name: "enable", Kind: function.Bool}
	sig := function.Param{Name: "sig", Kind: function.String}
	initDelay := function.Param{Name: "init_delay", Kind: function.Number}
	skipVerify := function.Param{Name: "skip_verify", Kind: function.Bool, Default: false}
	return []function.Func{
		{Name: "service.running",
			Doc: "Ensure a service runs; enable: True or False also sets whether it starts at boot. " +
				"init_delay waits after starting it; timeout waits (seconds) for it to report running.",
			Params: []function.Param{name, enable, sig, initDelay,
				{Name: "no_block", Kind: function.Bool, Default: false},
				{Name: "unmask", Kind: function.Bool, Default: false},
				{Name: "unmask_runtime", Kind: function.Bool, Default: false},
				{Name: "timeout", Kind: function.Number},
				{Name: "reload", Kind: function.Bool, Default: false},
				{Name: "full_restart", Kind: function.Bool, Default: false},
				{Name: "force", Kind: function.Bool, Default: false},
			},
			VarKwargs: true, Run: s.running},
		{Name: "service.dead",
			Doc:       "Ensure a service is stopped; enable: True or False also sets whether it starts at boot.",
			Params:    []function.Param{name, enable, sig, initDelay},
			VarKwargs: true, Run: s.dead},
		{Name: "service.enabled", Doc: "Ensure a service starts at boot, whether it runs or not.",
			Params: []function.Param{name, skipVerify}, VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				name := in.String("name")
				ret, err := s.boot(ctx, name, true, nil, true, in.Bool("skip_verify"))
				// As Salt's service.enabled: in test mode, a service a
				// state of the run may still install is pending.
				if err == nil && state.From(ctx).Test && ret.Comment == unavailable(name) {
					return state.Pending(name, fmt.Sprintf("Service %s not present; if created in this state run, it would have been enabled", name), nil), nil
				}
				return ret, err
			}},
		{Name: "service.disabled", Doc: "Ensure a service does not start at boot, whether it runs or not.",
			Params: []function.Param{name, skipVerify}, VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.boot(ctx, in.String("name"), false, nil, true, in.Bool("skip_verify"))
			}},
		{Name: "service.mod_watch",
			Doc: "What a watch requisite runs: for service.running, a restart (reload: True, a reload; " +
				"a stopped service is started); for service.dead, a stop.",
			Params: []function.Param{name, {Name: "sfun", Kind: function.String}, sig,
				{Name: "reload", Kind: function.Bool, Default: false},
				{Name: "full_restart", Kind: function.Bool, Default: false},
				initDelay,
				{Name: "force", Kind: function.Bool, Default: false},
			},
			VarKwargs: true, Run: s.modWatch},
	}
}

type states struct{ env *modules.Env }

// call runs an execution function of the agent.
func (s *states) call(ctx context.Context, fun string, kwargs map[string]any) (any, error) {
	return s.env.Call(ctx, fun, nil, kwargs)
}

// check runs a service function returning a boolean.
func (s *states) check(ctx context.Context, fun, name string, kwargs map[string]any) (bool, error) {
	args := map[string]any{"name": name}
	for k, v := range kwargs {
		args[k] = v
	}
	out, err := s.call(ctx, fun, args)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("%s returned %T, not a boolean", fun, out)
	}
	return b, nil
}

// status is service.status, with sig when given.
func (s *states) status(ctx context.Context, name, sig string) (bool, error) {
	if sig == "" {
		return s.check(ctx, "service.status", name, nil)
	}
	return s.check(ctx, "service.status", name, map[string]any{"sig": sig})
}

// unavailable is Salt's comment for a service the init system lacks.
func unavailable(name string) string {
	return fmt.Sprintf("The named service %s is not available", name)
}

func enabledUsed(name string) state.Result {
	return state.Failed(name, `Service %s uses non-existent option "enabled".  Perhaps "enable" option was intended?`, name)
}

// delay is init_delay as Python prints it.
func delay(in *function.Input) (time.Duration, string) {
	d := in.Float("init_delay")
	return time.Duration(d * float64(time.Second)), strconv.FormatFloat(d, 'f', -1, 64)
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// tristate is a state of the service at the time of a boot change, as
// Salt's _enable and _disable word it: running (true), dead (false) or
// as wanted (nil).
func tristate(b bool) *bool { return &b }

// boot is Salt's _enable (on) and _disable: it sets whether name starts
// at boot and says so in the words of started. result is the result
// when nothing fails.
func (s *states) boot(ctx context.Context, name string, on bool, started *bool, result, skipVerify bool) (state.Result, error) {
	ret := state.Result{Name: name, Result: state.Bool(result), Changes: map[string]any{}}
	if !skipVerify {
		ok, err := s.check(ctx, "service.available", name, nil)
		if err != nil {
			return state.Failed(name, "%v", err), nil
		}
		if !ok {
			if on {
				return state.Failed(name, "%s", unavailable(name)), nil
			}
			return state.Succeeded(name, unavailable(name), nil), nil
		}
	}
	how := "is in the desired state"
	switch {
	case started == nil:
	case *started:
		how = "is running"
	default:
		how = "is dead"
	}
	word, verb := "enabled", "service.enable"
	if !on {
		word, verb = "disabled", "service.disable"
	}
	isOn, err := s.check(ctx, "service.enabled", name, nil)
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	if isOn == on {
		ret.Comment = fmt.Sprintf("Service %s is already %s, and %s", name, word, how)
		return ret, nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Service %s set to be %s", name, word), map[string]any{}), nil
	}
	done, err := s.check(ctx, verb, name, nil)
	if err == nil && done {
		after, err := s.check(ctx, "service.enabled", name, nil)
		if err != nil {
			return state.Failed(name, "%v", err), nil
		}
		if after != isOn {
			ret.Changes[name] = true
		}
		ret.Comment = fmt.Sprintf("Service %s has been %s, and %s", name, word, how)
		return ret, nil
	}
	ret.Result = state.Bool(false)
	what := "start"
	if !on {
		what = "not start"
	}
	switch {
	case started == nil:
		ret.Comment = fmt.Sprintf("Failed when setting service %s to %s at boot, but the service was already running", name, what)
	case *started && on:
		ret.Comment = fmt.Sprintf("Failed when setting service %s to start at boot, but the service is running", name)
	case *started:
		ret.Comment = fmt.Sprintf("Failed when setting service %s to not start at boot, and is running", name)
	default:
		ret.Comment = fmt.Sprintf("Failed when setting service %s to %s at boot, and the service is dead", name, what)
	}
	if err != nil {
		ret.Comment += ". Additional information follows:\n\n" + err.Error()
	}
	return ret, nil
}

// merge is Python's ret.update(_enable(...)): the boot result's keys
// replace ret's; its changes only when it has any to say (Salt's _enable
// leaves them out when nothing was toggled, unless started is None).
func merge(ret, boot state.Result, resetChanges bool) state.Result {
	ret.Result, ret.Comment = boot.Result, boot.Comment
	if len(boot.Changes) > 0 || resetChanges {
		ret.Changes = boot.Changes
	}
	return ret
}

// begin is what running and dead start with: it reads whether the
// service runs and whether it starts at boot, or answers the state
// itself (done) when it was given "enabled" or cannot read them or the
// service is not installed: pending in test mode (a state of the run may
// still install it; it "would have been" verbed), else a failure or,
// with missingOK, a success.
func (s *states) begin(ctx context.Context, in *function.Input, verbed string, missingOK bool) (running, onBoot bool, done *state.Result) {
	name := in.String("name")
	answer := func(r state.Result) (bool, bool, *state.Result) { return false, false, &r }
	if _, ok := in.ExtraKwargs["enabled"]; ok {
		return answer(enabledUsed(name))
	}
	ok, err := s.check(ctx, "service.available", name, nil)
	switch {
	case err != nil:
		return answer(state.Failed(name, "%v", err))
	case ok:
	case state.From(ctx).Test:
		return answer(state.Pending(name, fmt.Sprintf("Service %s not present; if created in this state run, it would have been %s", name, verbed), nil))
	case missingOK:
		return answer(state.Succeeded(name, unavailable(name), nil))
	default:
		return answer(state.Failed(name, "%s", unavailable(name)))
	}
	if running, err = s.status(ctx, name, in.String("sig")); err != nil {
		return answer(state.Failed(name, "%v", err))
	}
	if onBoot, err = s.check(ctx, "service.enabled", name, nil); err != nil {
		return answer(state.Failed(name, "%v", err))
	}
	return running, onBoot, nil
}

// alsoBoot merges into ret (as merge, with resetChanges) the boot
// setting _enable or _disable make when the state was given enable:
// running and dead change it only then.
func (s *states) alsoBoot(ctx context.Context, ret state.Result, in *function.Input, started *bool, result, resetChanges bool) (state.Result, error) {
	if !in.Has("enable") {
		return ret, nil
	}
	b, err := s.boot(ctx, ret.Name, in.Bool("enable"), started, result, false)
	if err != nil {
		return state.Result{}, err
	}
	return merge(ret, b, resetChanges), nil
}

// final is a state function's answer: ret, or no result when making it
// failed.
func final(ret state.Result, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return ret, nil
}

// record puts in ret's changes, as Salt's running and dead do,
// {name: running now} when the service runs or starts at boot otherwise
// than it did before the state.
func (s *states) record(ctx context.Context, ret state.Result, name string, before, beforeOn, after bool) error {
	afterOn, err := s.check(ctx, "service.enabled", name, nil)
	if err != nil {
		return err
	}
	if beforeOn != afterOn || before != after {
		ret.Changes[name] = after
	}
	return nil
}

// startArgs are the systemd arguments of service.start given to running.
func startArgs(in *function.Input) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"no_block", "unmask", "unmask_runtime"} {
		if in.Bool(k) {
			out[k] = true
		}
	}
	return out
}

func (s *states) running(ctx context.Context, in *function.Input) (any, error) {
	name, sig := in.String("name"), in.String("sig")
	test := state.From(ctx).Test
	before, beforeOn, done := s.begin(ctx, in, "started", false)
	if done != nil {
		return *done, nil
	}
	ret := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{}}
	if before {
		ret.Comment = fmt.Sprintf("The service %s is already running", name)
		if test {
			return ret, nil
		}
		if in.Bool("enable") == beforeOn {
			return ret, nil
		}
		return final(s.alsoBoot(ctx, ret, in, nil, true, true))
	}
	if test {
		return state.Pending(name, fmt.Sprintf("Service %s is set to start", name), map[string]any{}), nil
	}
	started, err := s.check(ctx, "service.start", name, startArgs(in))
	if err != nil || !started {
		ret = state.Failed(name, "Service %s failed to start", name)
		ret.Changes = map[string]any{}
		return final(s.alsoBoot(ctx, ret, in, tristate(false), false, false))
	}
	d, ds := delay(in)
	sleep(ctx, d)
	after, err := s.status(ctx, name, sig)
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	// timeout: a service that forks its daemon may report running a
	// little after its start returned.
	deadline := time.Now().Add(time.Duration(in.Float("timeout") * float64(time.Second)))
	for !after && time.Now().Before(deadline) && ctx.Err() == nil {
		sleep(ctx, 200*time.Millisecond)
		if after, err = s.status(ctx, name, sig); err != nil {
			return state.Failed(name, "%v", err), nil
		}
	}
	if err := s.record(ctx, ret, name, before, beforeOn, after); err != nil {
		return state.Failed(name, "%v", err), nil
	}
	if after {
		ret.Comment = fmt.Sprintf("Started service %s", name)
	} else {
		ret.Comment = fmt.Sprintf("Service %s failed to start", name)
		ret.Result = state.Bool(false)
	}
	if ret, err = s.alsoBoot(ctx, ret, in, tristate(after), after, false); err != nil {
		return nil, err
	}
	if d > 0 {
		ret.Comment = fmt.Sprintf("%s\nDelayed return for %s seconds", ret.Comment, ds)
	}
	return ret, nil
}

func (s *states) dead(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	test := state.From(ctx).Test
	// Not installed is as dead as can be.
	before, beforeOn, done := s.begin(ctx, in, "stopped", true)
	if done != nil {
		return *done, nil
	}
	ret := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{}}
	if !before {
		ret.Comment = fmt.Sprintf("The service %s is already dead", name)
		if in.Bool("enable") == beforeOn {
			return ret, nil
		}
		return final(s.alsoBoot(ctx, ret, in, nil, true, true))
	}
	if test {
		return state.Pending(name, fmt.Sprintf("Service %s is set to be killed", name), map[string]any{}), nil
	}
	stopped, err := s.check(ctx, "service.stop", name, nil)
	if err != nil || !stopped {
		ret = state.Failed(name, "Service %s failed to die", name)
		ret.Changes = map[string]any{}
		return final(s.alsoBoot(ctx, ret, in, tristate(true), false, false))
	}
	d, _ := delay(in)
	sleep(ctx, d)
	after, err := s.status(ctx, name, "")
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	if err := s.record(ctx, ret, name, before, beforeOn, after); err != nil {
		return state.Failed(name, "%v", err), nil
	}
	if after {
		ret.Result = state.Bool(false)
		ret.Comment = fmt.Sprintf("Service %s failed to die", name)
	} else {
		ret.Comment = fmt.Sprintf("Service %s was killed", name)
	}
	return final(s.alsoBoot(ctx, ret, in, tristate(after), !after, false))
}

func (s *states) modWatch(ctx context.Context, in *function.Input) (any, error) {
	name, sig := in.String("name"), in.String("sig")
	var fun, verb, done string
	switch sfun := in.String("sfun"); sfun {
	case "dead":
		verb, done = "stop", "stopped"
		on, err := s.status(ctx, name, sig)
		if err != nil {
			return state.Failed(name, "%v", err), nil
		}
		if !on {
			return state.Succeeded(name, "Service is already stopped", nil), nil
		}
		fun = "service.stop"
	case "running":
		on, err := s.status(ctx, name, sig)
		if err != nil {
			return state.Failed(name, "%v", err), nil
		}
		switch {
		case !on:
			fun, verb = "service.start", "start"
		case in.Bool("reload"):
			fun, verb = "service.reload", "reload"
		default:
			fun, verb = "service.restart", "restart"
		}
		done = verb + "ed"
	default:
		return state.Failed(name, "Unable to trigger watch for service.%s", sfun), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, "Service is set to be "+done, map[string]any{}), nil
	}
	if verb == "start" {
		// As Salt: a stale pid file or half-started service is cleared
		// before starting.
		_, _ = s.check(ctx, "service.stop", name, nil)
	}
	ok, err := s.check(ctx, fun, name, nil)
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	d, _ := delay(in)
	sleep(ctx, d)
	ret := state.Result{Name: name, Result: state.Bool(ok), Changes: map[string]any{name: ok}}
	if ok {
		ret.Comment = "Service " + done
	} else {
		ret.Comment = fmt.Sprintf("Failed to %s the service", verb)
	}
	return ret, nil
}
