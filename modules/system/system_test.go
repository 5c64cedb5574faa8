package system

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// recorder stands for the command runner: it records what would run.
type recorder struct {
	argv [][]string
	out  string
	code int
	err  error
}

func (r *recorder) run(_ context.Context, argv ...string) (string, int, error) {
	r.argv = append(r.argv, argv)
	return r.out, r.code, r.err
}

func registry(t *testing.T, opts map[string]any, rec *recorder) *function.Registry {
	t.Helper()
	env := &modules.Env{}
	if opts != nil {
		env.Opts = func() map[string]any { return opts }
	}
	reg, err := modules.Registry(env, func(env *modules.Env) []function.Func { return functions(env, rec.run) })
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestRefusedWithoutTheGuard(t *testing.T) {
	for _, opts := range []map[string]any{nil, {}, {"allow_reboot": false}, {"allow_reboot": "yes"}, {"allow_reboot": 1}} {
		rec := &recorder{}
		reg := registry(t, opts, rec)
		for _, fun := range []string{"system.reboot", "system.shutdown", "system.poweroff", "system.halt"} {
			_, err := reg.Call(context.Background(), fun, nil, nil, nil)
			if err == nil || !strings.Contains(err.Error(), fun+": refused") || !strings.Contains(err.Error(), "allow_reboot: True") {
				t.Errorf("%s with %v: %v", fun, opts, err)
			}
		}
		if len(rec.argv) != 0 {
			t.Errorf("with %v, ran %v", opts, rec.argv)
		}
	}
}

func TestRunsWithTheGuard(t *testing.T) {
	rec := &recorder{out: "Shutdown scheduled", code: 0}
	reg := registry(t, map[string]any{"allow_reboot": true}, rec)
	cases := []struct {
		fun  string
		args []any
		want []string
		err  string
	}{
		{"system.reboot", nil, []string{"shutdown", "-r", "now"}, ""},
		{"system.reboot", []any{5}, []string{"shutdown", "-r", "+5"}, ""},
		{"system.reboot", []any{"10"}, []string{"shutdown", "-r", "+10"}, ""},
		{"system.reboot", []any{"+3"}, []string{"shutdown", "-r", "+3"}, ""},
		{"system.reboot", []any{"22:30"}, []string{"shutdown", "-r", "22:30"}, ""},
		{"system.shutdown", nil, []string{"shutdown", "-h", "now"}, ""},
		{"system.shutdown", []any{2.0}, []string{"shutdown", "-h", "+2"}, ""},
		{"system.shutdown", []any{"now"}, []string{"shutdown", "-h", "now"}, ""},
		{"system.poweroff", nil, []string{"poweroff"}, ""},
		{"system.halt", nil, []string{"halt"}, ""},
		{"system.reboot", []any{"-c"}, nil, "at_time must be"},
		{"system.reboot", []any{"tomorrow"}, nil, "at_time must be"},
		{"system.reboot", []any{-1}, nil, "must not be negative"},
		{"system.shutdown", []any{1.5}, nil, "whole minutes"},
		{"system.halt", []any{1}, nil, "unexpected argument"},
	}
	for _, tc := range cases {
		rec.argv = nil
		got, err := reg.Call(context.Background(), tc.fun, tc.args, nil, nil)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || len(rec.argv) != 0 {
				t.Errorf("%s %v: err = %v, ran %v; want %q", tc.fun, tc.args, err, rec.argv, tc.err)
			}
			continue
		}
		if err != nil || got != "Shutdown scheduled" || !reflect.DeepEqual(rec.argv, [][]string{tc.want}) {
			t.Errorf("%s %v = %v, %v; ran %v, want %v", tc.fun, tc.args, got, err, rec.argv, tc.want)
		}
	}
}

func TestCommandStatusIsTheJobs(t *testing.T) {
	rec := &recorder{out: "Failed to talk to init daemon.", code: 1}
	reg := registry(t, map[string]any{"allow_reboot": true}, rec)
	ctx, rc := modules.WithRetcode(context.Background())
	got, err := reg.Call(ctx, "system.reboot", nil, nil, nil)
	if err != nil || got != "Failed to talk to init daemon." || rc.Load() != 1 {
		t.Errorf("system.reboot = %v, %v, retcode %d", got, err, rc.Load())
	}
	rec.err = errors.New(`run ['shutdown', '-r', 'now']: [Errno 2] No such file or directory: 'shutdown'`)
	if _, err := reg.Call(context.Background(), "system.reboot", nil, nil, nil); err == nil || !strings.Contains(err.Error(), "system.reboot: run") {
		t.Errorf("system.reboot without shutdown: %v", err)
	}
}

func TestModuleRefusesByDefault(t *testing.T) {
	// Refused: nothing runs, whatever the machine.
	reg, err := modules.Registry(&modules.Env{Opts: func() map[string]any { return map[string]any{} }}, Module)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Call(context.Background(), "system.reboot", nil, nil, nil); err == nil {
		t.Fatal("system.reboot ran without allow_reboot")
	}
}
