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
	host   string // the address it last signed in from
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
		job, err := jobs.DecodeTargeted(raw)
		if err != nil {
			m.t.log.Error("job not published to salt-minion", "id", m.id, "err", err)
			return false
		}
		if m.markSent(job.JID, time.Now()) {
			m.t.queueJob(job, m.id)
		}
		return true
	case wire.PushFindJob:
		var f wire.FindJob
		if err := json.Unmarshal(raw, &f); err != nil {
			return false
		}
		m.t.queueFind(f, m.id)
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

func (m *minion) setRemote(remote string) {
	m.mu.Lock()
	m.host, m.remote, m.seen = hostOf(remote), remote, time.Now()
	m.mu.Unlock()
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
	ids  []string
	// killAfter is the job's --kill-after, which a salt-minion does not
	// know: the master sends it saltutil.kill_job then (killJob).
	killAfter time.Duration
}

// gather is how long a publish waits for the rest of its minions.
const gather = 2 * time.Millisecond

// queueJob adds id to the publish of job.
func (t *Transport) queueJob(job jobs.Targeted, id string) {
	t.queue(job.JID, id, time.Duration(job.KillAfter*float64(time.Second)), func() saltproto.Ordered {
		args := job.Arg
		if args == nil {
			args = []any{}
		}
		// ClearFuncs._prep_pub's load, targeted at the minions this
		// master reaches over Salt's transport: the master resolved the
		// target, so each minion only checks it is in the list.
		load := saltproto.Ordered{{Key: "fun", Value: job.Fun}, {Key: "arg", Value: args},
			{Key: "jid", Value: job.JID}, {Key: "ret", Value: job.Ret}, {Key: "tgt_type", Value: "list"},
			{Key: "user", Value: job.User}}
		if len(job.Metadata) > 0 {
			load = append(load, saltproto.KV{Key: "metadata", Value: job.Metadata})
		}
		return load
	})
}

// findJob is a saltutil.find_job published for the master's question req
// about jid.
type findJob struct {
	jid, req string
	expires  time.Time
}

// findWait bounds how long a find_job's answers are taken.
const findWait = time.Minute

// queueFind asks id, in a saltutil.find_job of its own, whether it still
// runs f.JID; the answer comes as a _return.
func (t *Transport) queueFind(f wire.FindJob, id string) {
	t.queue("find/"+f.Req, id, 0, func() saltproto.Ordered { return t.ownJob("saltutil.find_job", f.JID, f.Req) })
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
	load := append(t.ownJob("saltutil.kill_job", jid, ""), saltproto.KV{Key: "tgt", Value: strs(ids)})
	if err := t.publish(load, ids); err != nil {
		t.log.Error("kill_job to salt-minions", "jid", jid, "err", err)
	}
}

// queue adds id to the publish gathered under key, made by load when it
// is the first.
func (t *Transport) queue(key, id string, killAfter time.Duration, load func() saltproto.Ordered) {
	t.mu.Lock()
	b := t.batches[key]
	if b == nil {
		t.mu.Unlock()
		l := load()
		t.mu.Lock()
		if b = t.batches[key]; b == nil {
			b = &batch{load: l, killAfter: killAfter}
			t.batches[key] = b
			time.AfterFunc(gather, func() { t.flush(key) })
		}
	}
	b.ids = append(b.ids, id)
	t.mu.Unlock()
}

// flush publishes the batch gathered under key.
func (t *Transport) flush(key string) {
	t.mu.Lock()
	b := t.batches[key]
	delete(t.batches, key)
	t.mu.Unlock()
	if b == nil {
		return
	}
	load := append(b.load, saltproto.KV{Key: "tgt", Value: strs(b.ids)})
	if err := t.publish(load, b.ids); err != nil {
		t.log.Error("publishing to salt-minions", "minions", len(b.ids), "err", err)
		return
	}
	if b.killAfter > 0 {
		jid, _ := b.load.Get("jid")
		time.AfterFunc(b.killAfter, func() { t.killJob(jid.(string), b.ids) })
	}
}

// publish sends one load to the minions ids, encrypted with the session
// key and signed (sign_pub_messages).
func (t *Transport) publish(load saltproto.Ordered, ids []string) error {
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
