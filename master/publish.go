package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/keys"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/target"
	"github.com/brinehq/brine/wire"
)

// PublishKeys are the master configuration keys the publisher reads.
var PublishKeys = []string{"nodegroups"}

// How long the master keeps a job it published in memory: while it may
// publish it again to an agent that reconnects without having returned
// it, and routes its returns to who waits for them.
const (
	liveFor       = 10 * time.Minute
	findJobWait   = 2 * time.Second
	maxLiveJobs   = 100_000
	pruneLiveEach = time.Minute
)

// ErrNoMinions is the refusal of a job whose target selects no agent:
// Salt's "No minions matched the target."
//
//lint:ignore ST1005 Salt's words, which scripts match.
var ErrNoMinions = errors.New("No minions matched the target. No command was sent, no jid was assigned.")

// publisher sends jobs to the agents they target and routes their returns:
// Salt's LocalClient and the master's publish channel. It targets from
// what it knows of every agent, accepted keys and the grains in the mine,
// and sends a job only to the agents it selects.
type publisher struct {
	bus  bus.Publisher
	mine mine.Watcher
	keys interface {
		List(context.Context, ...keys.State) (keys.Listing, error)
	}
	agents agentConns
	// cluster reaches the agents connected to the other masters.
	cluster jobRelay
	// pillarOf is an agent's pillar as last compiled, for pillar targets.
	pillarOf func(id string) map[string]any
	log      *slog.Logger

	nodegroups atomic.Pointer[map[string]any]

	mu   sync.Mutex
	view mine.View // every agent's record, grains included
	live map[string]*liveJob
	// finds are the find_job questions waiting for agents' answers.
	finds map[string]chan wire.JobState
	seq   atomic.Uint64
}

// liveJob is a job this master published, while it may still return.
type liveJob struct {
	job     wire.Job
	newEv   *bus.Event // its salt/job/<jid>/new event: the cause of its returns
	sent    map[string]bool
	waiting map[string]bool // minions that have not returned
	expires time.Time
	// notify receives each return, for a caller waiting for the outcome.
	notify chan jobs.Return
	// origin is the master that published a job this one relayed to its
	// agents ("" for a job published here): their returns go to it.
	origin string
}

// agentConns are the agents as the publisher reaches them: the accepted
// connections of an id, and the accepted ids.
type agentConns interface {
	conns(id string) []Conn
	acceptedIDs() ([]string, bool)
}

// jobRelay reaches the agents connected to the other masters of the bus
// (the cluster): where they are, handing them a job, asking them about
// one, and passing their returns to the master that published it.
type jobRelay interface {
	locate(ctx context.Context, ids []string) map[string]string
	push(ctx context.Context, peer string, job []byte, newEv *bus.Event, ids []string) []string
	find(ctx context.Context, jid string, ids []string) map[string]wire.JobState
	forwardReturn(origin, id string, r wire.Return)
}

func newPublisher(b bus.Publisher, m mine.Watcher, k interface {
	List(context.Context, ...keys.State) (keys.Listing, error)
}, a agentConns, c jobRelay, pillarOf func(string) map[string]any, log *slog.Logger) *publisher {
	return &publisher{bus: b, mine: m, keys: k, agents: a, cluster: c, pillarOf: pillarOf, log: log,
		live: map[string]*liveJob{}, finds: map[string]chan wire.JobState{}}
}

// groups returns the nodegroups in force.
func (p *publisher) groups() map[string]any {
	if ng := p.nodegroups.Load(); ng != nil {
		return *ng
	}
	return nil
}

// configure reads the publisher's keys (at start and on reload).
func (p *publisher) configure(c *config.Master) error {
	var ng map[string]any
	if err := c.Decode("nodegroups", &ng); err != nil {
		return err
	}
	for name, v := range ng {
		switch v.(type) {
		case string, []any:
		default:
			return fmt.Errorf("%s: nodegroups: %s: want a compound target or a list of ids, got %T", c.Where("nodegroups"), name, v)
		}
		if _, err := target.ParseWith(name, "nodegroup", target.Options{Nodegroups: ng}); err != nil {
			return fmt.Errorf("%s: nodegroups: %w", c.Where("nodegroups"), err)
		}
	}
	p.nodegroups.Store(&ng)
	return nil
}

// serve follows the mine, where agents' grains are, and forgets old jobs.
func (p *publisher) serve(ctx context.Context) {
	changes, failed := mine.Feed(ctx, p.mine)
	t := time.NewTicker(pruneLiveEach)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-failed:
			p.log.Error("publisher: the mine watch stopped; grain targeting uses what it knew", "err", err)
			failed = nil
		case c := <-changes:
			p.mu.Lock()
			p.view.Apply(c)
			p.mu.Unlock()
		case <-t.C:
			p.prune()
		}
	}
}

func (p *publisher) prune() {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for jid, lj := range p.live {
		if now.After(lj.expires) {
			delete(p.live, jid)
		}
	}
}

// Targets returns the agents a target selects (accepted keys, matched on
// their id, grains and addresses), and for a list target the names it
// gives that have no accepted key.
func (p *publisher) Targets(ctx context.Context, tgt any, tgtType string) (minions, missing []string, err error) {
	t, err := target.ParseWith(tgt, tgtType, target.Options{Nodegroups: p.groups(), Pillar: true})
	if err != nil {
		return nil, nil, err
	}
	// The accepted ids as the keys watch keeps them (a change made on any
	// master is there within milliseconds), else the bucket's list.
	accepted, ok := p.agents.acceptedIDs()
	if !ok {
		l, err := p.keys.List(ctx, keys.Accepted)
		if err != nil {
			return nil, nil, err
		}
		accepted = l[keys.ListName(keys.Accepted)]
	}
	p.mu.Lock()
	for _, id := range accepted {
		f := target.Facts{ID: id, Pillar: p.pillarOf(id)}
		if h := p.view.Hosts[id]; h != nil {
			f.Grains = h.Grains
		}
		if t.Match(f) {
			minions = append(minions, id)
		}
	}
	p.mu.Unlock()
	if names, ok := t.Names(); ok {
		for _, n := range names {
			if !slices.Contains(accepted, n) {
				missing = append(missing, n)
			}
		}
	}
	return nonNil(minions), nonNil(missing), nil
}

// Publish sends a job to the agents its target selects: it fires Salt's
// <jid> and salt/job/<jid>/new events (stored before any agent can
// return), then pushes the job to each selected agent that is connected.
// With follow, the returns are also sent, as they arrive, on the channel
// it returns (buffered for every agent: a return never waits).
func (p *publisher) Publish(ctx context.Context, t jobs.Targeted, o bus.Origin, follow bool) (jobs.Published, <-chan jobs.Return, error) {
	if err := t.Check(); err != nil {
		return jobs.Published{}, nil, err
	}
	if t.TgtType == "" {
		t.TgtType = "glob"
	}
	minions, missing, err := p.Targets(ctx, t.Tgt, t.TgtType)
	if err != nil {
		return jobs.Published{}, nil, err
	}
	if len(minions) == 0 {
		return jobs.Published{Minions: minions, Missing: missing, NotConnected: []string{}}, nil, ErrNoMinions
	}
	if t.JID == "" {
		t.JID = jobs.NewJID()
	}
	job := t
	job.Arg = nonNil(t.Arg)
	pub := jobs.Published{JID: t.JID, Minions: minions, Missing: missing, NotConnected: []string{}}
	// Who is connected is known before the job is announced, so that its
	// record does not wait for agents it was never sent to.
	peers := make(map[string][]Conn, len(minions))
	var elsewhere []string
	for _, id := range minions {
		if ps := p.agents.conns(id); len(ps) > 0 {
			peers[id] = ps
		} else {
			elsewhere = append(elsewhere, id)
		}
	}
	// Agents connected to another master of the cluster get the job
	// through it.
	where := p.cluster.locate(ctx, elsewhere)
	for _, id := range elsewhere {
		if _, ok := where[id]; !ok {
			pub.NotConnected = append(pub.NotConnected, id)
		}
	}
	if _, err := bus.Fire(ctx, p.bus, t.JID, map[string]any{"minions": minions}, o); err != nil {
		return pub, nil, fmt.Errorf("job %s: %w", t.JID, err)
	}
	newData := map[string]any{}
	maps.Copy(newData, t.Extra)
	maps.Copy(newData, map[string]any{"jid": t.JID, "tgt": t.Tgt, "tgt_type": t.TgtType, "fun": t.Fun, "arg": jobs.Redact(job.Arg),
		"minions": minions, "missing": missing, "user": t.User})
	if len(pub.NotConnected) > 0 {
		// brine's: Salt's new event does not say who will not answer.
		newData["not_connected"] = pub.NotConnected
	}
	if len(t.Metadata) > 0 {
		newData["metadata"] = t.Metadata
	}
	newEv, err := bus.Fire(ctx, p.bus, "salt/job/"+t.JID+"/new", newData, o)
	if err != nil {
		return pub, nil, fmt.Errorf("job %s: %w", t.JID, err)
	}
	body, err := json.Marshal(job)
	if err != nil {
		return pub, nil, err
	}
	var notify chan jobs.Return
	if follow {
		notify = make(chan jobs.Return, len(minions))
	}
	lj := &liveJob{job: job, newEv: newEv, sent: map[string]bool{}, waiting: map[string]bool{},
		expires: time.Now().Add(liveFor), notify: notify}
	for _, id := range minions {
		lj.waiting[id] = true
	}
	p.mu.Lock()
	if len(p.live) >= maxLiveJobs {
		p.mu.Unlock()
		p.prune()
		p.mu.Lock()
	}
	p.live[t.JID] = lj
	p.mu.Unlock()
	for _, id := range minions {
		sent := false
		for _, peer := range peers[id] {
			// A connection whose send queue is full is as good as gone
			// for this job: it is reported, not silently counted as sent.
			sent = peer.Push(wire.PushJob, json.RawMessage(body)) || sent
		}
		if !sent {
			if len(peers[id]) > 0 {
				pub.NotConnected = append(pub.NotConnected, id)
			}
			continue
		}
		p.mu.Lock()
		lj.sent[id] = true
		p.mu.Unlock()
	}
	byPeer := map[string][]string{}
	for _, id := range elsewhere {
		if peer, ok := where[id]; ok {
			byPeer[peer] = append(byPeer[peer], id)
		}
	}
	for peer, ids := range byPeer {
		sent := p.cluster.push(ctx, peer, body, newEv, ids)
		p.mu.Lock()
		for _, id := range sent {
			lj.sent[id] = true
		}
		p.mu.Unlock()
		for _, id := range ids {
			if !slices.Contains(sent, id) {
				pub.NotConnected = append(pub.NotConnected, id)
			}
		}
	}
	p.log.Debug("job published", "jid", t.JID, "fun", t.Fun, "minions", len(minions), "not_connected", len(pub.NotConnected))
	return pub, notify, nil
}

// returned notes agent id's return to jid, once it is stored.
func (p *publisher) returned(id string, r wire.Return) {
	p.mu.Lock()
	lj := p.live[r.JID]
	if lj == nil || !lj.waiting[id] {
		p.mu.Unlock()
		return
	}
	delete(lj.waiting, id)
	if len(lj.waiting) == 0 && lj.notify == nil {
		delete(p.live, r.JID)
	}
	notify, origin := lj.notify, lj.origin
	p.mu.Unlock()
	if origin != "" {
		p.cluster.forwardReturn(origin, id, r)
	}
	if notify != nil {
		notify <- jobs.Return{ID: id, Return: r.Return, Retcode: r.Retcode, Success: r.Success, Out: r.Out, Time: r.Time}
	}
}

// targeted says whether job jid is live and targets agent id (it may
// return before its send is noted), and gives its new event, the cause of
// its return.
func (p *publisher) targeted(jid, id string) (*bus.Event, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lj := p.live[jid]
	if lj == nil || !lj.sent[id] && !lj.waiting[id] {
		return nil, false
	}
	return lj.newEv, true
}

// sentTo says whether job jid is live and was sent to agent id, and
// gives its new event (the cause of what the agent says of it).
func (p *publisher) sentTo(jid, id string) (*bus.Event, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lj := p.live[jid]
	if lj == nil || !lj.sent[id] {
		return nil, false
	}
	return lj.newEv, true
}

// reconnected publishes again, to an agent that comes back, the live jobs
// it was sent and has not returned: it may not have received them. The
// agent recognises a jid it has seen and does not run it twice.
func (p *publisher) reconnected(id string, peer Conn) {
	p.mu.Lock()
	var again [][]byte
	for _, lj := range p.live {
		if lj.sent[id] && lj.waiting[id] {
			if b, err := json.Marshal(lj.job); err == nil {
				again = append(again, b)
			}
		}
	}
	p.mu.Unlock()
	for _, b := range again {
		peer.Push(wire.PushJob, json.RawMessage(b))
	}
}

// relay pushes a job another master (origin) published to the agents
// among ids connected here, and keeps it live: its returns are stored here
// under its new event and passed on to origin. It returns the ids reached.
func (p *publisher) relay(origin string, job wire.Job, body json.RawMessage, newEv *bus.Event, ids []string) []string {
	var sent []string
	for _, id := range ids {
		ok := false
		for _, peer := range p.agents.conns(id) {
			ok = peer.Push(wire.PushJob, body) || ok
		}
		if ok {
			sent = append(sent, id)
		}
	}
	if len(sent) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	lj := p.live[job.JID]
	if lj == nil {
		lj = &liveJob{job: job, newEv: newEv, sent: map[string]bool{}, waiting: map[string]bool{},
			expires: time.Now().Add(liveFor), origin: origin}
		p.live[job.JID] = lj
	}
	for _, id := range sent {
		lj.sent[id], lj.waiting[id] = true, true
	}
	return sent
}

// forget drops a job whose caller stopped waiting.
func (p *publisher) forget(jid string) {
	p.mu.Lock()
	if lj := p.live[jid]; lj != nil {
		lj.notify = nil
		if len(lj.waiting) == 0 {
			delete(p.live, jid)
		}
	}
	p.mu.Unlock()
}

// FindJob asks the connected agents among ids whether they still run jid
// (Salt's saltutil.find_job, without a job of its own) and returns, by id,
// what those that answered within findJobWait said.
func (p *publisher) FindJob(ctx context.Context, jid string, ids []string) map[string]wire.JobState {
	var here, elsewhere []string
	for _, id := range ids {
		if len(p.agents.conns(id)) > 0 {
			here = append(here, id)
		} else {
			elsewhere = append(elsewhere, id)
		}
	}
	out := p.findLocal(ctx, jid, here)
	if len(elsewhere) > 0 {
		for id, st := range p.cluster.find(ctx, jid, elsewhere) {
			if slices.Contains(elsewhere, id) {
				out[id] = st
			}
		}
	}
	return out
}

// findLocal asks the agents among ids connected to this master.
func (p *publisher) findLocal(ctx context.Context, jid string, ids []string) map[string]wire.JobState {
	req := strconv.FormatUint(p.seq.Add(1), 10)
	answers := make(chan wire.JobState, len(ids))
	body, _ := json.Marshal(wire.FindJob{JID: jid, Req: req})
	asked := 0
	keyed := map[string]string{} // req+id -> id
	for _, id := range ids {
		peers := p.agents.conns(id)
		if len(peers) == 0 {
			continue
		}
		k := req + "/" + id
		keyed[k] = id
		p.mu.Lock()
		p.finds[k] = answers
		p.mu.Unlock()
		for _, peer := range peers {
			peer.Push(wire.PushFindJob, json.RawMessage(body))
		}
		asked++
	}
	defer func() {
		p.mu.Lock()
		for k := range keyed {
			delete(p.finds, k)
		}
		p.mu.Unlock()
	}()
	out := map[string]wire.JobState{}
	timer := time.NewTimer(findJobWait)
	defer timer.Stop()
	for len(out) < asked {
		select {
		case st := <-answers:
			if id, ok := keyed[st.Req]; ok {
				out[id] = st
			}
		case <-timer.C:
			return out
		case <-ctx.Done():
			return out
		}
	}
	return out
}

// jobState takes an agent's answer to a find_job question.
func (p *publisher) jobState(_ context.Context, id string, body json.RawMessage) (any, error) {
	var st wire.JobState
	if err := readBody("job state", body, &st); err != nil {
		return nil, err
	}
	k := st.Req + "/" + id
	p.mu.Lock()
	ch := p.finds[k]
	p.mu.Unlock()
	if ch != nil {
		st.Req = k
		select {
		case ch <- st:
		default:
		}
	}
	return map[string]any{}, nil
}

// stateProgress fires a state run's progress event, Salt's
// salt/job/<jid>/prog/<id>/<run_num>, for a job the agent was sent: the
// tag is the master's, so the agent asks rather than fires it.
func (p *publisher) progress(ctx context.Context, id string, body json.RawMessage) (any, error) {
	var pr wire.Progress
	if err := readBody("progress", body, &pr); err != nil {
		return nil, err
	}
	cause, ok := p.sentTo(pr.JID, id)
	if !ok {
		return nil, fmt.Errorf("%w: progress for job %s, which agent %s was not sent", wire.ErrInvalidRequest, pr.JID, id)
	}
	for _, res := range pr.Ret {
		n := 0
		if r, ok := res.(map[string]any); ok {
			if f, ok := r["__run_num__"].(float64); ok {
				n = int(f)
			}
		}
		tag := "salt/job/" + pr.JID + "/prog/" + id + "/" + strconv.Itoa(n)
		data := map[string]any{"data": map[string]any{"ret": pr.Ret, "len": pr.Len}, "id": id, "jid": pr.JID}
		e, err := bus.NewEvent(tag, data, bus.Origin{Source: bus.AgentSource(id), Cause: cause})
		if err != nil {
			return nil, err
		}
		e.ID = uuid.NewString()
		if err := p.bus.Publish(ctx, e); err != nil {
			return nil, fmt.Errorf("publish %q: %w", tag, err)
		}
	}
	return nil, nil
}

// Run publishes a job and waits until every agent it was sent to returned
// or wait ran out, asking those still silent whether they still run it
// (and waiting on while they do, up to wait again each time): what a
// local reaction's result is.
func (p *publisher) Run(ctx context.Context, t jobs.Targeted, o bus.Origin, wait time.Duration) (jobs.Outcome, error) {
	pub, notify, err := p.Publish(ctx, t, o, true)
	out := jobs.Outcome{Published: pub, Returns: map[string]jobs.Return{}}
	if err != nil {
		return out, err
	}
	defer p.forget(pub.JID)
	pending := map[string]bool{}
	for _, id := range pub.Minions {
		if !slices.Contains(pub.NotConnected, id) {
			pending[id] = true
		}
	}
	// finished are agents that said they finished the job before its
	// return arrived: it is on its way, and waited for once more.
	finished := map[string]bool{}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case r := <-notify:
			if pending[r.ID] {
				delete(pending, r.ID)
				out.Returns[r.ID] = r
			}
		case <-timer.C:
			running := false
			for id, st := range p.FindJob(ctx, pub.JID, slices.Sorted(maps.Keys(pending))) {
				if (st.Running || st.Done && !finished[id]) && pending[id] {
					running = true
				}
				finished[id] = finished[id] || st.Done
			}
			if !running {
				out.NoResponse = slices.Sorted(maps.Keys(pending))
				return out, nil
			}
			timer.Reset(wait)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return out, nil
}
