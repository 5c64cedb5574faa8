package saltmaster

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bus/gateway/saltzmq"
	"github.com/brinehq/brine/saltproto"
	"github.com/brinehq/brine/wire"
)

// Config sets up a Transport.
type Config struct {
	// Keys are the master's RSA keys (master.pem, master.pub).
	Keys *saltproto.MasterKeys
	// PublishPort is told to minions in the _auth reply.
	PublishPort int
	// PubSig is master_sign_pubkey's signature of master.pub, nil when
	// that option is off.
	PubSig []byte
	// SignPubMessages signs every publish (Salt's sign_pub_messages,
	// on by default since 3006: a 3006 minion refuses unsigned ones).
	SignPubMessages bool
	// ZMQFiltering publishes each job under its minions' topics (Salt's
	// zmq_filtering; the minions must have it on too).
	ZMQFiltering bool
	// RotateAESKey makes a new session key when a key is rejected or
	// deleted (Salt's rotate_aes_key, on by default): the minion cut off
	// holds the old one and learns nothing more.
	RotateAESKey bool
	// Normalize is the form of a minion's public key the key store
	// records and compares (Salt's clean_key).
	Normalize func(pub string) string
	// FileBufferSize is the chunk _serve_file sends (Salt's
	// file_buffer_size, default 1 MiB).
	FileBufferSize int
	// MasterOpts is what _master_opts answers: the master options a
	// minion's state run reads (file_roots' saltenvs are filled in).
	MasterOpts map[string]any
	// Grace is how long a minion counts as connected without a
	// subscriber from its address nor a request (default 30 s: a
	// minion's SUB socket reconnects within 11 s).
	Grace time.Duration
	// StateFile keeps the session key and the minions holding it across
	// restarts (persist.go); "" keeps nothing.
	StateFile string
	// IsPending reports the error of a hello turned away because too many
	// keys are pending (Salt's "full" answer).
	IsPending func(error) bool
	Log       *slog.Logger
}

// Transport serves salt-minions through the master's agent methods. Its
// RequestServer and Publisher are given to the gateway, which hands them
// the connections of Salt's minions on the master's two ports.
type Transport struct {
	cfg    Config
	master *saltproto.Master
	req    *saltzmq.RequestServer
	pub    *saltzmq.Publisher
	log    *slog.Logger

	methods map[string]wire.Handler
	gone    func(wire.Conn)

	// pubMu orders publishes (publish).
	pubMu   sync.Mutex
	mu      sync.Mutex
	session *saltproto.Crypticle
	serial  saltproto.Serial
	minions map[string]*minion // accepted sessions by id
	finds   map[string]findJob // find_job jids in flight
	batches map[string]*batch  // publishes being gathered, by jid
	// restore are the sessions StateFile held, taken up by Run.
	restore []savedMinion
	// dirty: the sessions changed since StateFile was written.
	dirty atomic.Bool
	count counters
}

// New prepares a transport; ServeAgents must be called before the
// gateway hands it a connection.
func New(cfg Config) (*Transport, error) {
	if cfg.Keys == nil {
		return nil, errors.New("saltmaster: the master's RSA keys are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Normalize == nil {
		cfg.Normalize = func(s string) string { return s }
	}
	if cfg.FileBufferSize <= 0 {
		cfg.FileBufferSize = 1 << 20
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 30 * time.Second
	}
	if cfg.IsPending == nil {
		cfg.IsPending = func(error) bool { return false }
	}
	key, err := saltproto.GenerateKeyString()
	if err != nil {
		return nil, err
	}
	session, err := saltproto.NewCrypticle(key)
	if err != nil {
		return nil, err
	}
	t := &Transport{cfg: cfg, log: cfg.Log.With("component", "salt-transport"), session: session,
		master:  &saltproto.Master{Keys: cfg.Keys, PublishPort: cfg.PublishPort, PubSig: cfg.PubSig},
		minions: map[string]*minion{}, finds: map[string]findJob{}, batches: map[string]*batch{}}
	if err := t.load(); err != nil {
		return nil, err
	}
	t.pub = saltzmq.NewPublisher(saltzmq.PublisherConfig{}, cfg.Log)
	if t.req, err = saltzmq.NewRequestServer(saltzmq.RequestConfig{Handler: t.handle}, cfg.Log); err != nil {
		return nil, err
	}
	return t, nil
}

// RequestServer serves the minions' REQ sockets (the ret_port role).
func (t *Transport) RequestServer() *saltzmq.RequestServer { return t.req }

// Publisher serves the minions' SUB sockets (the publish_port role).
func (t *Transport) Publisher() *saltzmq.Publisher { return t.pub }

// SetPublishPort sets the publish_port told to minions, once the
// gateway's is bound.
func (t *Transport) SetPublishPort(port int) { t.master.PublishPort = port }

// ServeAgents takes the master's agent methods and the call that forgets
// a Conn.
func (t *Transport) ServeAgents(methods map[string]wire.Handler, gone func(wire.Conn)) {
	t.methods, t.gone = methods, gone
}

// Run takes up the sessions saved before a restart, then watches the
// minions' liveness and saves the sessions as they change, until ctx
// ends.
func (t *Transport) Run(ctx context.Context) {
	t.restoreSessions(ctx)
	defer t.save()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	every := min(t.cfg.Grace/6, 5*time.Second)
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if now.Sub(last) >= every {
				t.sweep(now)
				last = now
			}
			t.save()
		}
	}
}

// sweep ends the sessions of minions that stopped listening: no
// subscriber from their address and no request for Grace. (A minion's SUB
// socket reconnects within seconds of losing its connection.)
func (t *Transport) sweep(now time.Time) {
	hosts := t.pub.SubscriberHosts()
	var ended []*minion
	t.mu.Lock()
	for id, m := range t.minions {
		if hosts[m.where()] {
			m.heard(now)
			continue
		}
		if now.Sub(m.lastSeen()) < t.cfg.Grace {
			continue
		}
		delete(t.minions, id)
		ended = append(ended, m)
		t.dirty.Store(true)
	}
	for jid, f := range t.finds {
		if now.After(f.expires) {
			delete(t.finds, jid)
		}
	}
	t.mu.Unlock()
	for _, m := range ended {
		t.count.sessionsEnded.Add(1)
		t.log.Info("salt-minion stopped listening", "id", m.id, "host", m.where())
		t.gone(m)
	}
}

// crypticle is the session key in force.
func (t *Transport) crypticle() *saltproto.Crypticle {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session
}

// rotate replaces the session key (Salt's rotate_aes_key): every minion
// signs in again at its next publish or request, except those whose key
// is no longer accepted.
func (t *Transport) rotate() {
	key, err := saltproto.GenerateKeyString()
	if err == nil {
		var c *saltproto.Crypticle
		if c, err = saltproto.NewCrypticle(key); err == nil {
			t.mu.Lock()
			t.session = c
			t.serial.Reset()
			t.mu.Unlock()
			t.dirty.Store(true)
			t.count.rotations.Add(1)
			t.log.Info("session key rotated")
			return
		}
	}
	t.log.Error("rotating the session key", "err", err)
}

// ended forgets minion m's session, which the master closed (its key
// changed) or a new sign-in replaced.
func (t *Transport) ended(m *minion, rotate bool) {
	t.mu.Lock()
	cur := t.minions[m.id] == m
	if cur {
		delete(t.minions, m.id)
		t.dirty.Store(true)
	}
	t.mu.Unlock()
	if cur {
		t.count.sessionsEnded.Add(1)
		t.gone(m)
	}
	// Only a session the master knew holds the key: closing a pending
	// minion's (turned away) changes nothing.
	if rotate && cur && t.cfg.RotateAESKey {
		t.rotate()
	}
}

// sessionFor returns id's session under pub, or a new one (replacing
// one under another key once accepted). A sign-in proves nothing of the
// sender's address (anyone may send a minion's public key), so an
// existing session keeps its address until a load with the minion's tok
// comes from another one (checkTok).
func (t *Transport) sessionFor(id, pub, remote string) *minion {
	host := hostOf(remote)
	t.mu.Lock()
	m := t.minions[id]
	if m != nil && m.pub == pub {
		t.mu.Unlock()
		return m
	}
	t.mu.Unlock()
	rsaPub, _ := saltproto.ParsePublicKey(pub)
	return &minion{t: t, id: id, pub: pub, rsaPub: rsaPub, host: host, remote: remote, seen: time.Now()}
}

// keep records m as id's accepted session.
func (t *Transport) keep(m *minion) {
	t.mu.Lock()
	old := t.minions[m.id]
	t.minions[m.id] = m
	t.mu.Unlock()
	t.dirty.Store(true)
	if old != nil && old != m {
		t.gone(old)
	}
}

// accepted is id's session, nil when it has none.
func (t *Transport) accepted(id string) *minion {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.minions[id]
}

// onHost is an accepted session proven to come from host, for the
// requests that carry no id (the file server's).
func (t *Transport) onHost(host string) *minion {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.minions {
		if m.provenFrom(host) {
			return m
		}
	}
	return nil
}

// call runs the agent method for m with body.
func (t *Transport) call(ctx context.Context, m *minion, method string, body any) (any, error) {
	h := t.methods[method]
	if h == nil {
		return nil, fmt.Errorf("saltmaster: the master has no %s method", method)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("saltmaster: %s: %w", method, err)
	}
	return h(ctx, m, b)
}

// hostOf is the IP address of remote ("ip:port").
func hostOf(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}

// verifyTok checks a load's tok against m's key: only the minion holding
// the key makes it.
func verifyTok(pub *rsa.PublicKey, load map[string]any) bool {
	tok, ok := saltproto.Bytes(load["tok"])
	return ok && pub != nil && saltproto.VerifyMinionToken(pub, tok)
}
