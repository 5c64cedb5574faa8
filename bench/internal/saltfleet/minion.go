package saltfleet

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bus/gateway/saltzmq"
	"github.com/brinehq/brine/internal/backoff"
	"github.com/brinehq/brine/saltproto"
)

// Config is what every minion of a fleet shares: the master's address
// and the minion options that shape its traffic, Salt's defaults unless
// set.
type Config struct {
	// ReqAddr is the master's request port (master and master_port),
	// host:port; the publish port is the one the sign-in reply names, on
	// the same host.
	ReqAddr string
	// AcceptanceWait is acceptance_wait_time: how long a pending minion
	// waits before signing in again (Salt: 10 s).
	AcceptanceWait time.Duration
	// AuthTimeout and AuthTries are auth_timeout and auth_tries: a
	// sign-in is sent up to AuthTries times, each waiting AuthTimeout for
	// its reply (Salt: 5 s, 7), before the minion waits AcceptanceWait
	// and starts over.
	AuthTimeout time.Duration
	AuthTries   int
	// ReturnTimeout and ReturnTries are return_retry_timer and
	// return_retry_tries: a _return not answered in time is sent again
	// (Salt: randint(return_retry_timer 5, return_retry_timer_max 10) s,
	// 3 tries; 10 s here unless set).
	ReturnTimeout time.Duration
	ReturnTries   int
	// ReconDefault, ReconMax and ReconRandomize are the minion's
	// recon_default, recon_max and recon_randomize (Salt: 1 s, 10 s, on):
	// its SUB's libzmq reconnect interval is drawn once per minion from
	// [ReconDefault, ReconDefault+ReconMax] (fixed at ReconDefault when
	// not randomized), its maximum ReconMax.
	ReconDefault   time.Duration
	ReconMax       time.Duration
	ReconRandomize *bool
	// LocalIP, when set, gives minion i its own source address (a
	// loopback address such as 127.1.0.1, from LoopbackIP): a master
	// bounds connections per address and tells minions apart by theirs,
	// and a thousand real minions come from a thousand hosts.
	LocalIP func(i int) net.IP
	// StartEvent sends salt/minion/<id>/start (a _minion_event with the
	// minion's tok) once signed in and subscribed, as a 3006 minion does.
	StartEvent bool
	// OnReturn, when set, is called once each job's _return was answered
	// by the master (err nil) or given up on.
	OnReturn func(id, jid string, at time.Time, err error)
	// Log gets the minions' warnings (nil: discarded).
	Log *slog.Logger

	// onJob is the fleet's tally of jobs received.
	onJob func(id, jid string, at time.Time)
}

func (c *Config) setDefaults() {
	if c.AcceptanceWait <= 0 {
		c.AcceptanceWait = 10 * time.Second
	}
	if c.AuthTimeout <= 0 {
		c.AuthTimeout = 5 * time.Second
	}
	if c.AuthTries <= 0 {
		c.AuthTries = 7
	}
	if c.ReturnTimeout <= 0 {
		c.ReturnTimeout = 10 * time.Second
	}
	if c.ReturnTries <= 0 {
		c.ReturnTries = 3
	}
	if c.ReconDefault <= 0 {
		c.ReconDefault = time.Second
	}
	if c.ReconMax <= 0 {
		c.ReconMax = 10 * time.Second
	}
	if c.ReconRandomize == nil {
		on := true
		c.ReconRandomize = &on
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Salt's REQ sockets (AsyncReqMessageClient) keep libzmq's reconnect
// interval and set its maximum.
const (
	reqReconnectIvl    = 100 * time.Millisecond
	reqReconnectIvlMax = 5 * time.Second
)

// reconnectIvl is libzmq's reconnect interval
// (stream_connecter_base_t::get_new_reconnect_ivl): the current interval
// plus a random jitter below the base, the current interval doubling up
// to max when max is above the base, back to the base once connected.
type reconnectIvl struct {
	base, max, cur time.Duration
}

func (b *reconnectIvl) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.base
	}
	d := b.cur + rand.N(b.base)
	if b.max > b.base {
		b.cur = min(2*b.cur, b.max)
	}
	return d
}

func (b *reconnectIvl) reset() { b.cur = 0 }

// subBackoff is a minion's SUB reconnect interval as
// salt.transport.zeromq.PublishClient sets it.
func (c *Config) subBackoff() *reconnectIvl {
	ivl := c.ReconDefault
	if *c.ReconRandomize {
		ivl += rand.N(c.ReconMax + 1)
	}
	return &reconnectIvl{base: ivl, max: c.ReconMax}
}

// Minion is one simulated salt-minion 3006 speaking Salt's protocol to a
// master: its own RSA key, its sign-in (_auth, retried while pending),
// its session Crypticle, a SUB on the publish port whose jobs it decodes
// (signed publishes, as sign_pub_messages has them) and a REQ on the
// request port it returns on. It runs no modules: test.ping returns True
// and test.echo its argument; any other function is "not available", as a
// minion without it answers.
type Minion struct {
	ID  string
	cfg *Config
	key KeyPair
	d   *saltzmq.ClientDialer
	tok []byte // private_encrypt(key, "salt"): the tok of _minion_event

	mu        sync.Mutex
	masterPub *rsa.PublicKey
	knownPub  string // minion_master.pub
	crypt     *saltproto.Crypticle
	pubAddr   string

	req        *saltzmq.ReqClient // the minion's req_channel, for returns and events
	acceptedAt atomic.Int64       // unix ns of the first accepted sign-in, 0 before
	subscribed atomic.Bool
	signIns    atomic.Int64
	pending    atomic.Int64
	jobs       atomic.Int64
	returned   atomic.Int64
	failed     atomic.Int64
	reqRetries atomic.Int64 // REQ connections refused and made again
	late       atomic.Int64 // replies that came after their attempt's timeout
	subRetries atomic.Int64 // SUB connections refused and made again
}

// NewMinion is minion id with its key pair, dialling from local (nil:
// any address), not yet running.
func NewMinion(id string, key KeyPair, local net.IP, cfg *Config) (*Minion, error) {
	tok, err := saltproto.PrivateEncrypt(key.Key, []byte("salt"))
	if err != nil {
		return nil, fmt.Errorf("minion %s: tok: %w", id, err)
	}
	d := &saltzmq.ClientDialer{}
	if local != nil {
		d.LocalAddr = &net.TCPAddr{IP: local}
	}
	return &Minion{ID: id, cfg: cfg, key: key, d: d, tok: tok, req: d.NewReqClient(cfg.ReqAddr)}, nil
}

// LoopbackIP is the i-th of the loopback addresses 127.1.0.1 on (254 to
// a /24, up to 65,024 of them), which Linux answers without any setup.
func LoopbackIP(i int) net.IP {
	return net.IPv4(127, 1+byte(i/(254*256)), byte(i/254%256), byte(i%254+1))
}

// AcceptedAt is when the master first accepted the minion's sign-in (zero
// before).
func (m *Minion) AcceptedAt() time.Time {
	if ns := m.acceptedAt.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// Subscribed reports whether the minion's SUB is connected and
// subscribed.
func (m *Minion) Subscribed() bool { return m.subscribed.Load() }

// Counts are what a minion did: sign-ins sent (Pending of them answered
// pending), jobs received for it, returns answered and given up on, and
// connections to the request and publish ports that failed and were
// made again after libzmq's reconnect interval.
type Counts struct {
	SignIns, Pending, Jobs, Returned, Failed int64
	ReqReconnects, SubReconnects             int64
	// LateReplies are replies that came after their attempt's timeout
	// (the request was sent again).
	LateReplies int64
}

// Counts reads the minion's counters.
func (m *Minion) Counts() Counts {
	return Counts{m.signIns.Load(), m.pending.Load(), m.jobs.Load(), m.returned.Load(), m.failed.Load(),
		m.reqRetries.Load(), m.subRetries.Load(), m.late.Load()}
}

// Run signs in, subscribes and serves jobs until ctx ends (nil then) or
// the master rejects the minion's key.
func (m *Minion) Run(ctx context.Context) error {
	defer m.req.Close()
	if err := m.signIn(ctx); err != nil {
		return ctxNil(ctx, err)
	}
	var jobs sync.WaitGroup
	defer jobs.Wait()
	first := true
	recon := m.cfg.subBackoff()
	for ctx.Err() == nil {
		sub, err := m.d.DialSub(ctx, m.pubAddrNow(), "")
		if err != nil {
			m.subRetries.Add(1)
			m.cfg.Log.Info("publish port: reconnecting", "id", m.ID, "err", err)
			if !backoff.Sleep(ctx, recon.next()) {
				break
			}
			continue
		}
		recon.reset()
		m.subscribed.Store(true)
		if first && m.cfg.StartEvent {
			first = false
			jobs.Go(func() { m.fireStart(ctx) })
		}
		err = m.listen(ctx, sub, &jobs)
		m.subscribed.Store(false)
		sub.Close()
		if ctx.Err() == nil {
			m.cfg.Log.Warn("publish port lost", "id", m.ID, "err", err)
			backoff.Sleep(ctx, recon.next())
		}
	}
	return nil
}

// signIn is AsyncAuth._authenticate: sign in on a fresh clear channel,
// again every AcceptanceWait while pending, until a session key comes.
func (m *Minion) signIn(ctx context.Context) error {
	for {
		err := m.signInOnce(ctx)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, saltproto.ErrRejected):
			return fmt.Errorf("minion %s: %w", m.ID, err)
		case errors.Is(err, saltproto.ErrPending):
			m.pending.Add(1)
			if !backoff.Sleep(ctx, m.cfg.AcceptanceWait) {
				return ctx.Err()
			}
		default:
			// No answer within auth_timeout, or one that does not check:
			// Salt's sign_in says "retry", and _authenticate waits
			// acceptance_wait_time before the next.
			if ctx.Err() != nil {
				return ctx.Err()
			}
			m.cfg.Log.Warn("sign-in failed", "id", m.ID, "err", err)
			if !backoff.Sleep(ctx, m.cfg.AcceptanceWait) {
				return ctx.Err()
			}
		}
	}
}

func (m *Minion) signInOnce(ctx context.Context) error {
	m.mu.Lock()
	masterPub, known := m.masterPub, m.knownPub
	m.mu.Unlock()
	s, err := saltproto.NewSignIn(m.ID, m.key.Pub, masterPub)
	if err != nil {
		return err
	}
	frame, err := s.Frame()
	if err != nil {
		return err
	}
	m.signIns.Add(1)
	// Salt signs in on a channel of its own (crypt="clear"), closed after.
	ch := m.d.NewReqClient(m.cfg.ReqAddr)
	defer ch.Close()
	b, err := m.request(ctx, ch, m.cfg.AuthTries, m.cfg.AuthTimeout, func() ([]byte, error) { return frame, nil })
	if err != nil {
		return err
	}
	reply, err := saltproto.LoadsMap(b)
	if err != nil {
		return err
	}
	creds, err := s.HandleReply(reply, m.key.Key, known, "")
	if err != nil {
		return err
	}
	crypt, err := saltproto.NewCrypticle(creds.AES)
	if err != nil {
		return err
	}
	mpub, err := saltproto.ParsePublicKey(creds.MasterPub)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(m.cfg.ReqAddr)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.masterPub, m.knownPub, m.crypt = mpub, creds.MasterPub, crypt
	m.pubAddr = net.JoinHostPort(host, strconv.FormatInt(creds.PublishPort, 10))
	m.mu.Unlock()
	m.acceptedAt.CompareAndSwap(0, time.Now().UnixNano())
	return nil
}

func (m *Minion) pubAddrNow() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pubAddr
}

func (m *Minion) session() (*saltproto.Crypticle, *rsa.PublicKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.crypt, m.masterPub
}

// listen reads publishes until the subscription fails or ctx ends, and
// runs each job meant for this minion on a goroutine of its own (Salt: a
// thread or process per job).
func (m *Minion) listen(ctx context.Context, sub *saltzmq.SubClient, jobs *sync.WaitGroup) error {
	for {
		frames, err := sub.Recv(ctx)
		if err != nil {
			return err
		}
		crypt, mpub := m.session()
		load, err := saltproto.DecodePublish(frames, m.ID, crypt, mpub, true)
		if err == saltproto.ErrAuthentication {
			// The Crypticle's HMAC did not match: the session key may have
			// rotated. Sign in again, as AsyncPubChannel._decode_payload
			// does, and decrypt again. (A bad signature is wrapped, and
			// refused as Salt refuses it.)
			if err = m.signIn(ctx); err != nil {
				return err
			}
			crypt, mpub = m.session()
			load, err = saltproto.DecodePublish(frames, m.ID, crypt, mpub, true)
		}
		if err != nil {
			if !errors.Is(err, saltproto.ErrNotForMe) {
				m.cfg.Log.Warn("publish refused", "id", m.ID, "err", err)
			}
			continue
		}
		if !m.targeted(load) {
			continue
		}
		m.jobs.Add(1)
		if m.cfg.onJob != nil {
			m.cfg.onJob(m.ID, load["jid"].(string), time.Now())
		}
		jobs.Go(func() { m.runJob(ctx, load) })
	}
}

// targeted is the minion's matcher for the target types a brine master
// publishes to Salt minions (list) and the simplest of Salt's (glob on the
// id); others are not this fleet's.
func (m *Minion) targeted(load map[string]any) bool {
	if _, ok := load["jid"].(string); !ok {
		return false
	}
	if _, ok := load["fun"].(string); !ok {
		return false
	}
	tt, _ := load["tgt_type"].(string)
	switch tt {
	case "list":
		switch t := load["tgt"].(type) {
		case []any:
			for _, v := range t {
				if v == m.ID {
					return true
				}
			}
		case string:
			for id := range strings.SplitSeq(t, ",") {
				if strings.TrimSpace(id) == m.ID {
					return true
				}
			}
		}
	case "glob", "":
		if t, ok := load["tgt"].(string); ok {
			match, err := path.Match(t, m.ID)
			return err == nil && match
		}
	}
	return false
}

// runJob runs the job's function and returns its result: the _return
// load of Minion._thread_return and _return_pub, in their order.
func (m *Minion) runJob(ctx context.Context, job map[string]any) {
	jid, fun := job["jid"].(string), job["fun"].(string)
	args, _ := job["arg"].([]any)
	if args == nil {
		args = []any{}
	}
	ret := saltproto.Ordered{{Key: "cmd", Value: "_return"}, {Key: "id", Value: m.ID}}
	switch fun {
	case "test.ping":
		ret = append(ret, saltproto.KV{Key: "success", Value: true}, saltproto.KV{Key: "return", Value: true}, saltproto.KV{Key: "retcode", Value: int64(0)})
	case "test.echo":
		var v any = ""
		if len(args) > 0 {
			v = args[0]
		}
		ret = append(ret, saltproto.KV{Key: "success", Value: true}, saltproto.KV{Key: "return", Value: v}, saltproto.KV{Key: "retcode", Value: int64(0)})
	default:
		ret = append(ret, saltproto.KV{Key: "success", Value: false},
			saltproto.KV{Key: "return", Value: fmt.Sprintf("'%s' is not available.", fun)},
			saltproto.KV{Key: "retcode", Value: int64(1)}, saltproto.KV{Key: "out", Value: "nested"})
	}
	ret = append(ret, saltproto.KV{Key: "jid", Value: jid}, saltproto.KV{Key: "fun", Value: fun}, saltproto.KV{Key: "fun_args", Value: args})
	for _, k := range []string{"user", "master_id", "metadata"} {
		if v, ok := job[k]; ok {
			ret = append(ret, saltproto.KV{Key: k, Value: v})
		}
	}
	err := m.send(ctx, ret)
	if err != nil {
		m.failed.Add(1)
		if ctx.Err() == nil {
			m.cfg.Log.Warn("return failed", "id", m.ID, "jid", jid, "err", err)
		}
	} else {
		m.returned.Add(1)
	}
	if m.cfg.OnReturn != nil {
		m.cfg.OnReturn(m.ID, jid, time.Now(), err)
	}
}

// fireStart is Minion._fire_master_minion_start's namespaced event.
func (m *Minion) fireStart(ctx context.Context) {
	load := saltproto.Ordered{
		{Key: "id", Value: m.ID}, {Key: "cmd", Value: "_minion_event"}, {Key: "pretag", Value: nil}, {Key: "tok", Value: m.tok},
		{Key: "data", Value: fmt.Sprintf("Minion %s started at %s", m.ID, time.Now().Format("Mon Jan _2 15:04:05 2006"))},
		{Key: "tag", Value: "salt/minion/" + m.ID + "/start"},
	}
	if err := m.send(ctx, load); err != nil && ctx.Err() == nil {
		m.cfg.Log.Warn("fire_master failed", "id", m.ID, "err", err)
	}
}

// send is AsyncReqChannel.send of an aes load: a fresh nonce in the load
// at each attempt, the load encrypted with the session Crypticle, {enc:
// aes, load, version: 2}, the reply decrypted and its nonce checked;
// ReturnTries attempts of ReturnTimeout each (request), then, when the
// master could not decrypt (its session key rotated), a sign-in and the
// load once more, as _crypted_transfer does.
func (m *Minion) send(ctx context.Context, load saltproto.Ordered) error {
	err := m.sendOnce(ctx, load)
	if errors.Is(err, saltproto.ErrAuthentication) && ctx.Err() == nil {
		if err := m.signIn(ctx); err != nil {
			return err
		}
		err = m.sendOnce(ctx, load)
	}
	return err
}

func (m *Minion) sendOnce(ctx context.Context, load saltproto.Ordered) error {
	crypt, _ := m.session()
	var nonce string
	b, err := m.request(ctx, m.req, m.cfg.ReturnTries, m.cfg.ReturnTimeout, func() (f []byte, err error) {
		f, nonce, err = saltproto.AESRequest(crypt, load)
		return f, err
	})
	if err != nil {
		return err
	}
	_, err = saltproto.OpenReply(crypt, b, nonce)
	return err
}

// request is AsyncReqChannel.send over Salt 3006.6's
// AsyncReqMessageClient: tries attempts of timeout each, every attempt a
// frame of its own (frame is called again: an aes load gets a fresh
// nonce). A request whose connection could not be made (the master
// refused it) waits in the socket while libzmq reconnects with its
// backoff, and goes once connected. A reply that comes after its
// attempt's timeout is not lost time only: the attempt failed, but the
// socket (one request in flight, under a lock) read that reply before the
// next attempt could send, so the attempt then running sends its frame on
// the same connection at once; that is what this does. A connection that
// fails after the frame went loses the attempt.
func (m *Minion) request(ctx context.Context, c *saltzmq.ReqClient, tries int, timeout time.Duration, frame func() ([]byte, error)) ([]byte, error) {
	start := time.Now()
	ctx, cancel := context.WithDeadline(ctx, start.Add(time.Duration(tries)*timeout))
	defer cancel()
	f, err := frame()
	if err != nil {
		return nil, err
	}
	recon := reconnectIvl{base: reqReconnectIvl, max: reqReconnectIvlMax}
	try := 1
	for {
		b, err := c.Request(ctx, f)
		switch {
		case err == nil:
			recon.reset()
			took := time.Since(start)
			if took <= time.Duration(try)*timeout {
				return b, nil
			}
			m.late.Add(1)
			try = int(took/timeout) + 1
		case ctx.Err() != nil:
			return nil, fmt.Errorf("no reply in %d tries of %s: %w", tries, timeout, err)
		case errors.Is(err, saltzmq.ErrNotConnected):
			m.reqRetries.Add(1)
			if !backoff.Sleep(ctx, recon.next()) {
				return nil, fmt.Errorf("no connection in %d tries of %s: %w", tries, timeout, err)
			}
			continue
		default:
			// The frame went and its reply will not come: the attempt
			// times out, the next sends afresh.
			if !backoff.Sleep(ctx, time.Until(start.Add(time.Duration(try)*timeout))) {
				return nil, fmt.Errorf("no reply in %d tries of %s: %w", tries, timeout, err)
			}
			try++
		}
		if try > tries {
			return nil, fmt.Errorf("no reply in %d tries of %s", tries, timeout)
		}
		if f, err = frame(); err != nil {
			return nil, err
		}
	}
}

// ctxNil is nil for an error that only says ctx ended.
func ctxNil(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}
