package master

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/keys"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/wire"
)

// The publisher alone, with each thing it uses faked: what it targets,
// what it fires, what it pushes to whom, and how it routes returns.

// firedEvents is a bus.Publisher that keeps what is published.
type firedEvents struct {
	mu  sync.Mutex
	evs []*bus.Event
}

func (f *firedEvents) Publish(_ context.Context, ev *bus.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evs = append(f.evs, ev)
	return nil
}

func (f *firedEvents) tags() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, ev := range f.evs {
		out = append(out, ev.Tag)
	}
	return out
}

func (f *firedEvents) data(t *testing.T, tag string) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range f.evs {
		if ev.Tag == tag {
			d, err := ev.DataMap()
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatalf("no %s event among %d", tag, len(f.evs))
	return nil
}

// hosts is a mine.Watcher of fixed records.
type hosts []*mine.Host

func (h hosts) Watch(ctx context.Context, fn func(mine.Change)) error {
	for _, host := range h {
		fn(mine.Change{ID: host.ID, Host: host})
	}
	fn(mine.Change{Synced: true})
	<-ctx.Done()
	return nil
}

// acceptedKeys is the key store's accepted list.
type acceptedKeys []string

func (k acceptedKeys) List(context.Context, ...keys.State) (keys.Listing, error) {
	return keys.Listing{keys.ListName(keys.Accepted): k}, nil
}

// fleet is agents' connections held by the test: an id's conns, and the
// ids whose key is accepted (which the keys watch has not synced: the
// publisher falls back on the key store).
type fleet map[string][]Conn

func (f fleet) conns(id string) []Conn        { return f[id] }
func (f fleet) acceptedIDs() ([]string, bool) { return nil, false }

// otherMasters is the cluster: agents connected to another master.
type otherMasters struct {
	mu       sync.Mutex
	where    map[string]string // id -> master
	pushed   map[string][]string
	forwards []string
}

func (o *otherMasters) locate(_ context.Context, ids []string) map[string]string {
	out := map[string]string{}
	for _, id := range ids {
		if w, ok := o.where[id]; ok {
			out[id] = w
		}
	}
	return out
}

func (o *otherMasters) push(_ context.Context, peer string, _ []byte, _ *bus.Event, ids []string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pushed[peer] = append(o.pushed[peer], ids...)
	return ids
}

func (o *otherMasters) find(context.Context, string, []string) map[string]wire.JobState { return nil }

func (o *otherMasters) forwardReturn(origin, id string, r wire.Return) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.forwards = append(o.forwards, origin+"/"+id+"/"+r.JID)
}

func newTestPublisher(t *testing.T, ids acceptedKeys, mineHosts hosts, f fleet, others *otherMasters, nodegroups string) (*publisher, *firedEvents) {
	t.Helper()
	ev := &firedEvents{}
	pillar := map[string]map[string]any{"web01": {"role": "frontend"}}
	p := newPublisher(ev, mineHosts, ids, f, others, func(id string) map[string]any { return pillar[id] },
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := p.configure(testConfig(t, nodegroups)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	// serve has applied the mine once a grain target matches.
	deadline := time.Now().Add(5 * time.Second)
	for len(mineHosts) > 0 {
		if got, _, _ := p.Targets(context.Background(), "os:*", "grain"); len(got) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return p, ev
}

func TestPublisherTargets(t *testing.T) {
	ids := acceptedKeys{"db01", "web01", "web02"}
	h := hosts{
		{ID: "web01", Grains: map[string]any{"os": "Debian", "roles": []any{"web"}}},
		{ID: "web02", Grains: map[string]any{"os": "Alma"}},
		{ID: "db01", Grains: map[string]any{"os": "Debian"}},
		{ID: "gone", Grains: map[string]any{"os": "Debian"}}, // in the mine, no accepted key
	}
	p, _ := newTestPublisher(t, ids, h, fleet{}, &otherMasters{}, "nodegroups:\n  webs: 'web*'\n")
	for _, tc := range []struct {
		tgt, tgtType    string
		want, wantMissg []string
	}{
		{"web*", "glob", []string{"web01", "web02"}, []string{}},
		{"os:Debian", "grain", []string{"db01", "web01"}, []string{}},
		{"G@os:Debian and not db*", "compound", []string{"web01"}, []string{}},
		{"role:frontend", "pillar", []string{"web01"}, []string{}},
		{"webs", "nodegroup", []string{"web01", "web02"}, []string{}},
		{"web01,ghost", "list", []string{"web01"}, []string{"ghost"}},
		{"nothing*", "glob", []string{}, []string{}},
	} {
		got, missing, err := p.Targets(context.Background(), tc.tgt, tc.tgtType)
		if err != nil || !slices.Equal(got, tc.want) || !slices.Equal(missing, tc.wantMissg) {
			t.Errorf("Targets(%q, %s) = %v, %v, %v; want %v, %v", tc.tgt, tc.tgtType, got, missing, err, tc.want, tc.wantMissg)
		}
	}
	if _, _, err := p.Targets(context.Background(), "nosuch", "nodegroup"); err == nil {
		t.Error("an unknown nodegroup targeted something")
	}
}

func TestPublisherPublishesAndRoutes(t *testing.T) {
	mt := &memTransport{gone: func(Conn) {}}
	web1, web2a, web2b := mt.dial("web01"), mt.dial("web02-a"), mt.dial("web02-b")
	full := mt.dial("full")
	for range cap(full.pushed) {
		full.pushed <- pushed{}
	}
	f := fleet{"web01": {web1}, "web02": {web2a, web2b}, "web03": {full}}
	others := &otherMasters{where: map[string]string{"web04": "m2"}, pushed: map[string][]string{}}
	p, ev := newTestPublisher(t, acceptedKeys{"web01", "web02", "web03", "web04", "web05"}, nil, f, others, "")
	ctx := context.Background()

	// No agent selected: no jid, nothing fired.
	if _, _, err := p.Publish(ctx, jobs.Targeted{Tgt: "db*", Fun: "test.ping", User: "root"}, bus.Origin{Source: "test"}, false); !errors.Is(err, ErrNoMinions) {
		t.Fatalf("publish to nobody: %v, want ErrNoMinions", err)
	}
	if len(ev.tags()) != 0 {
		t.Fatalf("fired %v for a job sent to nobody", ev.tags())
	}

	pub, notify, err := p.Publish(ctx, jobs.Targeted{Tgt: "web*", Fun: "test.arg", Arg: []any{"a", map[string]any{"password": "s3cret", "__kwarg__": true}},
		User: "root"}, bus.Origin{Source: "test"}, true)
	if err != nil {
		t.Fatal(err)
	}
	// web03's queue is full, web05 is connected nowhere: not connected.
	if want := []string{"web01", "web02", "web03", "web04", "web05"}; !slices.Equal(pub.Minions, want) {
		t.Errorf("minions = %v, want %v", pub.Minions, want)
	}
	slices.Sort(pub.NotConnected)
	if want := []string{"web03", "web05"}; !slices.Equal(pub.NotConnected, want) {
		t.Errorf("not connected = %v, want %v", pub.NotConnected, want)
	}
	// The jid event, then the new event (secrets masked), before any push.
	if tags := ev.tags(); !slices.Equal(tags, []string{pub.JID, "salt/job/" + pub.JID + "/new"}) {
		t.Errorf("fired %v", tags)
	}
	newData := ev.data(t, "salt/job/"+pub.JID+"/new")
	if b, _ := json.Marshal(newData["arg"]); string(b) != `["a",{"__kwarg__":true,"password":"***"}]` {
		t.Errorf("new event's arg = %s", b)
	}
	if nc, _ := json.Marshal(newData["not_connected"]); string(nc) != `["web05"]` {
		t.Errorf("new event's not_connected = %s (web03 was connected when it fired)", nc)
	}
	// Each connection of a targeted agent gets the job, secrets and all.
	for _, c := range []*memConn{web1, web2a, web2b} {
		p := c.next(t)
		job, err := wire.DecodeJob(p.body)
		if p.method != wire.PushJob || err != nil || job.JID != pub.JID || !json.Valid(p.body) {
			t.Fatalf("%s got %s %s", c.key, p.method, p.body)
		}
		if b, _ := json.Marshal(job.Arg); string(b) != `["a",{"__kwarg__":true,"password":"s3cret"}]` {
			t.Errorf("pushed arg = %s", b)
		}
	}
	if got := others.pushed["m2"]; !slices.Equal(got, []string{"web04"}) {
		t.Errorf("handed to m2: %v", got)
	}

	// Only a targeted agent's return counts, once.
	if _, ok := p.targeted(pub.JID, "web01"); !ok {
		t.Error("web01 is not targeted by its job")
	}
	if _, ok := p.targeted(pub.JID, "db01"); ok {
		t.Error("db01 counts as targeted")
	}
	p.returned("web01", wire.Return{JID: pub.JID, Return: true, Success: true})
	p.returned("web01", wire.Return{JID: pub.JID, Return: "again"})
	p.returned("db01", wire.Return{JID: pub.JID, Return: "stranger"})
	if r := <-notify; r.ID != "web01" || r.Return != true {
		t.Errorf("first return = %+v", r)
	}
	select {
	case r := <-notify:
		t.Errorf("a second return reached the caller: %+v", r)
	default:
	}

	// An agent that comes back gets again what it has not returned.
	p.reconnected("web01", web1)
	p.reconnected("web02", web2a)
	if p := web2a.next(t); p.method != wire.PushJob {
		t.Errorf("web02 again: %s", p.method)
	}
	select {
	case got := <-web1.pushed:
		t.Errorf("web01, which returned, got %s again", got.method)
	default:
	}

	// A job relayed from another master: its returns go back there.
	relayed := jobs.Targeted{JID: jobs.NewJID(), Fun: "test.ping", Tgt: "web01", TgtType: "glob", User: "root"}
	body, _ := json.Marshal(relayed)
	if sent := p.relay("m2", relayed, body, nil, []string{"web01", "web09"}); !slices.Equal(sent, []string{"web01"}) {
		t.Errorf("relay reached %v", sent)
	}
	web1.next(t)
	p.returned("web01", wire.Return{JID: relayed.JID, Return: true})
	if want := []string{"m2/web01/" + relayed.JID}; !slices.Equal(others.forwards, want) {
		t.Errorf("forwarded %v, want %v", others.forwards, want)
	}
}

// Run waits for returns, asks the silent whether they still run the job,
// and names those that do not answer.
func TestPublisherRunNoResponse(t *testing.T) {
	mt := &memTransport{gone: func(Conn) {}}
	busy, silent := mt.dial("busy"), mt.dial("silent")
	p, _ := newTestPublisher(t, acceptedKeys{"busy", "silent"}, nil, fleet{"busy": {busy}, "silent": {silent}}, &otherMasters{}, "")
	// busy says it still runs the job at the first find_job, then returns.
	go func() {
		job, _ := wire.DecodeJob((<-busy.pushed).body)
		var f wire.FindJob
		_ = json.Unmarshal((<-busy.pushed).body, &f)
		_, _ = p.jobState(context.Background(), "busy", mustJSONValue(wire.JobState{JID: f.JID, Req: f.Req, Running: true}))
		p.returned("busy", wire.Return{JID: job.JID, Return: "done", Success: true})
	}()
	out, err := p.Run(context.Background(), jobs.Targeted{Tgt: "*", Fun: "test.sleep", User: "root"}, bus.Origin{Source: "test"}, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := out.Returns["busy"]; !ok || r.Return != "done" {
		t.Errorf("returns = %+v", out.Returns)
	}
	if !slices.Equal(out.NoResponse, []string{"silent"}) {
		t.Errorf("no response = %v, want [silent]", out.NoResponse)
	}
}

// progress fires salt/job/<jid>/prog/<id>/<n> for a job sent to the
// agent, and refuses one it was not sent.
func TestPublisherProgress(t *testing.T) {
	mt := &memTransport{gone: func(Conn) {}}
	web := mt.dial("web01")
	p, ev := newTestPublisher(t, acceptedKeys{"web01"}, nil, fleet{"web01": {web}}, &otherMasters{}, "")
	pub, _, err := p.Publish(context.Background(), jobs.Targeted{Tgt: "web01", Fun: "state.apply", User: "root"}, bus.Origin{Source: "test"}, false)
	if err != nil {
		t.Fatal(err)
	}
	prog := wire.Progress{JID: pub.JID, Len: 2, Ret: map[string]any{"file_|-a_|-a_|-managed": map[string]any{"__run_num__": 1.0, "result": true}}}
	if _, err := p.progress(context.Background(), "web01", mustJSONValue(prog)); err != nil {
		t.Fatal(err)
	}
	d := ev.data(t, "salt/job/"+pub.JID+"/prog/web01/1")
	if d["id"] != "web01" || d["jid"] != pub.JID {
		t.Errorf("progress event = %v", d)
	}
	prog.JID = jobs.NewJID()
	if _, err := p.progress(context.Background(), "web01", mustJSONValue(prog)); !errors.Is(err, wire.ErrInvalidRequest) {
		t.Errorf("progress of a job never sent: %v", err)
	}
}

func mustJSONValue(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// configure refuses nodegroups that are neither a target nor a list.
func TestPublisherConfigure(t *testing.T) {
	p := newPublisher(&firedEvents{}, hosts{}, acceptedKeys{}, fleet{}, &otherMasters{}, func(string) map[string]any { return nil }, slog.Default())
	for conf, ok := range map[string]bool{
		"nodegroups:\n  a: 'web*'\n  b: [web01, web02]\n": true,
		"nodegroups:\n  a: 3\n":                           false,
		"nodegroups:\n  a: 'N@a'\n":                       false,
	} {
		c := testConfig(t, conf)
		if err := p.configure(c); (err == nil) != ok {
			t.Errorf("%q: %v", conf, err)
		}
	}
}
