package jobs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/function"
)

func openBus(t *testing.T) *natsbus.Bus {
	t.Helper()
	ctx := context.Background()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func openStore(t *testing.T, b *natsbus.Bus, keep time.Duration) *Store {
	t.Helper()
	kv, err := b.Bucket(context.Background(), BucketConfig(keep))
	if err != nil {
		t.Fatal(err)
	}
	return NewStore(kv, nil)
}

func event(t *testing.T, tag string, data map[string]any) *bus.Event {
	t.Helper()
	ev, err := bus.NewEvent(tag, data, bus.Origin{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// collect subscribes to pattern and returns a function waiting for n events.
func collect(t *testing.T, b bus.Bus, pattern string) func(n int) []*bus.Event {
	t.Helper()
	var mu sync.Mutex
	var got []*bus.Event
	sub, err := b.Subscribe(context.Background(), bus.SubscribeOptions{Pattern: pattern}, func(ev *bus.Event) {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	return func(n int) []*bus.Event {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			mu.Lock()
			if len(got) >= n {
				out := append([]*bus.Event(nil), got...)
				mu.Unlock()
				return out
			}
			mu.Unlock()
			if time.Now().After(deadline) {
				t.Fatalf("got %d events on %s, want %d", len(got), pattern, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestCallFiresSaltRunnerEvents(t *testing.T) {
	b := openBus(t)
	wait := collect(t, b, "salt/run/*")
	funcs := function.NewWithBuiltins()
	ctx := context.Background()
	cause := event(t, "myco/trigger", nil)

	res, err := Call(ctx, funcs, b, "test.arg", []any{"hello"}, map[string]any{"color": "red"}, "alice",
		bus.Origin{Source: "brine://test", Cause: cause})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || !IsJID(res.JID) || res.Fun != "runner.test.arg" {
		t.Fatalf("result %+v", res)
	}
	_, err = Call(ctx, funcs, b, "test.exception", nil, map[string]any{"message": "boom"}, UserReactor, bus.Origin{Source: "brine://test"})
	if err == nil || err.Error() != "boom" {
		t.Fatalf("failing function: err %v, want boom", err)
	}
	// The function gets the secret; the events and the result do not.
	var got any
	if err := funcs.Register(function.Func{Name: "secret.take", VarKwargs: true, Run: func(_ context.Context, in *function.Input) (any, error) {
		got = in.ExtraKwargs["password"]
		return map[string]any{"password": got}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	secret, err := Call(ctx, funcs, b, "test.arg", []any{"xoxb-1-2-abcdef"}, map[string]any{"password": "hunter2"}, "alice", bus.Origin{Source: "brine://test"})
	if err != nil {
		t.Fatal(err)
	}
	if ret := secret.Return.(map[string]any)["kwargs"].(map[string]any)["password"]; ret != Masked {
		t.Errorf("the result shows password %v, want it masked", ret)
	}
	taken, err := Call(ctx, funcs, b, "secret.take", nil, map[string]any{"password": "hunter2"}, "alice", bus.Origin{Source: "brine://test"})
	if err != nil || got != "hunter2" || taken.Return.(map[string]any)["password"] != Masked {
		t.Errorf("the function got %v (want the secret), returned %v (want it masked), %v", got, taken.Return, err)
	}

	evs := wait(6)
	for _, ev := range evs[4:5] {
		d, _ := ev.DataMap()
		if want := []any{Masked, map[string]any{"password": Masked}}; !reflect.DeepEqual(d["fun_args"], want) {
			t.Errorf("%s: fun_args %v, want %v", ev.Tag, d["fun_args"], want)
		}
	}
	wantFunArgs := []any{"hello", map[string]any{"color": "red"}}
	tests := []struct {
		tag  string
		want map[string]any
	}{
		{RunTag(res.JID, "new"), map[string]any{"fun": "runner.test.arg", "fun_args": wantFunArgs, "jid": res.JID, "user": "alice"}},
		{RunTag(res.JID, "ret"), map[string]any{"fun": "runner.test.arg", "fun_args": wantFunArgs, "jid": res.JID, "user": "alice",
			"success": true, "return": map[string]any{"args": []any{"hello"}, "kwargs": map[string]any{"color": "red"}}}},
		{"", map[string]any{"fun": "runner.test.exception", "user": UserReactor}},
		{"", map[string]any{"success": false, "return": "Exception occurred in runner test.exception: boom"}},
	}
	for i, tt := range tests {
		ev := evs[i]
		if tt.tag != "" && ev.Tag != tt.tag {
			t.Errorf("event %d: tag %s, want %s", i, ev.Tag, tt.tag)
		}
		d, err := ev.DataMap()
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tt.want {
			if !reflect.DeepEqual(d[k], v) {
				t.Errorf("event %d %s: %s = %#v, want %#v", i, ev.Tag, k, d[k], v)
			}
		}
		if _, ok := d["_stamp"]; !ok {
			t.Errorf("event %d: no _stamp", i)
		}
	}
	if evs[0].Cause != cause.ID || evs[0].Depth != 1 || evs[1].Depth != 1 {
		t.Errorf("job events caused by %s: cause %q depth %d/%d, want depth 1", cause.ID, evs[0].Cause, evs[0].Depth, evs[1].Depth)
	}
	if d, _ := evs[1].DataMap(); d["duration"] == nil {
		t.Error("ret has no duration")
	}
}

func TestReactionUser(t *testing.T) {
	tests := []struct {
		cause *bus.Event
		want  string
	}{
		{nil, UserReactor},
		{&bus.Event{Tag: "salt/cloud/web1/created"}, UserReactor},
		{&bus.Event{Tag: "salt/netapi/hook/deploy/github"}, "hook:deploy/github"},
	}
	for _, tt := range tests {
		if got := ReactionUser(tt.cause); got != tt.want {
			t.Errorf("ReactionUser(%v) = %q, want %q", tt.cause, got, tt.want)
		}
	}
}

func TestParseTag(t *testing.T) {
	const jid = "20261122004512123456"
	tests := []struct {
		tag                string
		kind, what, minion string
		ok                 bool
	}{
		{"salt/run/" + jid + "/new", KindRun, "new", "", true},
		{"salt/run/" + jid + "/ret", KindRun, "ret", "", true},
		{"salt/job/" + jid + "/new", KindJob, "new", "", true},
		{"salt/job/" + jid + "/ret/web1", KindJob, "ret", "web1", true},
		{"salt/job/" + jid + "_123/ret/web1", KindJob, "ret", "web1", true},
		{"salt/job/" + jid + "/prog/web1/0", "", "", "", false},
		{"salt/job/" + jid + "/ret/", "", "", "", false},
		{"salt/run/" + jid + "/args", "", "", "", false},
		{"salt/job/notajid/new", "", "", "", false},
		{"salt/cloud/web1/created", "", "", "", false},
	}
	for _, tt := range tests {
		kind, _, what, minion, ok := ParseTag(tt.tag)
		if kind != tt.kind || what != tt.what || minion != tt.minion || ok != tt.ok {
			t.Errorf("ParseTag(%q) = %q %q %q %v, want %q %q %q %v", tt.tag, kind, what, minion, ok, tt.kind, tt.what, tt.minion, tt.ok)
		}
	}
}

func TestRecordMergesEventsInAnyOrder(t *testing.T) {
	b := openBus(t)
	s := openStore(t, b, 0)
	ctx := context.Background()
	type step struct {
		tag  string
		data map[string]any
	}
	tests := []struct {
		name   string
		steps  func(jid string) []step
		active bool
		check  func(t *testing.T, j *Job)
	}{
		{
			name: "runner new then ret",
			steps: func(jid string) []step {
				return []step{
					{RunTag(jid, "new"), map[string]any{"fun": "runner.test.arg", "fun_args": []any{"hello"}, "jid": jid, "user": "alice"}},
					{RunTag(jid, "ret"), map[string]any{"fun": "runner.test.arg", "fun_args": []any{"hello"}, "jid": jid, "user": "alice",
						"return": "hello", "success": true, "duration": 0.25}},
				}
			},
			check: func(t *testing.T, j *Job) {
				if j.Kind != KindRun || j.Fun != "runner.test.arg" || j.User != "alice" || j.Return != "hello" ||
					j.Success == nil || !*j.Success || j.Duration != 0.25 || !reflect.DeepEqual(j.Arg, []any{"hello"}) {
					t.Errorf("job %+v", j)
				}
			},
		},
		{
			name: "runner ret before new",
			steps: func(jid string) []step {
				return []step{
					{RunTag(jid, "ret"), map[string]any{"fun": "runner.x.y", "jid": jid, "user": "bob", "return": "no", "success": false}},
					{RunTag(jid, "new"), map[string]any{"fun": "runner.x.y", "fun_args": []any{}, "jid": jid, "user": "bob"}},
				}
			},
			check: func(t *testing.T, j *Job) {
				if j.Success == nil || *j.Success || j.Event == "" || j.User != "bob" {
					t.Errorf("job %+v", j)
				}
			},
		},
		{
			name: "runner still running",
			steps: func(jid string) []step {
				return []step{{RunTag(jid, "new"), map[string]any{"fun": "runner.test.sleep", "jid": jid, "user": "alice"}}}
			},
			active: true,
		},
		{
			name: "targeted job, one minion missing",
			steps: func(jid string) []step {
				return []step{
					{"salt/job/" + jid + "/new", map[string]any{"jid": jid, "tgt": "roles:nginx", "tgt_type": "grain", "fun": "cmd.run",
						"arg": []any{"nginx restart"}, "minions": []any{"web1", "web2"}, "missing": []any{}, "user": "root"}},
					{"salt/job/" + jid + "/ret/web1", map[string]any{"cmd": "_return", "id": "web1", "jid": jid, "fun": "cmd.run",
						"fun_args": []any{"nginx restart"}, "return": "ok", "retcode": 0, "success": true}},
				}
			},
			active: true,
			check: func(t *testing.T, j *Job) {
				if !reflect.DeepEqual(j.Missing(), []string{"web2"}) || j.Tgt != "roles:nginx" || j.TgtType != "grain" {
					t.Errorf("job %+v, missing %v", j, j.Missing())
				}
			},
		},
		{
			name: "targeted job complete, rets first",
			steps: func(jid string) []step {
				return []step{
					{"salt/job/" + jid + "/ret/web2", map[string]any{"id": "web2", "jid": jid, "fun": "cmd.run", "return": "fail", "retcode": 1, "success": false}},
					{"salt/job/" + jid + "/ret/web1", map[string]any{"id": "web1", "jid": jid, "fun": "cmd.run", "return": "ok", "retcode": 0}},
					{"salt/job/" + jid + "/new", map[string]any{"jid": jid, "tgt": []any{"web1", "web2"}, "tgt_type": "list", "fun": "cmd.run",
						"arg": []any{"true"}, "minions": []any{"web1", "web2"}, "user": "root"}},
				}
			},
			check: func(t *testing.T, j *Job) {
				r1, r2 := j.Returns["web1"], j.Returns["web2"]
				if !r1.Success || r2.Success || r2.Retcode != 1 || len(j.Missing()) != 0 {
					t.Errorf("returns %+v", j.Returns)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jid := NewJID()
			for _, st := range tt.steps(jid) {
				ev := event(t, st.tag, st.data)
				// Every event twice: redelivery must change nothing.
				for range 2 {
					if err := s.Record(ctx, ev); err != nil {
						t.Fatal(err)
					}
				}
			}
			j, err := s.Get(ctx, jid)
			if err != nil {
				t.Fatal(err)
			}
			if j.Active() != tt.active {
				t.Errorf("active = %v, want %v (%+v)", j.Active(), tt.active, j)
			}
			start, _ := JIDTime(jid)
			if !j.StartTime.Equal(start) {
				t.Errorf("start %v, want the JID's %v", j.StartTime, start)
			}
			if tt.check != nil {
				tt.check(t, j)
			}
		})
	}
	if err := s.Record(ctx, event(t, "salt/cloud/web1/created", nil)); !errors.Is(err, ErrNotJobEvent) {
		t.Errorf("cloud event: err %v, want ErrNotJobEvent", err)
	}
	if _, err := s.Get(ctx, "12345"); !errors.Is(err, ErrNotFound) {
		t.Errorf("bad jid: err %v", err)
	}
	if _, err := s.Get(ctx, NewJID()); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown jid: err %v", err)
	}
}

func TestStoreConsumesAndLists(t *testing.T) {
	b := openBus(t)
	s := openStore(t, b, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, b, "brine://test/jobs") }()
	funcs := function.NewWithBuiltins()
	before := time.Now().Add(-time.Second)
	var jids []string
	for _, c := range []struct {
		fun, user string
		args      []any
	}{
		{"test.arg", "alice", []any{"a"}},
		{"test.ping", "bob", nil},
		{"test.arg", "bob", []any{"b"}},
	} {
		res, err := Call(ctx, funcs, b, c.fun, c.args, nil, c.user, bus.Origin{Source: "test"})
		if err != nil {
			t.Fatal(err)
		}
		jids = append(jids, res.JID)
	}
	// A long job stays active.
	sleeper := NewRun("test.sleep", nil, nil, "carol", bus.Origin{Source: "test"})
	if err := sleeper.Begin(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		j, err := s.Get(ctx, jids[2])
		return err == nil && !j.Active()
	})
	waitFor(t, func() bool { _, err := s.Get(ctx, sleeper.JID); return err == nil })

	tests := []struct {
		f    Filter
		want []string
	}{
		{Filter{}, append(append([]string{}, jids...), sleeper.JID)},
		{Filter{Fun: "runner.test.arg"}, []string{jids[0], jids[2]}},
		{Filter{Fun: "*ping"}, []string{jids[1]}},
		{Filter{User: "bob"}, []string{jids[1], jids[2]}},
		{Filter{Active: true}, []string{sleeper.JID}},
		{Filter{Since: before}, append(append([]string{}, jids...), sleeper.JID)},
		{Filter{Since: time.Now().Add(time.Hour)}, nil},
		{Filter{Limit: 2}, []string{jids[2], sleeper.JID}},
	}
	for _, tt := range tests {
		got, err := s.List(ctx, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range got {
			ids = append(ids, j.JID)
		}
		if !reflect.DeepEqual(ids, tt.want) {
			t.Errorf("List(%+v) = %v, want %v", tt.f, ids, tt.want)
		}
	}
	if err := sleeper.End(ctx, b, true, nil, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		j, err := s.Get(ctx, sleeper.JID)
		return err == nil && !j.Active() && *j.Success
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
}

func TestJobsExpireAfterKeep(t *testing.T) {
	b := openBus(t)
	s := openStore(t, b, time.Second)
	ctx := context.Background()
	jid := NewJID()
	if err := s.Record(ctx, event(t, RunTag(jid, "new"), map[string]any{"fun": "runner.test.ping", "jid": jid})); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, jid); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := s.Get(ctx, jid); return errors.Is(err, ErrNotFound) })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRecordIsFlushedBeforeItReturns checks that a job record is on disk
// (a sync round of its bucket has covered it) before Record returns, and so
// before the consumer acknowledges the event it came from: a SIGKILL cannot
// tell (the page cache survives it), the round counter can.
func TestRecordIsFlushedBeforeItReturns(t *testing.T) {
	b := openBus(t)
	ctx := context.Background()
	kv, err := b.Bucket(ctx, BucketConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	s := NewStore(kv, nil)
	jid := NewJID()
	for _, tag := range []string{RunTag(jid, "new"), RunTag(jid, "ret")} {
		before := kv.SyncRounds()
		ev := event(t, tag, map[string]any{"fun": "runner.test.arg", "jid": jid, "user": "alice", "return": true, "success": true})
		if err := s.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if kv.SyncRounds() <= before {
			t.Errorf("%s: Record returned before the job record was synced to disk", tag)
		}
	}
	if _, err := s.Get(ctx, jid); err != nil {
		t.Fatal(err)
	}
}

// TestNotConnectedMinionsDoNotKeepAJobOpen: a job ends when every agent it
// was sent to returned; those not connected at publish never will.
func TestNotConnectedMinionsDoNotKeepAJobOpen(t *testing.T) {
	jid := NewJID()
	newEv, err := bus.NewEvent("salt/job/"+jid+"/new", map[string]any{"jid": jid, "fun": "test.ping", "tgt": "*", "tgt_type": "glob",
		"minions": []any{"a", "b"}, "missing": []any{}, "not_connected": []any{"b"}, "user": "root", "arg": []any{}}, bus.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	ret, err := bus.NewEvent("salt/job/"+jid+"/ret/a", map[string]any{"jid": jid, "fun": "test.ping", "return": true,
		"retcode": 0, "success": true, "id": "a"}, bus.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	j := &Job{JID: jid}
	for i, ev := range []*bus.Event{newEv, ret} {
		je, err := parseEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		je.apply(j)
		if i == 0 && !j.Active() {
			t.Fatal("the job ended before a return")
		}
	}
	if j.Active() || len(j.Missing()) != 0 || !reflect.DeepEqual(j.NotConnected, []string{"b"}) {
		t.Errorf("job after a's return: active %v, missing %v, not connected %v", j.Active(), j.Missing(), j.NotConnected)
	}
}

// TestIsOtherTag: the consumer's pattern also matches events the record
// has no use for; those are skipped without a warning, a malformed job
// event is not.
func TestIsOtherTag(t *testing.T) {
	const jid = "20261122004512123456"
	for tag, want := range map[string]bool{
		"salt/run/" + jid + "/step/0":   true, // an orchestration step's start
		"salt/minion/web1/start":        true,
		"salt/run/" + jid + "/args":     false,
		"salt/job/" + jid + "/ret/":     false,
		"salt/job/" + jid + "/prog/w/0": false,
	} {
		if got := isOtherTag(tag); got != want {
			t.Errorf("isOtherTag(%q) = %v, want %v", tag, got, want)
		}
	}
}

// TestRecordRefusesOtherJobsEvents: a jid names one job. A targeted job's
// return under a runner job's jid (an orchestration's, say) and a return
// from a minion the job was not sent to leave the record as it was, in
// whatever order the events come.
func TestRecordRefusesOtherJobsEvents(t *testing.T) {
	jid := NewJID()
	newJob := func() *bus.Event {
		return event(t, "salt/job/"+jid+"/new", map[string]any{"jid": jid, "fun": "test.ping", "tgt": "a", "tgt_type": "glob",
			"minions": []any{"a"}, "arg": []any{}, "user": "root"})
	}
	ret := func(id string) *bus.Event {
		return event(t, "salt/job/"+jid+"/ret/"+id, map[string]any{"jid": jid, "id": id, "fun": "test.ping", "return": true, "retcode": 0, "success": true})
	}
	runNew := event(t, "salt/run/"+jid+"/new", map[string]any{"jid": jid, "fun": "runner.state.orchestrate", "user": "root"})
	tests := []struct {
		name    string
		evs     []*bus.Event
		refused []bool
		check   func(t *testing.T, j *Job)
	}{
		{"return under an orchestration's jid", []*bus.Event{runNew, ret("x")}, []bool{false, true}, func(t *testing.T, j *Job) {
			if j.Kind != KindRun || len(j.Returns) != 0 || !j.Active() {
				t.Errorf("orchestration record: kind %s returns %v active %v", j.Kind, j.Returns, j.Active())
			}
		}},
		{"return from a minion not targeted", []*bus.Event{newJob(), ret("x"), ret("a")}, []bool{false, true, false}, func(t *testing.T, j *Job) {
			if _, ok := j.Returns["x"]; ok || slices.Contains(j.Minions, "x") || j.Active() {
				t.Errorf("record: minions %v returns %v active %v", j.Minions, j.Returns, j.Active())
			}
		}},
		{"the same, recorded before the announcement", []*bus.Event{ret("x"), newJob(), ret("a")}, []bool{false, false, false}, func(t *testing.T, j *Job) {
			if _, ok := j.Returns["x"]; ok || !slices.Equal(j.Minions, []string{"a"}) || j.Active() {
				t.Errorf("record: minions %v returns %v active %v", j.Minions, j.Returns, j.Active())
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &Job{JID: jid}
			for i, ev := range tt.evs {
				je, err := parseEvent(ev)
				if err != nil {
					t.Fatal(err)
				}
				err = je.apply(j)
				if got := errors.Is(err, ErrRefused); got != tt.refused[i] {
					t.Errorf("event %d (%s): err %v, refused want %v", i, ev.Tag, err, tt.refused[i])
				}
			}
			tt.check(t, j)
		})
	}
}

// TestOwnJobEndsWithItsReturn: a minion's own job (salt-call's, which the
// master gives a jid with tgt and tgt_type, as Salt's does for jid "req")
// has no announcement; its one return ends it instead of leaving it
// running (1/1 returned) for ever.
func TestOwnJobEndsWithItsReturn(t *testing.T) {
	jid := NewJID()
	ev := event(t, "salt/job/"+jid+"/ret/a1", map[string]any{"cmd": "_return", "jid": jid, "id": "a1", "fun": "event.send",
		"fun_args": []any{"x"}, "arg": []any{"x"}, "tgt": "a1", "tgt_type": "glob", "return": true, "retcode": 0, "success": true})
	j := &Job{JID: jid}
	je, err := parseEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := je.apply(j); err != nil {
		t.Fatal(err)
	}
	if j.Active() || j.Tgt != "a1" || j.TgtType != "glob" || !slices.Equal(j.Minions, []string{"a1"}) || j.Kind != KindJob {
		t.Errorf("own job: active %v tgt %v/%s minions %v kind %s", j.Active(), j.Tgt, j.TgtType, j.Minions, j.Kind)
	}
}

// refusingBucket fails every write of one key, as a store that cannot take
// a record would.
type refusingBucket struct {
	Bucket
	key string
}

var errRefusedKey = errors.New("the store refuses this key")

func (b refusingBucket) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	if key == b.key {
		return 0, errRefusedKey
	}
	return b.Bucket.Create(ctx, key, value)
}

func (b refusingBucket) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	if key == b.key {
		return 0, errRefusedKey
	}
	return b.Bucket.Update(ctx, key, value, rev)
}

// TestUnwritableEventIsDeadLettered: an event whose record can never be
// written is tried bus.MaxAttempts times, then dead-lettered with the
// reason and acknowledged; the jobs after it are recorded all the while.
func TestUnwritableEventIsDeadLettered(t *testing.T) {
	b := openBus(t)
	kv, err := b.Bucket(context.Background(), BucketConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	bad := NewJID()
	s := NewStore(refusingBucket{Bucket: kv, key: bad}, nil)
	s.retryWait = 20 * time.Millisecond
	dead := collect(t, b, bus.DeadLetterTag)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx, b, "brine://test/jobs") }()
	poison := event(t, "salt/job/"+bad+"/ret/a", map[string]any{"jid": bad, "id": "a", "fun": "test.ping", "return": true})
	if err := b.Publish(ctx, poison); err != nil {
		t.Fatal(err)
	}
	good := NewJID()
	if err := b.Publish(ctx, event(t, "salt/run/"+good+"/new", map[string]any{"jid": good, "fun": "test.ping"})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := s.Get(ctx, good); return err == nil })
	d := dead(1)[0]
	data, _ := d.DataMap()
	if d.Cause != poison.ID || data["consumer"] != ConsumerName || data["event_id"] != poison.ID || data["tag"] != poison.Tag ||
		data["attempts"] != int64(bus.MaxAttempts) || !strings.Contains(fmt.Sprint(data["error"]), errRefusedKey.Error()) {
		t.Errorf("dead letter: cause %s data %v", d.Cause, data)
	}
}

// TestWrittenRecordYieldsToAnotherWriter: the record update keeps as it
// wrote it is not used once another writer (a second master) changed the
// bucket's copy, so that writer's change is not lost; a second store
// recording the same job sees the first one's returns.
func TestWrittenRecordYieldsToAnotherWriter(t *testing.T) {
	b := openBus(t)
	ctx := context.Background()
	kv, err := b.Bucket(ctx, BucketConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	one, two := NewStore(kv, nil), NewStore(kv, nil)
	jid := NewJID()
	steps := []struct {
		s  *Store
		ev *bus.Event
	}{
		{one, event(t, "salt/job/"+jid+"/new", map[string]any{"fun": "test.ping", "jid": jid, "tgt": "*", "tgt_type": "glob", "minions": []any{"a", "b", "c"}, "user": "root"})},
		{one, event(t, "salt/job/"+jid+"/ret/a", map[string]any{"fun": "test.ping", "jid": jid, "id": "a", "return": true, "success": true})},
		{two, event(t, "salt/job/"+jid+"/ret/b", map[string]any{"fun": "test.ping", "jid": jid, "id": "b", "return": true, "success": true})},
		{one, event(t, "salt/job/"+jid+"/ret/c", map[string]any{"fun": "test.ping", "jid": jid, "id": "c", "return": true, "success": true})},
	}
	for _, st := range steps {
		if err := st.s.Record(ctx, st.ev); err != nil {
			t.Fatal(err)
		}
	}
	j, err := one.Get(ctx, jid)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(j.Returns)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("returns recorded: %v, want a, b and c", got)
	}
}

// TestWrittenJobsServeOnlyTheirRevision: a kept record serves an update
// only at the revision it was written at, and once: after another writer's
// revision, or once taken, the bucket's copy is decoded instead.
func TestWrittenJobsServeOnlyTheirRevision(t *testing.T) {
	var w writtenJobs
	w.keep(&Job{JID: "j", Revision: 5})
	if j := w.take("j", 6); j != nil {
		t.Fatalf("a record kept at revision 5 served revision 6: %+v", j)
	}
	if j := w.take("j", 5); j != nil {
		t.Fatalf("a record dropped by a mismatch served later: %+v", j)
	}
	w.keep(&Job{JID: "j", Revision: 7})
	if j := w.take("j", 7); j == nil || j.Revision != 7 {
		t.Fatalf("the record kept at revision 7: %+v", j)
	}
	if j := w.take("j", 7); j != nil {
		t.Fatal("a record served twice")
	}
	for i := range maxWritten + 10 {
		w.keep(&Job{JID: fmt.Sprint(i), Revision: 1})
	}
	if len(w.jobs) > maxWritten {
		t.Fatalf("%d records kept, at most %d", len(w.jobs), maxWritten)
	}
}
