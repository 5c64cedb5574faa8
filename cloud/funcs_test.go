package cloud_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/cloud/vmware"
	"github.com/brinehq/brine/function"
)

func TestRunnerFunctions(t *testing.T) {
	e := newEnv(t, true)
	reg := function.New()
	fns := &cloud.Functions{
		Load:      func() (*cloud.Config, error) { return cloud.LoadConfig(e.dir) },
		Openers:   map[string]cloud.Opener{vmware.Driver: vmware.Open},
		Publisher: e.pub,
	}
	if err := reg.RegisterAll(fns.Funcs()); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)

	// A reaction's call: the events it fires carry the triggering event as cause.
	cause, err := bus.NewEvent("myco/scale/up", nil, bus.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	fire := func(ctx context.Context, tag string, data map[string]any) error {
		ev, err := bus.NewEvent(tag, data, bus.Origin{Source: "brine://test/reactor", Cause: cause})
		if err != nil {
			return err
		}
		return e.bus.Publish(ctx, ev)
	}
	out, err := reg.Call(ctx, "cloud.profile", nil, map[string]any{"prof": "nodeploy", "instances": []any{"f1", "f2"}}, fire)
	if err != nil {
		t.Fatal(err)
	}
	res := out.(map[string]any)
	for _, n := range []string{"f1", "f2"} {
		if r, _ := res[n].(map[string]any); r["status"] != "created" || r["ip_address"] == "" {
			t.Errorf("%s: %v", n, res[n])
		}
	}
	for _, ev := range e.eventsOf("f1", len(createSequence)) {
		if ev.Cause != cause.ID || ev.Depth != 1 {
			t.Errorf("%s: cause %q depth %d, want %q 1", ev.Tag, ev.Cause, ev.Depth, cause.ID)
		}
	}

	// brine run: no cause, the fallback publisher; "a,b" names work as in Salt.
	out, err = reg.Call(ctx, "cloud.profile", []any{"nodeploy", "f2,f3"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res = out.(map[string]any)
	if res["f2"].(map[string]any)["status"] != "exists" || res["f3"].(map[string]any)["status"] != "created" {
		t.Errorf("%v", res)
	}

	out, err = reg.Call(ctx, "cloud.list", nil, map[string]any{"provider": "vcenter"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	nodes := out.(map[string]any)["vcenter"].(map[string]*cloud.Node)
	if nodes["f1"] == nil || nodes["f3"] == nil || nodes["linux-template"] != nil {
		t.Errorf("cloud.list: %v", nodes)
	}

	out, err = reg.Call(ctx, "cloud.destroy", nil, map[string]any{"instances": "f1,nope"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res = out.(map[string]any)
	if res["f1"].(map[string]any)["status"] != "destroyed" || res["nope"].(map[string]any)["status"] != "absent" {
		t.Errorf("%v", res)
	}

	// Bad arguments name the argument.
	var ae *function.ArgError
	if _, err := reg.Call(ctx, "cloud.profile", nil, map[string]any{"prof": "nodeploy", "instances": []any{}}, nil); !errors.As(err, &ae) || ae.Arg != "instances" {
		t.Errorf("empty instances: %v", err)
	}
	if _, err := reg.Call(ctx, "cloud.profile", nil, map[string]any{"prof": "ghost", "instances": "x"}, nil); !errors.Is(err, cloud.ErrConfig) {
		t.Errorf("unknown profile: %v", err)
	}
}

func TestRunnerFunctionFailsWhenAVMFails(t *testing.T) {
	e := newEnv(t, false) // no DHCP: no IP within the timeout
	e.write("cloud.profiles.d/zz-slow.conf", "slow:\n  provider: vcenter\n  clonefrom: linux-template\n  cluster: DC0_C0\n  wait_for_ip_timeout: 0.5\n")
	reg := function.New()
	fns := &cloud.Functions{
		Load:      func() (*cloud.Config, error) { return cloud.LoadConfig(e.dir) },
		Openers:   map[string]cloud.Opener{vmware.Driver: vmware.Open},
		Publisher: e.pub,
	}
	if err := reg.RegisterAll(fns.Funcs()); err != nil {
		t.Fatal(err)
	}
	out, err := reg.Call(ctxT(t), "cloud.profile", nil, map[string]any{"prof": "slow", "instances": "s1"}, nil)
	if !errors.Is(err, cloud.ErrIPTimeout) && (err == nil || !strings.Contains(err.Error(), "1 of 1 VMs failed")) {
		t.Errorf("err %v", err)
	}
	if r, _ := out.(map[string]any)["s1"].(map[string]any); r["status"] != "failed" || r["step"] != "querying" {
		t.Errorf("result %v", out)
	}
}
