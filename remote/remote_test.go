package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/wire"
)

// fakeMaster answers the client's requests for a set of agents: each
// connected agent returns after its delay (never, when negative) and says
// it still runs the job while it has not.
type fakeMaster struct {
	agents    map[string]time.Duration
	connected map[string]bool

	mu        sync.Mutex
	watches   map[string]func(*bus.Event) error
	published []jobs.Targeted
	started   map[string]time.Time // jid/id -> when the agent got it
}

func newFake(agents map[string]time.Duration, absent ...string) *fakeMaster {
	f := &fakeMaster{agents: agents, connected: map[string]bool{}, watches: map[string]func(*bus.Event) error{},
		started: map[string]time.Time{}}
	for id := range agents {
		f.connected[id] = !slices.Contains(absent, id)
	}
	return f
}

func (f *fakeMaster) selected(tgt any) []string {
	var ids []string
	for id := range f.agents {
		switch t := tgt.(type) {
		case string:
			if t == "*" || t == id {
				ids = append(ids, id)
			}
		case []string:
			if slices.Contains(t, id) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

func (f *fakeMaster) Call(_ context.Context, method string, in, out any) error {
	var reply any
	switch method {
	case rpc.ExecTargets:
		req := in.(rpc.TargetRequest)
		rep := rpc.TargetReply{Minions: f.selected(req.Tgt), Connected: []string{}}
		for _, id := range rep.Minions {
			if f.connected[id] {
				rep.Connected = append(rep.Connected, id)
			}
		}
		reply = rep
	case rpc.ExecPublish:
		job := in.(jobs.Targeted)
		pub := jobs.Published{JID: job.JID, Minions: f.selected(job.Tgt), NotConnected: []string{}}
		f.mu.Lock()
		f.published = append(f.published, job)
		f.mu.Unlock()
		for _, id := range pub.Minions {
			if !f.connected[id] {
				pub.NotConnected = append(pub.NotConnected, id)
				continue
			}
			f.mu.Lock()
			f.started[job.JID+"/"+id] = time.Now()
			f.mu.Unlock()
			if d := f.agents[id]; d >= 0 {
				go f.ret(job.JID, id, d)
			}
		}
		reply = pub
	case rpc.ExecFindJob:
		req := in.(rpc.FindJobRequest)
		st := map[string]wire.JobState{}
		for _, id := range req.Minions {
			f.mu.Lock()
			started, ok := f.started[req.JID+"/"+id]
			f.mu.Unlock()
			if d := f.agents[id]; ok && d >= 0 && time.Since(started) < d {
				st[id] = wire.JobState{JID: req.JID, Running: true}
			}
		}
		reply = st
	default:
		return fmt.Errorf("unexpected %s", method)
	}
	b, _ := json.Marshal(reply)
	return json.Unmarshal(b, out)
}

// ret delivers id's return once the watch of jid is there.
func (f *fakeMaster) ret(jid, id string, after time.Duration) {
	time.Sleep(after)
	for {
		f.mu.Lock()
		fn := f.watches["salt/job/"+jid+"/ret/*"]
		f.mu.Unlock()
		if fn != nil {
			ev, _ := bus.NewEvent("salt/job/"+jid+"/ret/"+id, map[string]any{"id": id, "jid": jid, "return": true, "retcode": 0,
				"success": true}, bus.Origin{})
			_ = fn(ev)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *fakeMaster) Watch(ctx context.Context, _, pattern string, since bus.Since, fn func(*bus.Event) error) error {
	if since.IsZero() {
		return errors.New("the returns must be watched from before the job is published")
	}
	f.mu.Lock()
	f.watches[pattern] = fn
	f.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

// run runs job and returns the reports as "kind id" lines.
func run(t *testing.T, f *fakeMaster, tgt any, o Options) ([]string, time.Duration, error) {
	t.Helper()
	c := &Client{Conn: f, PubAddr: "x"}
	var mu sync.Mutex
	var got []string
	start := time.Now()
	err := c.Run(context.Background(), jobs.Targeted{Fun: "test.ping", Tgt: tgt, TgtType: "glob", User: "u"}, o, func(r Report) {
		mu.Lock()
		defer mu.Unlock()
		name := [...]string{"published", "not-connected", "returned", "running", "no-response"}[r.Kind]
		if r.Kind == Published {
			got = append(got, name+" "+strings.Join(r.IDs, ","))
		} else {
			got = append(got, name+" "+r.ID)
		}
	})
	return got, time.Since(start), err
}

func TestRunReportsAsItHappens(t *testing.T) {
	f := newFake(map[string]time.Duration{"a": 0, "b": 300 * time.Millisecond, "c": 0, "d": -1}, "c")
	got, took, err := run(t, f, "*", Options{Wait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// c is absent: reported at once. b outlasts the wait but says it is
	// running, so it is waited for. d never answers.
	want := []string{"published a,b,c,d", "not-connected c", "returned a", "running b", "returned b", "no-response d"}
	if !slices.Equal(got, want) {
		t.Errorf("reports %q, want %q", got, want)
	}
	if took < 400*time.Millisecond || took > 2*time.Second {
		t.Errorf("took %s: want b's 300 ms plus one wait of 200 ms for d", took)
	}
	if len(f.published) != 1 || len(f.published[0].JID) != 20 {
		t.Errorf("published %+v: want one job with a jid of its own", f.published)
	}
}

func TestRunEndsWhenEveryAgentAnswered(t *testing.T) {
	f := newFake(map[string]time.Duration{"a": 0, "b": 10 * time.Millisecond})
	_, took, err := run(t, f, "*", Options{Wait: 5 * time.Second})
	if err != nil || took > time.Second {
		t.Errorf("took %s (%v): want no wait once both returned", took, err)
	}
}

func TestRunBatches(t *testing.T) {
	f := newFake(map[string]time.Duration{"a": 50 * time.Millisecond, "b": 0, "c": 0, "d": 0, "e": 0}, "e")
	got, _, err := run(t, f, "*", Options{Wait: time.Second, Batch: "40%"})
	if err != nil {
		t.Fatal(err)
	}
	// 40 % of 5 is 2 at a time, out of the 4 connected, one more job per
	// return.
	if got[0] != "not-connected e" || got[1] != "published a,b" || len(f.published) != 3 {
		t.Errorf("reports %q, %d jobs: want e reported, a and b first, then one job per return", got, len(f.published))
	}
	if n := strings.Count(strings.Join(got, "\n"), "returned"); n != 4 {
		t.Errorf("%d returns, want 4: %q", n, got)
	}
	if _, _, err := run(t, f, "*", Options{Wait: time.Second, Batch: "0"}); err == nil {
		t.Error("batch size 0: no error")
	}
}

func TestRunNoMatch(t *testing.T) {
	f := newFake(map[string]time.Duration{"a": 0})
	_, _, err := run(t, f, "zzz", Options{Wait: time.Second})
	if _, ok := errors.AsType[*NoMatchError](err); !ok {
		t.Errorf("err %v, want a NoMatchError", err)
	}
}

func TestBatchSize(t *testing.T) {
	for spec, want := range map[string]int{"3": 3, "10%": 1, "50%": 5, "100%": 10, "0": -1, "x": -1, "101%": -1, "0%": -1} {
		got, err := jobs.BatchSize(spec, 10)
		if want < 0 && err == nil || want >= 0 && (err != nil || got != want) {
			t.Errorf("BatchSize(%q, 10) = %d, %v; want %d", spec, got, err, want)
		}
	}
}
