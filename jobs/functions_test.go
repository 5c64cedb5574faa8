package jobs

import (
	"context"
	"reflect"
	"testing"

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
	run, job := NewJID(), NewJID()
	for _, e := range []struct {
		tag  string
		data map[string]any
	}{
		{RunTag(run, "new"), map[string]any{"fun": "runner.test.arg", "fun_args": []any{"hi"}, "jid": run, "user": "alice"}},
		{RunTag(run, "ret"), map[string]any{"fun": "runner.test.arg", "jid": run, "user": "alice", "return": "hi", "success": true}},
		{"salt/job/" + job + "/new", map[string]any{"jid": job, "tgt": "web*", "tgt_type": "glob", "fun": "cmd.run",
			"arg": []any{"uptime"}, "minions": []any{"web1", "web2"}, "user": "bob"}},
		{"salt/job/" + job + "/ret/web1", map[string]any{"id": "web1", "jid": job, "fun": "cmd.run", "return": "up 3 days", "retcode": 0, "success": true}},
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
	list := call("jobs.list_jobs", map[string]any{"search_function": "cmd.*"}).(map[string]any)
	if len(list) != 1 || list[job].(map[string]any)["Target"] != "web*" || list[job].(map[string]any)["User"] != "bob" {
		t.Errorf("list_jobs search_function=cmd.* = %#v", list)
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
