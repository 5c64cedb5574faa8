package jobs

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
)

func TestJobsRunnerFunctions(t *testing.T) {
	b := openBus(t)
	s := openStore(t, b, 0)
	ctx := context.Background()
	reg := function.New()
	if err := reg.RegisterAll(s.Funcs()); err != nil {
		t.Fatal(err)
	}
	run, job, state := NewJID(), NewJID(), NewJID()
	for _, e := range []struct {
		tag  string
		data map[string]any
	}{
		{RunTag(run, "new"), map[string]any{"fun": "runner.test.arg", "fun_args": []any{"hi"}, "jid": run, "user": "alice"}},
		{RunTag(run, "ret"), map[string]any{"fun": "runner.test.arg", "jid": run, "user": "alice", "return": "hi", "success": true}},
		{"salt/job/" + job + "/new", map[string]any{"jid": job, "tgt": "web*", "tgt_type": "glob", "fun": "cmd.run",
			"arg": []any{"uptime"}, "minions": []any{"web1", "web2"}, "user": "bob"}},
		{"salt/job/" + job + "/ret/web1", map[string]any{"id": "web1", "jid": job, "fun": "cmd.run", "return": "up 3 days", "retcode": 0, "success": true}},
		{"salt/job/" + state + "/new", map[string]any{"jid": state, "tgt": "web1", "tgt_type": "glob", "fun": "state.apply",
			"arg": []any{}, "minions": []any{"web1"}, "user": "bob"}},
		{"salt/job/" + state + "/ret/web1", map[string]any{"id": "web1", "jid": state, "fun": "state.apply", "return": map[string]any{},
			"retcode": 0, "success": true, "out": "highstate"}},
	} {
		if err := s.Record(ctx, event(t, e.tag, e.data)); err != nil {
			t.Fatal(err)
		}
	}
	call := func(name string, kw map[string]any) any {
		t.Helper()
		out, err := reg.Call(ctx, name, nil, kw, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	if got := call("jobs.lookup_jid", map[string]any{"jid": run}); got != "hi" {
		t.Errorf("lookup_jid of a runner job = %#v, want its return", got)
	}
	want := map[string]any{"web1": "up 3 days", "web2": "Minion did not return. [No response]"}
	if got := call("jobs.lookup_jid", map[string]any{"jid": job, "missing": true}); !reflect.DeepEqual(got, want) {
		t.Errorf("lookup_jid missing=True = %#v, want %#v", got, want)
	}
	// As Salt's, the outputter the function named travels with the returns.
	want = map[string]any{"outputter": "highstate", "data": map[string]any{"web1": map[string]any{}}}
	if got := call("jobs.lookup_jid", map[string]any{"jid": state}); !reflect.DeepEqual(got, want) {
		t.Errorf("lookup_jid of a state job = %#v, want %#v", got, want)
	}
	list := call("jobs.list_jobs", map[string]any{"search_function": "cmd.*"}).(map[string]any)
	if len(list) != 1 || list[job].(map[string]any)["Target"] != "web*" || list[job].(map[string]any)["User"] != "bob" {
		t.Errorf("list_jobs search_function=cmd.* = %#v", list)
	}
	pj := call("jobs.print_job", map[string]any{"jid": job}).(map[string]any)[job].(map[string]any)
	if pj["Function"] != "cmd.run" || pj["Target"] != "web*" || !reflect.DeepEqual(pj["Minions"], []string{"web1", "web2"}) ||
		!reflect.DeepEqual(pj["Result"], map[string]any{"web1": map[string]any{"return": "up 3 days", "retcode": int64(0), "success": true}}) {
		t.Errorf("print_job = %#v", pj)
	}
	if got := call("jobs.exit_success", map[string]any{"jid": job}); !reflect.DeepEqual(got, map[string]any{"web1": true, "web2": false}) {
		t.Errorf("exit_success = %#v, want web1 true and web2 (no return) false", got)
	}
	active := call("jobs.active", nil).(map[string]any)
	a, ok := active[job].(map[string]any)
	if len(active) != 1 || !ok || !reflect.DeepEqual(a["Returned"], []string{"web1"}) || !reflect.DeepEqual(a["Running"], []string{"web2"}) {
		t.Errorf("active = %#v", active)
	}
	if _, err := reg.Call(ctx, "jobs.list_jobs", nil, map[string]any{"start_time": "last tuesday"}, nil); err == nil {
		t.Error("list_jobs took a start_time it cannot read")
	}
}

// TestCloseOrphansEndsWhatTheMasterOwned: the runner jobs of a master that
// died stay "running" until its next start closes them as interrupted;
// jobs of other masters are left alone, and the re-run is found.
func TestCloseOrphansEndsWhatTheMasterOwned(t *testing.T) {
	b := openBus(t)
	s := openStore(t, b, 0)
	ctx := context.Background()
	go func() { _ = s.Run(ctx, b, "brine://test/jobs") }()
	cause := event(t, "salt/cloud/web1/created", nil)
	mine, other := NewRun("ddns.add_host", nil, map[string]any{"name": "web1"}, UserReactor, bus.Origin{Source: "brine://m1/reactor", Cause: cause}),
		NewRun("test.sleep", nil, nil, "bob", bus.Origin{Source: "brine://m2/run"})
	for _, r := range []*Run{mine, other} {
		if err := r.Begin(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	waitJob := func(jid string, ok func(*Job) bool) *Job {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if j, err := s.Get(ctx, jid); err == nil && ok(j) {
				return j
			}
		}
		t.Fatalf("job %s never got there", jid)
		return nil
	}
	waitJob(mine.JID, func(j *Job) bool { return j.Active() })
	waitJob(other.JID, func(j *Job) bool { return j.Active() })

	closed, _, err := s.CloseOrphans(ctx, b, []string{"brine://m1/run", "brine://m1/reactor"}, bus.Origin{Source: "brine://m1/jobs"}, nil)
	if err != nil || !reflect.DeepEqual(closed, []string{mine.JID}) {
		t.Fatalf("closed %v, %v; want only %s", closed, err, mine.JID)
	}
	j := waitJob(mine.JID, func(j *Job) bool { return !j.Active() })
	if !j.Interrupted || j.Success == nil || *j.Success || !strings.Contains(fmt.Sprint(j.Return), "interrupted") {
		t.Errorf("closed job %+v", j)
	}
	if o, _ := s.Get(ctx, other.JID); !o.Active() {
		t.Errorf("another master's job was closed: %+v", o)
	}
	rerun := NewRun("ddns.add_host", nil, map[string]any{"name": "web1"}, UserReactor, bus.Origin{Source: "brine://m1/reactor", Cause: cause})
	if err := rerun.Begin(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitJob(rerun.JID, func(*Job) bool { return true })
	if got, err := s.Rerun(ctx, j); err != nil || got != rerun.JID {
		t.Errorf("Rerun = %q, %v; want %s", got, err, rerun.JID)
	}
}
