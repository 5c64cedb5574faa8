package saltmaster

import (
	"crypto/rsa"
	"encoding/json"
	"sync"
	"time"

	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/saltproto"
	"github.com/brinehq/brine/wire"
)

// minion is a salt-minion's signed-in session: the wire.Conn the master
// knows it by. A salt-minion has no connection that says who it is — its
// requests come on short-lived REQ sockets and its SUB socket is
// anonymous — so a session stands for the minion from an accepted _auth
// until its key changes, it signs in again with another key, or it stops
// listening (Config.Grace).
type minion struct {
	t      *Transport
	id     string
	pub    string // as the key store records it
	rsaPub *rsa.PublicKey

	mu     sync.Mutex
	host   string // its address (where): guarded by mu
	remote string
	seen   time.Time
	// proven are the addresses a load with this minion's tok came from:
	// only there is a load without one (a return, grains) believed.
	proven map[string]bool
	// grains a _pillar brought from an address not yet proven, applied
	// once it is (a minion asks for its pillar before it fires its start
	// event, the first load with its tok).
	grains     map[string]any
	grainsFrom string
	// tok is the last tok verified, so that each request does not cost an
	// RSA operation.
	tok []byte
	// sent are the jids published to this minion, and when (markSent).
	sent map[string]time.Time
}

// resendAfter is how long a job published to a minion is not published to
// it again. The master pushes a live job again to an agent that says
// hello again (it may have missed it); a salt-minion signing in again
// after the session key changed still holds what it could not open, and
// opens it once signed in. A second copy, with a higher serial, would make
// it drop the first as a replay — and the copy may be one for other
// minions, which it ignores: it would run neither.
const resendAfter = 10 * time.Minute

// markSent records that jid is published to m now, false when it already
// was within resendAfter.
func (m *minion) markSent(jid string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if at, ok := m.sent[jid]; ok && now.Sub(at) < resendAfter {
		return false
	}
	if m.sent == nil {
		m.sent = map[string]time.Time{}
	}
	if len(m.sent) >= 1024 {
		for j, at := range m.sent {
			if now.Sub(at) >= resendAfter {
				delete(m.sent, j)
			}
		}
	}
	m.sent[jid] = now
	return true
}

func (m *minion) Key() string { return m.pub }

func (m *minion) Remote() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.remote
}

// Close ends the session: the master cut the minion off (its key is no
// longer accepted). The session key is rotated, so that what the minion
// holds opens nothing published from now on.
func (m *minion) Close() { m.t.ended(m, true) }

// Push publishes a job or a find_job question to the minion; an
// acceptance needs no message (a pending minion signs in again every
// acceptance_wait_time).
func (m *minion) Push(method string, body any) bool {
	raw, ok := body.(json.RawMessage)
	if !ok && body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return false
		}
		raw = b
	}
	switch method {
	case wire.PushAccepted:
		return true
	case wire.PushJob:
		return m.t.queueJob(raw, m)
	case wire.PushFindJob:
		var f wire.FindJob
		if err := json.Unmarshal(raw, &f); err != nil {
			return false
		}
		m.t.queueFind(f, m)
		return true
	}
	return false
}

func (m *minion) touch(remote string) {
	m.mu.Lock()
	m.seen = time.Now()
	m.remote = remote
	m.mu.Unlock()
}

// heard notes that m was heard from (a subscriber from its address) at
// now.
func (m *minion) heard(now time.Time) {
	m.mu.Lock()
	m.seen = now
	m.mu.Unlock()
}

// where is the address m is at: where it signed in from first, then
// where its tok last came from.
func (m *minion) where() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.host
}

func (m *minion) lastSeen() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen
}

// checkTok verifies the tok of a load that came from host, and on success
// proves host. It returns the grains waiting for host to be proven.
func (m *minion) checkTok(load map[string]any, host string) (ok bool, grains map[string]any) {
	tok, _ := saltproto.Bytes(load["tok"])
	m.mu.Lock()
	known := tok != nil && string(tok) == string(m.tok)
	m.mu.Unlock()
	if !known {
		if !verifyTok(m.rsaPub, load) {
			return false, nil
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tok = tok
	if m.proven == nil {
		m.proven = map[string]bool{}
	}
	if !m.proven[host] {
		m.proven[host] = true
		m.t.dirty.Store(true)
	}
	// The minion is where its tok comes from: its liveness and its
	// publishes follow it there.
	m.host = host
	if m.grains != nil && m.grainsFrom == host {
		grains, m.grains = m.grains, nil
	}
	return true, grains
}

func (m *minion) provenFrom(host string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proven[host]
}

// holdGrains keeps grains from an address not yet proven until it is.
func (m *minion) holdGrains(grains map[string]any, host string) {
	m.mu.Lock()
	m.grains, m.grainsFrom = grains, host
	m.mu.Unlock()
}

// batch is one publish being gathered: the publisher pushes a job to each
// of its minions in turn, and they all get one message.
type batch struct {
	load saltproto.Ordered
	jid  string
	ids  []string
	// killAfter is the job's --kill-after, which a salt-minion does not
	// know: the master sends it saltutil.kill_job then (killJob).
	killAfter time.Duration
}

// gather is how long a publish waits for the rest of its minions.
const gather = 2 * time.Millisecond

// queueJob adds minion m to the publish of the job raw is, unless the
// job was published to it already (markSent). The master pushes one job to
// each of its minions in turn, with the same body: it is decoded once per
// publish, not once per minion, so that a job to thousands of minions is
// gathered within one publish.
func (t *Transport) queueJob(raw json.RawMessage, m *minion) bool {
	key := "job/" + string(raw)
	if t.join(key, m, true) {
		return true
	}
	job, err := jobs.DecodeTargeted(raw)
	if err != nil {
		t.log.Error("job not published to salt-minion", "id", m.id, "err", err)
		return false
	}
	t.start(key, jobLoad(job), m, true)
	return true
}

// jobLoad is ClearFuncs._prep_pub's load for job, targeted at the minions
// this master reaches over Salt's transport: the master resolved the
// target, so each minion only checks it is in the list (tgt, added by
// flush).
func jobLoad(job jobs.Targeted) *batch {
	args := job.Arg
	if args == nil {
		args = []any{}
	}
	load := saltproto.Ordered{{Key: "fun", Value: job.Fun}, {Key: "arg", Value: args},
		{Key: "jid", Value: job.JID}, {Key: "ret", Value: job.Ret}, {Key: "tgt_type", Value: "list"},
		{Key: "user", Value: job.User}}
	if len(job.Metadata) > 0 {
		load = append(load, saltproto.KV{Key: "metadata", Value: job.Metadata})
	}
	return &batch{load: load, jid: job.JID, killAfter: time.Duration(job.KillAfter * float64(time.Second))}
}

// findJob is a saltutil.find_job published for the master's question req
// about jid.
type findJob struct {
	jid, req string
	expires  time.Time
}

// findWait bounds how long a find_job's answers are taken.
const findWait = time.Minute

// queueFind asks minion m, in a saltutil.find_job of its own, whether it
// still runs f.JID; the answer comes as a _return.
func (t *Transport) queueFind(f wire.FindJob, m *minion) {
	key := "find/" + f.Req
	if !t.join(key, m, false) {
		t.start(key, &batch{load: t.ownJob("saltutil.find_job", f.JID, f.Req)}, m, false)
	}
}

// ownJob is a job the transport publishes on the master's behalf about
// job jid (find_job, kill_job): its returns answer req ("" for none) and
// are not stored as a job's.
func (t *Transport) ownJob(fun, jid, req string) saltproto.Ordered {
	own := jobs.NewJID()
	t.mu.Lock()
	t.finds[own] = findJob{jid: jid, req: req, expires: time.Now().Add(findWait)}
	t.mu.Unlock()
	return saltproto.Ordered{{Key: "fun", Value: fun}, {Key: "arg", Value: []any{jid}},
		{Key: "jid", Value: own}, {Key: "ret", Value: ""}, {Key: "tgt_type", Value: "list"}, {Key: "user", Value: "root"}}
}

// killJob sends saltutil.kill_job for jid to ids, at the job's
// --kill-after: a salt-minion still running it ends it, one that is done
// answers that it is not running.
func (t *Transport) killJob(jid string, ids []string) {
	t.send(t.ownJob("saltutil.kill_job", jid, ""), ids, time.Now())
}

// join adds m to the publish being gathered under key, false when there is
// none. once: not if the batch's job was published to m already.
func (t *Transport) join(key string, m *minion, once bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.batches[key]
	if b == nil {
		return false
	}
	b.add(m, once)
	return true
}

// start gathers a publish under key with b, or joins the one another push
// started meanwhile, and adds m.
func (t *Transport) start(key string, b *batch, m *minion, once bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur := t.batches[key]; cur != nil {
		b = cur
	} else {
		t.batches[key] = b
		time.AfterFunc(gather, func() { t.flush(key) })
	}
	b.add(m, once)
}

// add adds m to b's minions (once: unless b's job was published to it).
func (b *batch) add(m *minion, once bool) {
	if !once || m.markSent(b.jid, time.Now()) {
		b.ids = append(b.ids, m.id)
	}
}

// flush publishes the batch gathered under key.
func (t *Transport) flush(key string) {
	t.mu.Lock()
	b := t.batches[key]
	delete(t.batches, key)
	t.mu.Unlock()
	if b == nil || len(b.ids) == 0 {
		return
	}
	if b.killAfter > 0 {
		time.AfterFunc(b.killAfter, func() { t.killJob(b.jid, b.ids) })
	}
	t.send(b.load, b.ids, time.Now().Add(awaitSubscriber))
}

// awaitSubscriber is how long a publish waits for a minion that has no
// subscriber yet: one that has just signed in connects its SUB socket a
// moment later, and one that restarts within seconds.
const awaitSubscriber = 5 * time.Second

// send publishes load to the minions ids whose address has a subscriber,
// and to the others once it has one (or at until, whatever its address:
// a minion's SUB socket may come from another one) — what Salt's master
// publishes before a minion subscribed is lost to it.
func (t *Transport) send(load saltproto.Ordered, ids []string, until time.Time) {
	hosts := t.pub.SubscriberHosts()
	ready, waiting := ids, []string(nil)
	if time.Now().Before(until) {
		ready = nil
		t.mu.Lock()
		for _, id := range ids {
			if m := t.minions[id]; m == nil || hosts[m.where()] {
				ready = append(ready, id)
			} else {
				waiting = append(waiting, id)
			}
		}
		t.mu.Unlock()
	}
	if len(ready) > 0 {
		if err := t.publish(append(load[:len(load):len(load)], saltproto.KV{Key: "tgt", Value: strs(ready)}), ready); err != nil {
			t.log.Error("publishing to salt-minions", "minions", len(ready), "err", err)
		}
	}
	if len(waiting) > 0 {
		time.AfterFunc(100*time.Millisecond, func() { t.send(load, waiting, until) })
	}
}

// publish sends one load to the minions ids, encrypted with the session
// key and signed (sign_pub_messages). Publishes are serialised: a
// minion drops a serial not above the last it saw, so the serial each
// publish takes and the order subscribers receive them in must be the
// same.
func (t *Transport) publish(load saltproto.Ordered, ids []string) error {
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	t.mu.Lock()
	serial, exhausted := t.serial.Next()
	t.mu.Unlock()
	if exhausted {
		t.rotate()
		t.mu.Lock()
		serial, _ = t.serial.Next()
		t.mu.Unlock()
	}
	var sign *rsa.PrivateKey
	if t.cfg.SignPubMessages {
		sign = t.cfg.Keys.Key
	}
	payload, err := saltproto.WrapPublish(t.crypticle(), load, serial, sign)
	if err != nil {
		return err
	}
	for _, frames := range saltproto.PublishFrames(payload, t.cfg.ZMQFiltering, ids, false) {
		t.pub.Publish(frames...)
	}
	t.count.publishes.Add(1)
	return nil
}
