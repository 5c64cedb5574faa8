package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/keys"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/wire"
)

// maxPendingPeers bounds the connections of pending agents the master
// keeps open to tell of their acceptance, and maxPendingPerID those of one
// id; beyond them a pending agent is answered and its connection closed:
// it learns of its acceptance at its next hello, on a new connection.
const (
	maxPendingPeers = 10_000
	maxPendingPerID = 4
)

// hangUpAfter is how long a connection the master turns away lives after
// its answer: long enough for the answer to be sent.
const hangUpAfter = time.Second

// agents serves the connections of agents (Salt's minions), whatever
// transport carries them: their hello, their events, returns and mine
// data, and knows which are connected. The id an agent's messages carry
// is always the one its key was accepted under, never one it claims.
type agents struct {
	keys agentKeys
	mine agentMine
	bus  bus.Publisher
	jobs interface {
		Get(context.Context, string) (*jobs.Job, error)
	}
	router jobRouter
	log    *slog.Logger
	// settings in force at start: the master's id and event size limit do
	// not change on reload.
	settings config.Settings

	mu      sync.Mutex
	bound   map[Conn]string              // accepted connections -> id
	byID    map[string]map[Conn]struct{} // id -> accepted connections
	pending map[string]map[Conn]struct{} // id -> connections awaiting acceptance
	npend   int
	// said is the id each connection said hello as, whatever the answer:
	// a connection speaks for one id only.
	said map[Conn]string
	// accepted are the ids whose key is accepted, kept from the keys
	// watch once it synced (acceptedSynced): what every job's targeting
	// starts from, without listing the keys bucket per job.
	accepted       map[string]bool
	acceptedSynced bool
}

// agentKeys is what agents need of the key store: the verdict on a key,
// and every change to the keys, made on any master.
type agentKeys interface {
	Authenticate(ctx context.Context, id, pub string, grains map[string]any) (keys.Result, error)
	Watch(ctx context.Context, fn func(keys.Change)) error
}

// agentMine is what agents do to the mine: write an agent's report to its
// record, and remove the record of a deleted key.
type agentMine interface {
	Update(ctx context.Context, w mine.Write) (*mine.Host, error)
	Delete(ctx context.Context, id string) (bool, error)
}

// jobRouter is what agents tell the publisher of the jobs they run: who
// came back (and may have missed a job), which return arrived, and
// whether a jid was sent to an agent at all.
type jobRouter interface {
	reconnected(id string, c Conn)
	returned(id string, r wire.Return)
	targeted(jid, id string) (*bus.Event, bool)
}

// acceptedIDs returns the ids with an accepted key, sorted, and false
// until the keys watch has synced.
func (a *agents) acceptedIDs() ([]string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.acceptedSynced {
		return nil, false
	}
	return slices.Sorted(maps.Keys(a.accepted)), true
}

func newAgents(settings config.Settings, log *slog.Logger, k agentKeys, b bus.Publisher,
	mineStore agentMine, js interface {
		Get(context.Context, string) (*jobs.Job, error)
	}) *agents {
	return &agents{keys: k, bus: b, mine: mineStore, jobs: js, log: log, settings: settings,
		bound: map[Conn]string{}, byID: map[string]map[Conn]struct{}{}, pending: map[string]map[Conn]struct{}{},
		accepted: map[string]bool{}, said: map[Conn]string{}}
}

// watchKeys follows key changes until ctx ends, cutting off agents whose
// key was rejected, denied or deleted and telling pending ones they were
// accepted.
func (a *agents) watchKeys(ctx context.Context) error {
	err := a.keys.Watch(ctx, func(c keys.Change) { a.keyChanged(ctx, c) })
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// hello authenticates an agent by the key it connected with.
func (a *agents) hello(ctx context.Context, p Conn, body json.RawMessage) (any, error) {
	var h wire.Hello
	if err := readBody("hello", body, &h); err != nil {
		return nil, err
	}
	// One id per connection, checked before anything is recorded: a
	// connection that said hello as a1 and then as a2 gets a refusal,
	// not a2's denied-keys list holding its key and a salt/auth about a2.
	a.mu.Lock()
	if said, ok := a.said[p]; ok && said != h.ID {
		a.mu.Unlock()
		return nil, fmt.Errorf("%w: this connection said hello as %q; one connection is one agent", wire.ErrInvalidRequest, said)
	}
	a.said[p] = h.ID
	a.mu.Unlock()
	res, err := a.keys.Authenticate(ctx, h.ID, p.Key(), h.AutosignGrains)
	if err != nil {
		if errors.Is(err, keys.ErrTooManyPending) {
			// Turned away: the connection goes too (after its answer),
			// so that strangers cannot keep them; the agent comes back.
			time.AfterFunc(hangUpAfter, p.Close)
		}
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch res.State {
	case keys.Accepted:
		a.unpend(h.ID, p)
		a.bound[p] = h.ID
		if a.byID[h.ID] == nil {
			a.byID[h.ID] = map[Conn]struct{}{}
		}
		a.byID[h.ID][p] = struct{}{}
		a.log.Info("agent connected", "id", h.ID, "remote", p.Remote(), "version", h.Version)
		defer a.router.reconnected(h.ID, p)
	case keys.Pending:
		if _, ok := a.pending[h.ID][p]; ok {
			break
		}
		if a.npend >= maxPendingPeers || len(a.pending[h.ID]) >= maxPendingPerID {
			// Answered, then closed: pending connections are bounded in
			// all and per id; the agent's next hello comes on a new one.
			time.AfterFunc(hangUpAfter, p.Close)
			break
		}
		if a.pending[h.ID] == nil {
			a.pending[h.ID] = map[Conn]struct{}{}
		}
		a.pending[h.ID][p] = struct{}{}
		a.npend++
	}
	return wire.HelloReply{State: string(res.State), Reason: res.Reason, Master: a.settings.ID}, nil
}

func (a *agents) unpend(id string, p Conn) {
	if set, ok := a.pending[id]; ok {
		if _, ok := set[p]; ok {
			delete(set, p)
			a.npend--
		}
		if len(set) == 0 {
			delete(a.pending, id)
		}
	}
}

// bind admits a method only on an accepted connection and gives the
// handler the connection's authenticated id.
func (a *agents) bind(h func(ctx context.Context, id string, body json.RawMessage) (any, error)) AgentHandler {
	return func(ctx context.Context, p Conn, body json.RawMessage) (any, error) {
		a.mu.Lock()
		id, ok := a.bound[p]
		a.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("%w: this agent's key is not accepted (say hello first)", wire.ErrNotAccepted)
		}
		return h(ctx, id, body)
	}
}

// gone forgets a closed connection.
func (a *agents) gone(p Conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.said, p)
	if id, ok := a.bound[p]; ok {
		delete(a.bound, p)
		delete(a.byID[id], p)
		if len(a.byID[id]) == 0 {
			delete(a.byID, id)
			a.log.Info("agent disconnected", "id", id)
		}
	}
	for id, set := range a.pending {
		if _, ok := set[p]; ok {
			a.unpend(id, p)
		}
	}
}

// keyChanged applies a key change made on any master: an accepted key's
// pending connections are told at once; connections whose key is no
// longer accepted are closed at once.
func (a *agents) keyChanged(ctx context.Context, c keys.Change) {
	a.mu.Lock()
	switch {
	case c.Synced:
		a.acceptedSynced = true
	case c.Value != nil && c.Value.State == keys.Accepted:
		a.accepted[c.Key] = true
	default:
		delete(a.accepted, c.Key)
	}
	var cut []Conn
	for p := range a.byID[c.Key] {
		if c.Value == nil || !c.Value.Allows(p.Key()) {
			cut = append(cut, p)
		}
	}
	var tell []Conn
	if c.Value != nil && c.Value.State == keys.Accepted {
		for p := range a.pending[c.Key] {
			if c.Value.Allows(p.Key()) {
				tell = append(tell, p)
			}
		}
	}
	a.mu.Unlock()
	for _, p := range cut {
		a.log.Warn("agent cut off: its key is no longer accepted", "id", c.Key, "remote", p.Remote())
		p.Close()
	}
	for _, p := range tell {
		p.Push(wire.PushAccepted, nil)
	}
	if c.Value == nil && c.Key != "" {
		// Salt flushes a minion's cached data (its mine) when its key is
		// deleted, so a removed machine leaves no stale addresses behind
		// (check_minion_cache).
		if ok, err := a.mine.Delete(ctx, c.Key); err != nil {
			a.log.Error("deleting the mine record of a deleted key", "id", c.Key, "err", err)
		} else if ok {
			a.log.Info("mine record removed with its key", "id", c.Key)
		}
	}
}

// event publishes an agent's event with the id its key was accepted
// under (Salt's _minion_event: the load is the event's data).
func (a *agents) event(ctx context.Context, id string, body json.RawMessage) (any, error) {
	var ev wire.Event
	if err := readBody("event", body, &ev); err != nil {
		return nil, err
	}
	if err := wire.CheckTag(ev.Tag, id); err != nil {
		return nil, err
	}
	load := ev.Load
	if load == nil {
		load = map[string]any{}
	}
	if strings.HasPrefix(ev.Tag, "salt/beacon/") {
		// A beacon's event is its data with the id, as Salt's master
		// fires each of a minion's beacon events (data['path'] in a
		// reaction, not data['data']['path']).
		load["id"] = id
	} else {
		load["id"], load["tag"], load["cmd"] = id, ev.Tag, "_minion_event"
	}
	return a.publish(ctx, id, ev.ID, ev.Tag, load, nil)
}

// conns are the accepted connections of agent id.
func (a *agents) conns(id string) []Conn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Collect(maps.Keys(a.byID[id]))
}

// publish stores one event from agent id under the id it was queued with;
// cause, when known, is the event it follows from (a job's new event).
func (a *agents) publish(ctx context.Context, id, evID, tag string, data map[string]any, cause *bus.Event) (any, error) {
	if _, err := uuid.Parse(evID); err != nil {
		return nil, fmt.Errorf("%w: event id %q: %v", wire.ErrInvalidRequest, evID, err)
	}
	e, err := bus.NewEvent(tag, data, bus.Origin{Source: bus.AgentSource(id), Cause: cause})
	if err != nil {
		return nil, err
	}
	e.ID = evID
	if _, err := e.Validate(a.settings.MaxEventSize); err != nil {
		return nil, err
	}
	if err := a.bus.Publish(ctx, e); err != nil {
		return nil, fmt.Errorf("publish %q: %w", tag, err)
	}
	return wire.Stored{ID: e.ID}, nil
}

// ret fires the return of a job the agent ran, salt/job/<jid>/ret/<id>,
// in Salt's shape. An agent returns only for a job sent to it (admitReturn)
// or for one it started itself, which the master gives a jid of its own
// (wire.RequestJID, Salt's "req"): no agent can write into the record of
// another agent's job, a runner's or an orchestration's.
func (a *agents) ret(ctx context.Context, id string, body json.RawMessage) (any, error) {
	var r wire.Return
	if err := readBody("return", body, &r); err != nil {
		return nil, err
	}
	args := r.FunArgs
	if args == nil {
		args = []any{}
	}
	own := r.JID == wire.RequestJID
	var cause *bus.Event
	if own {
		r.JID = jobs.NewJID()
	} else {
		if err := jobs.CheckJID(r.JID); err != nil {
			return nil, fmt.Errorf("%w: return: %w", wire.ErrInvalidRequest, err)
		}
		c, err := a.admitReturn(ctx, id, r.JID)
		if err != nil {
			a.log.Warn("agent return refused", "id", id, "jid", r.JID, "err", err)
			return nil, err
		}
		cause = c
	}
	// Secrets go no further than the agent: arguments and returns are
	// masked by key name (a pillar= override's password, pillar.items'
	// secrets) before the event exists.
	data := map[string]any{"cmd": "_return", "id": id, "jid": r.JID, "fun": r.Fun, "fun_args": jobs.Redact(args),
		"return": jobs.Redact(r.Return), "retcode": r.Retcode, "success": r.Success}
	if own {
		// Salt's master fills these in for a minion's own job.
		data["tgt"], data["tgt_type"], data["arg"] = id, "glob", data["fun_args"]
	}
	if r.Out != "" {
		data["out"] = r.Out
	}
	rep, err := a.publish(ctx, id, r.ID, "salt/job/"+r.JID+"/ret/"+id, data, cause)
	if err == nil && !own {
		a.router.returned(id, r)
	}
	return rep, err
}

// unrecordedGrace is how long a job may be unknown to this master without
// a return for it being refused: one published by another master moments
// ago may not be in the job store yet. Such a return is handed back (the
// agent keeps it and sends it again), not refused.
const unrecordedGrace = time.Minute

// admitReturn checks that job jid was sent to agent id: a job this master
// (or one it relays for) has live, or one the job store records as
// targeting id (a return after the master's restart, or through another
// master). It gives the job's new event when it knows it.
func (a *agents) admitReturn(ctx context.Context, id, jid string) (*bus.Event, error) {
	if ev, ok := a.router.targeted(jid, id); ok {
		return ev, nil
	}
	j, err := a.jobs.Get(ctx, jid)
	switch {
	case err == nil && j.Kind == jobs.KindJob && slices.Contains(j.Minions, id):
		return nil, nil
	case err == nil && j.Kind != jobs.KindJob:
		return nil, fmt.Errorf("%w: return for %s: that jid is a runner job's (%s), not a job sent to %s", wire.ErrInvalidRequest, jid, j.Fun, id)
	case err == nil:
		return nil, fmt.Errorf("%w: return for %s: that job was not sent to %s", wire.ErrInvalidRequest, jid, id)
	case errors.Is(err, jobs.ErrNotFound):
		if t, terr := jobs.JIDTime(jid); terr == nil && time.Since(t) < unrecordedGrace && time.Until(t) < unrecordedGrace {
			return nil, fmt.Errorf("return for %s: this master does not know the job yet; send it again", jid)
		}
		return nil, fmt.Errorf("%w: return for %s: no job with that jid was sent to %s", wire.ErrInvalidRequest, jid, id)
	default:
		return nil, fmt.Errorf("return for %s: %w", jid, err)
	}
}

// mineUpdate writes an agent's grains and mine function results to its
// mine record (source "agent"), beside what cloud events put there: the
// fqdn and MAC addresses come from the grains.
func (a *agents) mineUpdate(ctx context.Context, id string, body json.RawMessage) (any, error) {
	var u wire.Mine
	if err := readBody("mine", body, &u); err != nil {
		return nil, err
	}
	for name := range u.Errors {
		a.log.Warn("agent mine function failed", "id", id, "function", name, "err", u.Errors[name])
	}
	_, err := a.mine.Update(ctx, mine.Write{ID: id, Source: "agent", Mutate: func(h *mine.Host) error {
		if len(u.Grains) > 0 {
			h.SetAgentGrains(u.Grains)
		}
		for _, fun := range slices.Sorted(maps.Keys(u.Data)) {
			if err := h.Set(fun, u.Data[fun]); err != nil {
				return err
			}
		}
		for _, fun := range u.Delete {
			if err := h.Unset(fun); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// Connected lists the ids of the agents connected to this master, sorted
// (Master.connected adds those connected to the other masters).
func (a *agents) Connected() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Sorted(maps.Keys(a.byID))
}
