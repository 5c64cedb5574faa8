package service

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/brinehq/brine/agent/agentsvc"
	"github.com/brinehq/brine/function"
)

// childFlag makes the test binary a service that runs until stopped
// (TestMain), for the SCM to start and stop in TestSCM.
const childFlag = "-brine-service-child="

func TestMain(m *testing.M) {
	for _, a := range os.Args[1:] {
		if name, ok := strings.CutPrefix(a, childFlag); ok {
			err := agentsvc.Run(context.Background(), name, func(ctx context.Context) error {
				<-ctx.Done()
				return nil
			})
			if err != nil {
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// The service functions drive a real service through the Service Control
// Manager (wine's, in CI) as Salt's win_service does.
func TestSCM(t *testing.T) {
	name := fmt.Sprintf("brine-svc-test-%d", os.Getpid())
	exe, _ := os.Executable()
	if err := agentsvc.Install(name, "brine service module test", exe, []string{childFlag + name}); err != nil {
		t.Fatalf("install: %v", err)
	}
	t.Cleanup(func() { _ = agentsvc.Remove(name) })
	reg := function.New()
	if err := reg.RegisterAll((&Manager{Self: "brine-agent"}).Funcs()); err != nil {
		t.Fatal(err)
	}
	call := func(fun string, args ...any) (any, error) {
		return reg.Call(context.Background(), fun, args, nil, nil)
	}
	for _, step := range []struct {
		fun  string
		arg  string
		want any
		err  string
	}{
		{"service.available", name, true, ""},
		{"service.missing", name, false, ""},
		{"service.available", "brine-no-such-service", false, ""},
		{"service.status", name, false, ""},
		{"service.enabled", name, true, ""},
		{"service.start", name, true, ""},
		{"service.status", name, true, ""},
		{"service.start", name, true, ""},
		{"service.restart", name, true, ""},
		{"service.status", name, true, ""},
		{"service.disable", name, true, ""},
		{"service.enabled", name, false, ""},
		{"service.disabled", name, true, ""},
		{"service.stop", name, true, ""},
		{"service.stop", name, true, ""},
		{"service.status", name, false, ""},
		// A disabled service is set to manual start to start it, as
		// win_service.start does.
		{"service.start", name, true, ""},
		{"service.disabled", name, true, ""},
		{"service.stop", name, true, ""},
		{"service.enable", name, true, ""},
		{"service.enabled", name, true, ""},
		{"service.reload", name, nil, "service.reload is not available on Windows"},
		{"service.status", "brine-no-such-service", nil, "the named service is not installed"},
		{"service.start", "brine-no-such-service", nil, "the named service is not installed"},
	} {
		got, err := call(step.fun, step.arg)
		if step.err != "" {
			if err == nil || !strings.Contains(err.Error(), step.err) {
				t.Fatalf("%s %s: %v, %v; want error %q", step.fun, step.arg, got, err, step.err)
			}
			continue
		}
		if err != nil || got != step.want {
			t.Fatalf("%s %s = %v, %v; want %v", step.fun, step.arg, got, err, step.want)
		}
	}
	for fun, want := range map[string]bool{"service.get_all": true, "service.get_enabled": true, "service.get_disabled": false} {
		got, err := call(fun)
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		list, _ := got.([]string)
		if slices.Contains(list, name) != want || !slices.IsSorted(list) {
			t.Errorf("%s: %s listed %v (want %v), sorted %v", fun, name, slices.Contains(list, name), want, slices.IsSorted(list))
		}
	}
}
