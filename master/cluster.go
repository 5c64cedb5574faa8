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

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/lease"
	"github.com/brinehq/brine/wire"
)

// Several masters share one bus (an embedded cluster or an external NATS
// cluster). What is stored is shared by construction: events, keys, the
// mine, jobs; the durable consumers (reactor, job recorder, mine, Slack)
// are one each for the cluster. What lives in a master's memory — the
// agents connected to it, the jobs it published — is reached through
// requests between the masters (cluster subjects <id>.push, .find, .ret,
// .connected), and the work that must have one writer runs under a lease
// (package lease): the master's own ("master.<id>", whose absence tells the
// others it is gone), the DDNS sync, the presence events, each
// orchestration ("orch.<jid>") and the cloud runner.
type cluster struct {
	self   string
	bus    peerBus
	log    *slog.Logger
	leases *lease.Store
	// ctx bounds the answers to the other masters' requests: the
	// master's run.
	ctx context.Context
	// connected lists the agents connected to this master, and jobs are
	// the jobs it published: what the other masters ask about.
	connected func() []string
	jobs      localJobs
	// onGone takes over the work of a master that died.
	onGone func(ctx context.Context, master string)

	mu    sync.Mutex
	own   *lease.Lease
	peers map[string]lease.Holder // the other live masters, by id
}

const (
	masterLeasePrefix = "master."
	// peerPoll is how often a master looks at the leases for masters that
	// came or went.
	peerPoll = time.Second
	// peerWait bounds a request to another master.
	peerWait = 2 * time.Second
	// clusterBucket holds what every master of a bus must agree on.
	clusterBucket = "brine_cluster"
)

// newCluster is this master's part among the masters of bus, which
// startCluster joins; connected and jobs are what it answers them about.
func newCluster(self string, b peerBus, log *slog.Logger, connected func() []string, onGone func(context.Context, string)) *cluster {
	return &cluster{self: self, bus: b, log: log, connected: connected, onGone: onGone, peers: map[string]lease.Holder{}}
}

// peerBus is how masters ask each other: requests on subjects of the bus.
type peerBus interface {
	Handle(ctx context.Context, subject string, h func(data []byte) []byte) error
	Request(ctx context.Context, subject string, data []byte) ([]byte, error)
	Send(subject string, data []byte) error
}

// localJobs are this master's jobs as the other masters reach them: a job
// one of them published, for agents connected here; a return for a job
// published here that reached another master; a find_job question.
type localJobs interface {
	relay(origin string, job wire.Job, body json.RawMessage, newEv *bus.Event, ids []string) []string
	returned(id string, r wire.Return)
	findLocal(ctx context.Context, jid string, ids []string) map[string]wire.JobState
}

// startCluster joins this master to the others on its bus: it checks that
// they use the same master key, takes its own lease (refusing to start
// beside a running master of the same id) and answers their requests.
func (m *Master) startCluster(ctx context.Context) error {
	kv, err := m.bus.Bucket(ctx, lease.BucketConfig(0))
	if err != nil {
		return err
	}
	ckv, err := m.bus.Bucket(ctx, bus.BucketConfig{Name: clusterBucket, Description: "brine: what every master of the bus agrees on"})
	if err != nil {
		return err
	}
	s := m.cfg.Settings
	if err := checkKey(ctx, ckv, s.KeyFile, s.ID); err != nil {
		return err
	}
	c := m.cluster
	c.leases, c.ctx = lease.New(kv, s.ID, 0), m.ctx
	c.own, err = c.leases.Acquire(ctx, masterLeasePrefix+c.self)
	if held, ok := errors.AsType[*lease.ErrHeld](err); ok {
		return fmt.Errorf("another master with id %q is running on this bus (since %s): every master needs its own id",
			c.self, held.Holder.Since.Format(time.RFC3339))
	}
	if err != nil {
		return fmt.Errorf("master lease: %w", err)
	}
	if err := c.serve(m.ctx); err != nil {
		return err
	}
	c.refreshPeers(ctx)
	m.grp.Go(func() error { c.run(m.ctx); return nil })
	return nil
}

// serve answers the other masters' requests (<id>.push, .find, .ret,
// .connected) until ctx ends.
func (c *cluster) serve(ctx context.Context) error {
	for sub, h := range map[string]func(context.Context, []byte) (any, error){
		"push": c.onPush, "find": c.onFind, "ret": c.onRet, "connected": c.onConnected,
	} {
		if err := c.bus.Handle(ctx, c.self+"."+sub, c.answer(h)); err != nil {
			return err
		}
	}
	return nil
}

// checkKey refuses a master (self, keeping its key in keyFile) whose key
// differs from the one the masters of this bus use, recorded in kv:
// agents pin the master's key, and one that changes with the master they
// reach refuses them all.
func checkKey(ctx context.Context, kv bus.Bucket, keyFile, self string) error {
	key, err := gateway.EnsureKey(keyFile)
	if err != nil {
		return err
	}
	type record struct {
		Fingerprint string `json:"fingerprint"`
		Master      string `json:"master"`
	}
	mine := record{Fingerprint: curve.Fingerprint(gateway.MasterKeys(key).Public), Master: self}
	val, _ := json.Marshal(mine)
	if _, err := kv.Create(ctx, "master_key", val); !errors.Is(err, bus.ErrKeyChanged) {
		return err
	}
	e, err := kv.Get(ctx, "master_key")
	if err != nil {
		return err
	}
	var have record
	if err := json.Unmarshal(e.Value, &have); err != nil {
		return fmt.Errorf("%s master_key: %w", clusterBucket, err)
	}
	switch {
	case have.Fingerprint == mine.Fingerprint:
		return nil
	case have.Master == self:
		// This master's own key, replaced on purpose: the others (if any)
		// refuse to start until they hold it too.
		_, err := kv.Update(ctx, "master_key", val, e.Revision)
		return err
	}
	return fmt.Errorf("key_file %s: this master's key (fingerprint %s) is not the one the masters of this bus use "+
		"(fingerprint %s, recorded by master %s): copy that master's key_file here, since agents pin the master key",
		keyFile, mine.Fingerprint, have.Fingerprint, have.Master)
}

// answer wraps a request handler: JSON in, JSON out, errors as {"error"}.
func (c *cluster) answer(h func(context.Context, []byte) (any, error)) func([]byte) []byte {
	return func(data []byte) []byte {
		ctx, cancel := context.WithTimeout(c.ctx, peerWait)
		defer cancel()
		out, err := h(ctx, data)
		if err != nil {
			out = map[string]string{"error": err.Error()}
		}
		b, _ := json.Marshal(out)
		return b
	}
}

// run follows the other masters' leases, adopts the work of those that
// died, and wins this master's lease back if it lost it (it hung, or was
// cut off from the quorum, for longer than the lease).
func (c *cluster) run(ctx context.Context) {
	t := time.NewTicker(peerPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.mu.Lock()
			own := c.own
			c.mu.Unlock()
			own.Release()
			return
		case <-t.C:
		}
		c.mu.Lock()
		own := c.own
		c.mu.Unlock()
		if err := own.Context().Err(); err != nil {
			c.log.Error("this master lost its lease (it hung or lost the quorum): its single-writer work was stopped; taking the lease again",
				"cause", context.Cause(own.Context()))
			l, err := c.leases.Wait(ctx, masterLeasePrefix+c.self)
			if err != nil {
				continue
			}
			c.mu.Lock()
			c.own = l
			c.mu.Unlock()
		}
		for _, gone := range c.refreshPeers(ctx) {
			c.log.Warn("master gone: its lease expired or was released", "master", gone)
			c.onGone(ctx, gone)
		}
	}
}

// refreshPeers reads the masters' leases and returns the masters that
// were live and are not any more.
func (c *cluster) refreshPeers(ctx context.Context) (gone []string) {
	holders, err := c.leases.Holders(ctx)
	if err != nil {
		return nil
	}
	now := map[string]lease.Holder{}
	for name, h := range holders {
		if id, ok := strings.CutPrefix(name, masterLeasePrefix); ok && id != c.self {
			now[id] = h
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.peers {
		if _, ok := now[id]; !ok {
			gone = append(gone, id)
		}
	}
	for id, h := range now {
		if _, ok := c.peers[id]; !ok {
			c.log.Info("master joined", "master", id, "since", h.Since)
		}
	}
	c.peers = now
	return gone
}

// Peers are the other live masters, sorted.
func (c *cluster) Peers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.peers))
}

// alive reports whether master id is this one or a live peer.
func (c *cluster) alive(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.peers[id]
	return ok || id == c.self
}

// adopt takes over what a dead master left: one survivor (the holder of
// adopt.<id>) closes its unfinished runner jobs as interrupted, and every
// survivor offers to resume its orchestrations, each under its own lease.
func (m *Master) adopt(ctx context.Context, dead string) {
	l, err := m.cluster.leases.Acquire(ctx, "adopt."+dead)
	if err == nil {
		src := "brine://" + dead
		closed, _, err := m.jobs.CloseOrphans(ctx, m.bus, []string{src + "/run", src + "/jobs", src + "/reactor"},
			bus.Origin{Source: m.source + "/jobs"}, func(j *jobs.Job) bool { return isOrchestration(j.Fun) })
		if err != nil {
			m.log.Error("closing the jobs of a dead master", "master", dead, "err", err)
		} else if len(closed) > 0 {
			m.log.Warn("closed the jobs a dead master did not finish", "master", dead, "jids", closed)
		}
		l.Release()
	}
	m.resumeOrphanOrchestrations(ctx)
}

// ask sends a request to every live peer and returns their answers.
func (c *cluster) ask(ctx context.Context, sub string, req any) map[string][]byte {
	peers := c.Peers()
	if len(peers) == 0 {
		return nil
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, peerWait)
	defer cancel()
	var mu sync.Mutex
	out := map[string][]byte{}
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Go(func() {
			rep, err := c.bus.Request(ctx, p+"."+sub, body)
			if err != nil {
				c.log.Debug("request to another master failed", "master", p, "request", sub, "err", err)
				return
			}
			mu.Lock()
			out[p] = rep
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// connectedReq asks which of IDs (all when empty) are connected.
type connectedReq struct {
	IDs []string `json:"ids,omitempty"`
}

func (c *cluster) onConnected(_ context.Context, data []byte) (any, error) {
	var r connectedReq
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	conn := c.connected()
	if len(r.IDs) == 0 {
		return conn, nil
	}
	var out []string
	for _, id := range r.IDs {
		if _, ok := slices.BinarySearch(conn, id); ok {
			out = append(out, id)
		}
	}
	return nonNil(out), nil
}

// locate returns, for the ids not connected here, the live master each is
// connected to.
func (c *cluster) locate(ctx context.Context, ids []string) map[string]string {
	if len(ids) == 0 {
		return nil
	}
	where := map[string]string{}
	for peer, rep := range c.ask(ctx, "connected", connectedReq{IDs: ids}) {
		var got []string
		if json.Unmarshal(rep, &got) == nil {
			for _, id := range got {
				where[id] = peer
			}
		}
	}
	return where
}

// connected lists the agents connected to any live master, sorted.
func (m *Master) connected(ctx context.Context) []string {
	all := map[string]bool{}
	for _, id := range m.agents.Connected() {
		all[id] = true
	}
	if m.cluster != nil {
		for _, rep := range m.cluster.ask(ctx, "connected", connectedReq{}) {
			var got []string
			if json.Unmarshal(rep, &got) == nil {
				for _, id := range got {
					all[id] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(all))
}

// pushReq is a job for agents connected to another master.
type pushReq struct {
	Origin string          `json:"origin"`
	Job    json.RawMessage `json:"job"`
	New    *bus.Event      `json:"new"`
	IDs    []string        `json:"ids"`
}

// push sends a job published here to the agents connected to peer, and
// returns those it reached.
func (c *cluster) push(ctx context.Context, peer string, job []byte, newEv *bus.Event, ids []string) []string {
	body, err := json.Marshal(pushReq{Origin: c.self, Job: job, New: newEv, IDs: ids})
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, peerWait)
	defer cancel()
	rep, err := c.bus.Request(ctx, peer+".push", body)
	if err != nil {
		c.log.Warn("could not hand a job to another master", "master", peer, "err", err)
		return nil
	}
	var sent []string
	_ = json.Unmarshal(rep, &sent)
	return sent
}

func (c *cluster) onPush(_ context.Context, data []byte) (any, error) {
	var r pushReq
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	var job wire.Job
	if err := json.Unmarshal(r.Job, &job); err != nil {
		return nil, err
	}
	return nonNil(c.jobs.relay(r.Origin, job, r.Job, r.New, r.IDs)), nil
}

// retMsg is an agent's return, sent to the master that published the job.
type retMsg struct {
	ID     string      `json:"id"`
	Return wire.Return `json:"return"`
}

// forwardReturn tells origin, which published the job, of a return that
// reached this master (it is stored already).
func (c *cluster) forwardReturn(origin, id string, r wire.Return) {
	body, err := json.Marshal(retMsg{ID: id, Return: r})
	if err == nil {
		err = c.bus.Send(origin+".ret", body)
	}
	if err != nil {
		c.log.Warn("could not pass a return to the master that published the job", "master", origin, "jid", r.JID, "err", err)
	}
}

func (c *cluster) onRet(_ context.Context, data []byte) (any, error) {
	var r retMsg
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	c.jobs.returned(r.ID, r.Return)
	return nil, nil
}

// findReq asks another master's agents whether they still run JID.
type findReq struct {
	JID string   `json:"jid"`
	IDs []string `json:"ids"`
}

func (c *cluster) onFind(ctx context.Context, data []byte) (any, error) {
	var r findReq
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	return c.jobs.findLocal(ctx, r.JID, r.IDs), nil
}

// find asks the other masters about the ids not connected here.
func (c *cluster) find(ctx context.Context, jid string, ids []string) map[string]wire.JobState {
	out := map[string]wire.JobState{}
	for _, rep := range c.ask(ctx, "find", findReq{JID: jid, IDs: ids}) {
		var got map[string]wire.JobState
		if json.Unmarshal(rep, &got) == nil {
			maps.Copy(out, got)
		}
	}
	return out
}

// clusterName names the masters of an embedded cluster ("" otherwise: on
// an external NATS each master keeps its own name, as before clusters).
func (m *Master) clusterName() string {
	b := m.cfg.Settings.Bus
	switch {
	case b.Cluster.Enabled():
		return b.Cluster.Name
	}
	return ""
}

// underLease runs fn under the cluster-wide lease name, which this master
// holds or takes; while another master holds it, it waits (wait) or fails
// naming the holder. fn's context ends if the lease is lost.
func (m *Master) underLease(ctx context.Context, name string, wait bool, fn func(context.Context) (any, error)) (any, error) {
	acquire := m.cluster.leases.Acquire
	if wait {
		acquire = m.cluster.leases.Wait
	}
	l, err := acquire(ctx, name)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(l.Context(), func() { cancel(context.Cause(l.Context())) })
	defer stop()
	return fn(lctx)
}
