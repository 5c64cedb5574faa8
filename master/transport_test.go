package master

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/wire"
)

// memTransport is an agent transport held in memory: the test is its
// agents, calling the master's agent methods and reading what it pushes.
// It is what a second protocol (Salt's) plugs into.
type memTransport struct {
	mu      sync.Mutex
	methods map[string]AgentHandler
	gone    func(Conn)
}

func (t *memTransport) ServeAgents(methods map[string]AgentHandler, gone func(Conn)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.methods, t.gone = methods, gone
}

// dial opens a connection authenticated with the key named name (a
// CURVE public key made from the name: the key store reads keys as
// brine's agents present them).
func (t *memTransport) dial(name string) *memConn {
	key := curve.Key(sha256.Sum256([]byte(name)))
	return &memConn{t: t, key: key.String(), pushed: make(chan pushed, 64), closed: make(chan struct{})}
}

type pushed struct {
	method string
	body   json.RawMessage
}

// memConn is one agent's connection to a memTransport.
type memConn struct {
	t      *memTransport
	key    string
	pushed chan pushed
	once   sync.Once
	closed chan struct{}
}

func (c *memConn) Key() string    { return c.key }
func (c *memConn) Remote() string { return "mem" }
func (c *memConn) Push(method string, body any) bool {
	b, err := json.Marshal(body)
	if err != nil {
		return false
	}
	select {
	case <-c.closed:
		return false
	case c.pushed <- pushed{method, b}:
		return true
	default:
		return false
	}
}

// Close ends the connection, as a transport does, telling the master.
func (c *memConn) Close() {
	c.once.Do(func() {
		close(c.closed)
		c.t.mu.Lock()
		gone := c.t.gone
		c.t.mu.Unlock()
		gone(c)
	})
}

// call sends one request as the agent, decoding the answer into out.
func (c *memConn) call(method string, in, out any) error {
	c.t.mu.Lock()
	h := c.t.methods[method]
	c.t.mu.Unlock()
	if h == nil {
		return fmt.Errorf("unknown method %q", method)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	res, err := h(context.Background(), c, body)
	if err != nil || out == nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// next returns the next message the master pushed, failing after 10 s.
func (c *memConn) next(t *testing.T) pushed {
	t.Helper()
	select {
	case p := <-c.pushed:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("the master pushed nothing")
		return pushed{}
	}
}

// startWith runs a master on cfg with a memTransport beside its gateway.
func startWith(t *testing.T, cfg *config.Master) (*Master, *memTransport) {
	t.Helper()
	mt := &memTransport{}
	m := startOpts(t, cfg, Options{Transports: []Transport{mt}})
	return m, mt
}

func hello(t *testing.T, c *memConn, id string) wire.HelloReply {
	t.Helper()
	var rep wire.HelloReply
	if err := c.call(wire.MethodHello, wire.Hello{ID: id, Version: "mem"}, &rep); err != nil {
		t.Fatalf("hello as %s: %v", id, err)
	}
	return rep
}

// TestAgentProtocolThroughTheSeam drives the master as an agent would,
// through a transport of the test's own: what the master decides of an
// agent (its key, its id on everything it sends, which jobs it may
// return, its mine record) is the same whatever carries it.
func TestAgentProtocolThroughTheSeam(t *testing.T) {
	cfg := testConfig(t, "")
	m, mt := startWith(t, cfg)
	ctx := context.Background()
	evs := record(t, m, "*")

	// A new key waits; it is told at once when an operator accepts it.
	web := mt.dial("key-web01")
	if rep := hello(t, web, "web01"); rep.State != wire.StatePending || rep.Master != "t1" {
		t.Fatalf("first hello = %+v, want pending from t1", rep)
	}
	if err := web.call(wire.MethodEvent, wire.Event{ID: uuid.NewString(), Tag: "app/x"}, nil); !errors.Is(err, wire.ErrNotAccepted) {
		t.Errorf("an event before acceptance: %v, want ErrNotAccepted", err)
	}
	if _, err := m.keys.Accept(ctx, "web01", false, false); err != nil {
		t.Fatal(err)
	}
	if p := web.next(t); p.method != wire.PushAccepted {
		t.Fatalf("pushed %s, want %s", p.method, wire.PushAccepted)
	}
	if rep := hello(t, web, "web01"); rep.State != wire.StateAccepted {
		t.Fatalf("hello after acceptance = %+v", rep)
	}
	// One connection is one agent.
	if err := web.call(wire.MethodHello, wire.Hello{ID: "db01"}, nil); !errors.Is(err, wire.ErrInvalidRequest) {
		t.Errorf("a second id on the connection: %v, want ErrInvalidRequest", err)
	}

	// Its event carries the id it was accepted under, whatever it says.
	evID := uuid.NewString()
	var stored wire.Stored
	if err := web.call(wire.MethodEvent, wire.Event{ID: evID, Tag: "app/deploy", Load: map[string]any{"id": "db01", "v": 1.0}}, &stored); err != nil || stored.ID != evID {
		t.Fatalf("event: %+v, %v", stored, err)
	}
	d := evs.wait(t, "app/deploy", func(map[string]any) bool { return true })
	if d["id"] != "web01" || d["cmd"] != "_minion_event" || fmt.Sprint(d["v"]) != "1" {
		t.Errorf("event data = %v", d)
	}
	for _, tag := range []string{"salt/job/1/new", "salt/minion/db01/start", "salt/cloud/web01/created"} {
		if err := web.call(wire.MethodEvent, wire.Event{ID: uuid.NewString(), Tag: tag}, nil); !errors.Is(err, wire.ErrReservedTag) {
			t.Errorf("event %s: %v, want ErrReservedTag", tag, err)
		}
	}

	// Its mine report is its record's.
	if err := web.call(wire.MethodMine, wire.Mine{Grains: map[string]any{"id": "web01", "os": "Debian"}}, nil); err != nil {
		t.Fatal(err)
	}
	if h, err := m.mine.Get(ctx, "web01"); err != nil || h.Source != "agent" || h.Grains["os"] != "Debian" {
		t.Errorf("mine record = %+v, %v", h, err)
	}

	// A job targeting it is pushed to its connection; its return ends it.
	// The publisher learns the grains from its watch of the mine, a moment
	// after the report is stored: until then the target matches nobody,
	// and nothing is sent.
	var pub jobs.Published
	var notify <-chan jobs.Return
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		pub, notify, err = m.publisher.Publish(ctx, jobs.Targeted{Tgt: "G@os:Debian", TgtType: "compound", Fun: "test.ping", User: "test"},
			bus.Origin{Source: "test"}, true)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || !slices.Equal(pub.Minions, []string{"web01"}) || len(pub.NotConnected) != 0 {
		t.Fatalf("publish = %+v, %v", pub, err)
	}
	p := web.next(t)
	job, err := wire.DecodeJob(p.body)
	if p.method != wire.PushJob || err != nil || job.JID != pub.JID || job.Fun != "test.ping" {
		t.Fatalf("pushed %s %s (%v), want the job %s", p.method, p.body, err, pub.JID)
	}
	// A return for a jid it was never sent is refused, and stores nothing.
	if err := web.call(wire.MethodReturn, wire.Return{ID: uuid.NewString(), JID: "20200101000000000000", Fun: "test.ping", Return: true}, nil); !errors.Is(err, wire.ErrInvalidRequest) {
		t.Errorf("a return for a jid never sent: %v, want ErrInvalidRequest", err)
	}
	if err := web.call(wire.MethodReturn, wire.Return{ID: uuid.NewString(), JID: pub.JID, Fun: "test.ping", Return: true, Success: true}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-notify:
		if r.ID != "web01" || r.Return != true {
			t.Errorf("return = %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the return did not reach the publisher")
	}
	evs.wait(t, "salt/job/"+pub.JID+"/ret/web01", func(d map[string]any) bool { return d["id"] == "web01" && d["return"] == true })

	// Files and pillar are served to it under its own id.
	var envs []string
	if err := web.call(wire.MethodFileEnvs, nil, &envs); err != nil || !slices.Equal(envs, []string{"base"}) {
		t.Errorf("file envs = %v, %v", envs, err)
	}
	if err := web.call(wire.MethodFileStat, wire.FileRequest{Path: "../../etc/passwd", Saltenv: "base"}, nil); err == nil {
		t.Error("a path outside file_roots was served")
	}

	// A connection ends: the agent is gone from the connected list.
	if got := m.agents.Connected(); !slices.Equal(got, []string{"web01"}) {
		t.Errorf("connected = %v", got)
	}
	web.Close()
	if got := m.agents.Connected(); len(got) != 0 {
		t.Errorf("connected after close = %v", got)
	}

	// A key deleted cuts its connections off at once.
	again := mt.dial("key-web01")
	if rep := hello(t, again, "web01"); rep.State != wire.StateAccepted {
		t.Fatalf("hello = %+v", rep)
	}
	if _, err := m.keys.Delete(ctx, "web01"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-again.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("a deleted key's connection stayed open")
	}
	// Another key under that id is a new, pending key, not that agent.
	impostor := mt.dial("key-other")
	if rep := hello(t, impostor, "web01"); rep.State != wire.StatePending {
		t.Errorf("a new key under web01: %+v, want pending", rep)
	}
}

// runMemAgent runs an agent of the test's own over mt, as id with grains
// and mine data: it says hello (the master must auto-accept it), reports
// its mine, asks for its pillar, then answers each job it is sent with
// answers[fun] (an unknown function fails, as on an agent) until stop.
func runMemAgent(t *testing.T, mt *memTransport, id string, grains, data map[string]any, answers map[string]any) (stop func()) {
	t.Helper()
	c := mt.dial("key-" + id)
	if rep := hello(t, c, id); rep.State != wire.StateAccepted {
		t.Fatalf("hello as %s = %+v, want accepted (auto_accept)", id, rep)
	}
	if err := c.call(wire.MethodMine, wire.Mine{Grains: grains, Data: data}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.call(wire.MethodPillar, wire.PillarRequest{Grains: grains}, &map[string]any{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var p pushed
			select {
			case p = <-c.pushed:
			case <-c.closed:
				return
			}
			switch p.method {
			case wire.PushJob:
				job, err := wire.DecodeJob(p.body)
				if err != nil {
					t.Errorf("%s: a job it cannot read: %v", id, err)
					continue
				}
				ret, ok := answers[job.Fun]
				if !ok {
					ret = fmt.Sprintf("'%s' is not available.", job.Fun)
				}
				r := wire.Return{ID: uuid.NewString(), JID: job.JID, Fun: job.Fun, Return: ret, Success: ok, Time: time.Now()}
				if !ok {
					r.Retcode = 1
				}
				if err := c.call(wire.MethodReturn, r, nil); err != nil {
					t.Errorf("%s: return for %s: %v", id, job.JID, err)
				}
			case wire.PushFindJob:
				var f wire.FindJob
				_ = json.Unmarshal(p.body, &f)
				_ = c.call(wire.MethodJobState, wire.JobState{JID: f.JID, Req: f.Req}, nil)
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { c.Close(); <-done }) }
	t.Cleanup(stop)
	return stop
}
