package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// ErrClosed is returned by a Client used after Close.
var ErrClosed = errors.New("gateway client closed")

// ErrConnLost is returned by Call for a method that is not safe to re-send
// when the connection dropped while waiting for its reply: the request may
// or may not have run.
var ErrConnLost = errors.New("connection to the master lost; the request may or may not have run")

// idempotent methods are re-sent after a reconnect: publish carries the
// event's id (the bus stores it once), replay and ping only read.
var idempotent = map[string]bool{"publish": true, "replay": true, "ping": true}

// RemoteError is an error reply from the master. Its message is the
// master's; errors.Is matches ErrAuth, ErrReservedTag and bus.ErrTooLarge
// for the corresponding refusals.
type RemoteError struct {
	Method  string
	Code    string
	Message string
}

func (e *RemoteError) Error() string { return e.Message }

// Is maps the reply's code onto the package's sentinel errors.
func (e *RemoteError) Is(target error) bool {
	switch target {
	case ErrAuth:
		return e.Code == CodeAuth
	case ErrReservedTag:
		return e.Code == CodeReserved
	case bus.ErrTooLarge:
		return e.Code == CodeTooLarge
	}
	return false
}

// Option configures a Client.
type Option func(*Client)

// WithSource sets the source of the events the client publishes (default
// brine://<hostname>/cli).
func WithSource(source string) Option { return func(c *Client) { c.source = source } }

// Client talks to a master's request endpoint as a ZeroMQ DEALER: zmq4 runs
// the handshake, then the client frames messages itself, as the master
// does, with buffered reads and writes coalesced across callers (zmq4 spends
// a goroutine and a system call on every message, and three reads on every
// frame). It is safe for concurrent use: requests are pipelined and replies
// matched by correlation id, so many goroutines can publish at once.
type Client struct {
	key    []byte  // the shared key (operators; nil for agents)
	signer *signer // signs requests (nil: they carry no mac)
	newSec func() zmq4.Security
	redial bool // reconnect when the connection drops (operators)
	// refusedFor ends the first dial once the port has refused connections
	// that long (agents; 0: wait until the context ends).
	refusedFor time.Duration
	queue      int // requests waiting to be written, at most
	onPush     func(method string, body []byte)
	ep         string
	source     string
	prefix     string // makes correlation ids unique across clients
	seq        atomic.Uint64

	smu sync.RWMutex
	pc  *peerConn // the connection, replaced when it drops

	mu      sync.Mutex
	pending map[string]*call
	closed  bool

	// ctx is the life of the client's connections, cancelled by Close; done
	// is closed at the same time, for calls waiting for a reply.
	ctx        context.Context
	cancel     context.CancelFunc
	done       chan struct{}
	readerDone chan struct{}
}

func (c *Client) conn() *peerConn {
	c.smu.RLock()
	defer c.smu.RUnlock()
	return c.pc
}

type call struct {
	method string
	msg    []byte // encoded, to be re-sent after a reconnect
	reply  chan result
}

type result struct {
	body json.RawMessage
	err  error
}

// endpoint turns "host:port" into a zmq4 endpoint, adding port when addr
// is a bare host (so that `--master host` means Salt's usual port); full
// endpoints (tcp://, ipc://) pass through.
func endpoint(addr string, port int) string {
	if strings.Contains(addr, "://") {
		return addr
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(strings.Trim(addr, "[]"), strconv.Itoa(port))
	}
	return "tcp://" + addr
}

// Dial connects to a master's request endpoint ("host:port", "host" for
// port 4506, "tcp://…" or "ipc://…") as an operator holding the shared key:
// CURVE with the key pairs derived from it (so the master must hold the
// same key to be talked to at all), and a ping, so that a wrong key is
// reported here rather than on the first publish. It waits for the master
// until ctx ends; once connected, the client reconnects by itself and
// re-sends what can safely be re-sent.
func Dial(ctx context.Context, addr string, key []byte, opts ...Option) (*Client, error) {
	if len(key) == 0 {
		return nil, errors.New("gateway: a key is required")
	}
	op, master := OperatorKeys(key), MasterKeys(key).Public
	c := newClient(endpoint(addr, DefaultRequestPort), func() zmq4.Security { return curve.NewClient(op, master) })
	c.key, c.signer, c.redial = key, newSigner(key), true
	for _, o := range opts {
		o(c)
	}
	if err := c.start(ctx); err != nil {
		return nil, operatorAuth(err)
	}
	if err := c.Call(ctx, "ping", struct{}{}, nil); err != nil {
		c.Close()
		if ctx.Err() != nil && !errors.Is(err, ErrAuth) {
			// Connected, but nothing answers: a master that hangs, or
			// something else listening on the port.
			return nil, &UnreachableError{Addr: strings.TrimPrefix(c.ep, "tcp://"), Reason: "timed out (connected, but no answer)", Err: err}
		}
		return nil, fmt.Errorf("gateway: %s: %w", c.ep, err)
	}
	return c, nil
}

// operatorAuth reports a master that does not hold the operator's key (it
// could not open our CURVE hello, or refused us) as ErrAuth.
func operatorAuth(err error) error {
	if errors.Is(err, curve.ErrServerKey) || errors.Is(err, curve.ErrRefused) {
		return fmt.Errorf("%w: wrong key: the master does not hold the key this client was given (%v)", ErrAuth, err)
	}
	return err
}

// AgentDial is how an agent connects: its own key pair, and the master's
// public key it trusts.
type AgentDial struct {
	Keys      curve.KeyPair
	MasterKey curve.Key
	// OnPush receives what the master sends unasked (on the client's
	// reading goroutine: it must not block).
	OnPush func(method string, body []byte)
	// Source names the agent in the events it publishes.
	Source string
}

// DialAgent connects to a master's request endpoint as an agent: CURVE
// with the agent's key pair, to a master that must hold the secret of
// MasterKey (else the error matches curve.ErrServerKey). Its requests carry
// no mac: the master knows the agent by its key. The client does not
// reconnect: Done is closed when the connection drops, and the agent
// connects again (and says hello again) itself.
func DialAgent(ctx context.Context, addr string, d AgentDial) (*Client, error) {
	c := newClient(endpoint(addr, DefaultRequestPort), func() zmq4.Security { return curve.NewClient(d.Keys, d.MasterKey) })
	// An agent has a request or two in flight, not thousands.
	c.onPush, c.source, c.queue = d.OnPush, d.Source, agentQueue
	c.refusedFor = agentRefusedFor
	if err := c.start(ctx); err != nil {
		if errors.Is(err, curve.ErrRefused) && !errors.Is(err, curve.ErrServerKey) && strings.HasSuffix(err.Error(), ": "+reasonWrongKey) {
			// The request port takes any agent key (and decides at
			// hello); only the publish port, open to operators alone,
			// refuses one in the handshake.
			return nil, &UnreachableError{Addr: strings.TrimPrefix(c.ep, "tcp://"),
				Reason: strings.TrimPrefix(c.ep, "tcp://") + " is the master's publish port, not its request port", Err: err}
		}
		return nil, err
	}
	return c, nil
}

// agentRefusedFor is how long an agent's dial waits on a port that refuses
// connections before it gives up: the agent says so in its log within a
// second, then dials again on its own schedule, instead of waiting out
// its whole dial timeout in silence.
const agentRefusedFor = time.Second

// MasterKey asks the master at addr for its public key over a connection
// without encryption (the one thing such a connection may ask). The answer
// is only as trustworthy as the network: an agent checks it against
// master_finger, or records it and trusts it from then on.
func MasterKey(ctx context.Context, addr string) (curve.Key, error) {
	c := newClient(endpoint(addr, DefaultRequestPort), null.Security)
	c.refusedFor = agentRefusedFor // agents ask it, and retry on their own
	if err := c.start(ctx); err != nil {
		return curve.Key{}, err
	}
	defer c.Close()
	var rep MasterKeyReply
	if err := c.Call(ctx, MethodMasterKey, struct{}{}, &rep); err != nil {
		return curve.Key{}, fmt.Errorf("gateway: %s: master key: %w", c.ep, err)
	}
	k, err := curve.ParseKey(rep.Key)
	if err != nil {
		return curve.Key{}, fmt.Errorf("gateway: %s: master key: %w", c.ep, err)
	}
	return k, nil
}

func newClient(ep string, sec func() zmq4.Security) *Client {
	return &Client{ep: ep, newSec: sec, queue: clientQueue, pending: make(map[string]*call), done: make(chan struct{}), readerDone: make(chan struct{})}
}

// start connects and starts reading replies.
func (c *Client) start(ctx context.Context) error {
	if c.source == "" {
		host, err := os.Hostname()
		if err != nil {
			host = "localhost"
		}
		c.source = "brine://" + host + "/cli"
	}
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return err
	}
	c.prefix = hex.EncodeToString(nonce[:]) + "-"
	c.ctx, c.cancel = context.WithCancel(context.Background())
	pc, err := dialPeer(ctx, c.ep, c.newSec, zmq4.Dealer, c.queue, c.refusedFor)
	if err != nil {
		c.cancel()
		return err
	}
	c.pc = pc
	go c.readLoop()
	return nil
}

// Done is closed when the client is closed, or when the connection of a
// client that does not reconnect (an agent's) dropped.
func (c *Client) Done() <-chan struct{} { return c.readerDone }

// Close releases the connection; calls waiting for a reply return
// ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	c.mu.Unlock()
	c.cancel()
	c.conn().close()
	<-c.readerDone
	c.conn().close() // the reader may have replaced it meanwhile
	return nil
}

// Bounds of the client's connections: messages up to maxReply bytes (a
// replay page of large events), requests waiting to be written.
const (
	maxReply         = 256 << 20
	clientQueue      = 8192
	clientQueueBytes = 256 << 20
	redialEvery      = 250 * time.Millisecond
	clientHandshake  = 10 * time.Second
)

// connect dials endpoint ep and runs the handshake as a typ socket with a
// mechanism from sec (queue: the requests that may wait to be written),
// again every redialEvery until the master answers or ctx ends; a key the
// master refuses, a master without the expected key, or a port that is
// not the one asked for (the publish port dialled as the request port)
// ends it at once. The connection's writer runs until it is closed. When
// it gives up the error is an *UnreachableError saying why.
func connect(ctx context.Context, ep string, sec func() zmq4.Security, typ zmq4.SocketType, queue int) (*peerConn, error) {
	return dialPeer(ctx, ep, sec, typ, queue, 0)
}

// dialPeer is connect; with refusedFor set, it also gives up once the
// port has refused connections for that long (an agent, which retries,
// and logs, on its own).
func dialPeer(ctx context.Context, ep string, sec func() zmq4.Security, typ zmq4.SocketType, queue int, refusedFor time.Duration) (*peerConn, error) {
	network, addr, ok := splitEndpoint(ep)
	if !ok {
		return nil, fmt.Errorf("gateway: dial %s: not a tcp:// or ipc:// endpoint", ep)
	}
	var (
		d            net.Dialer
		last         error
		refusedSince time.Time
	)
	unreachable := func(cause error) *UnreachableError {
		return &UnreachableError{Addr: strings.TrimPrefix(ep, "tcp://"), Reason: reason(addr, typ, sec().Type(), cause), Err: cause, ctx: ctx.Err()}
	}
	for {
		raw, err := d.DialContext(ctx, network, addr)
		if err == nil {
			pc, err := handshake(ctx, raw, nil, 0, sec(), typ, false, clientHandshake)
			if err == nil {
				pc.start(queue, clientQueueBytes)
				return pc, nil
			}
			raw.Close()
			if errors.Is(err, ErrAuth) || errors.Is(err, curve.ErrServerKey) || errors.Is(err, curve.ErrRefused) {
				return nil, fmt.Errorf("gateway: %s: %w", ep, err)
			}
			if wrongPeer(err) {
				return nil, unreachable(err) // it will not become the right port by waiting
			}
			refusedSince = time.Time{}
		} else if errors.Is(err, syscall.ECONNREFUSED) {
			if refusedSince.IsZero() {
				refusedSince = time.Now()
			}
			if refusedFor > 0 && time.Since(refusedSince) >= refusedFor {
				return nil, unreachable(err)
			}
		}
		if err != nil && ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return nil, unreachable(last)
		case <-time.After(redialEvery):
		}
	}
}

// UnreachableError is a master that could not be reached at Addr, and
// why, in an operator's words: "master 127.0.0.1:4506 not reachable:
// connection refused". errors.Is matches the last cause (syscall.
// ECONNREFUSED…) and the context's end (context.DeadlineExceeded).
type UnreachableError struct {
	// Addr is the address dialled ("host:port", or the endpoint).
	Addr string
	// Reason: "connection refused", "timed out", "127.0.0.1:4505 is the
	// master's publish port, not its request port"…
	Reason string
	// Err is the last failure (nil when the time ran out on the first
	// attempt).
	Err error
	ctx error
}

func (e *UnreachableError) Error() string { return "master " + e.Addr + " not reachable: " + e.Reason }

func (e *UnreachableError) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Err, e.ctx} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// ErrWrongPort is the cause of an UnreachableError for a port that
// answers as another of the master's sockets: the publish port dialled as
// the request port, or the reverse.
var ErrWrongPort = errors.New("not the expected port of the master")

// wrongPeer reports a handshake that failed because the other end is not
// the kind of socket asked for: zmq4 checks the socket types (a PUB
// answering a DEALER), and a brine request port takes NULL (for the
// master's key) where its publish port takes only CURVE.
func wrongPeer(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "not compatible with") || strings.Contains(msg, "invalid or unsupported security mechanism")
}

// reason says why dialling addr as a typ socket with mechanism mech failed
// with cause (nil: nothing answered before the time ran out).
func reason(addr string, typ zmq4.SocketType, mech zmq4.SecurityType, cause error) string {
	var dns *net.DNSError
	switch {
	case cause == nil:
		return "timed out"
	case errors.Is(cause, syscall.ECONNREFUSED):
		return "connection refused"
	case wrongPeer(cause) && strings.Contains(cause.Error(), "security mechanism"):
		if mech == zmq4.NullSecurity {
			// A brine request port takes NULL for the master's key;
			// only its publish port insists on CURVE.
			return addr + " is the master's publish port, not its request port"
		}
		return addr + " does not speak CURVE: not a brine master"
	case wrongPeer(cause):
		if typ == zmq4.Sub {
			return addr + " is the master's request port, not its publish port"
		}
		return addr + " is the master's publish port, not its request port"
	case errors.As(cause, &dns):
		return "the name does not resolve"
	case errors.Is(cause, syscall.EHOSTUNREACH), errors.Is(cause, syscall.ENETUNREACH):
		return "no route to host"
	case errors.Is(cause, os.ErrDeadlineExceeded), errors.Is(cause, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(cause, io.EOF), errors.Is(cause, syscall.ECONNRESET), errors.Is(cause, io.ErrUnexpectedEOF):
		return "the connection was closed during the ZeroMQ handshake (not a brine master?)"
	case errors.Is(cause, os.ErrNotExist):
		return "no such socket"
	}
	return "the ZeroMQ handshake failed"
}

// splitEndpoint turns a zmq4 endpoint into what net.Dial takes.
func splitEndpoint(ep string) (network, addr string, ok bool) {
	if addr, ok := strings.CutPrefix(ep, "tcp://"); ok {
		return "tcp", addr, true
	}
	if addr, ok := strings.CutPrefix(ep, "ipc://"); ok {
		return "unix", addr, true
	}
	return "", "", false
}

// readLoop matches replies to calls. A read error means the connection
// dropped: the client connects again (until it is closed), then re-sends
// the requests that may be lost or fails them.
func (c *Client) readLoop() {
	defer close(c.readerDone)
	for {
		pc := c.conn()
		frames, cmd, err := pc.readMsg(maxReply)
		if c.ctx.Err() != nil {
			return
		}
		if err != nil {
			pc.close()
			if !c.redial || !c.reconnect() {
				c.failAll()
				return
			}
			c.connLost()
			continue
		}
		if cmd || len(frames) != 3 {
			continue
		}
		if len(frames[0]) == 0 {
			if c.onPush != nil {
				c.onPush(string(frames[1]), frames[2])
			}
			continue
		}
		c.mu.Lock()
		cl := c.pending[string(frames[0])]
		delete(c.pending, string(frames[0]))
		c.mu.Unlock()
		if cl == nil {
			continue // a reply to a re-sent request, already answered
		}
		cl.reply <- decodeReply(cl.method, string(frames[1]), frames[2])
	}
}

// failAll fails every call waiting for a reply: the connection is gone.
func (c *Client) failAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for corr, cl := range c.pending {
		delete(c.pending, corr)
		cl.reply <- result{err: fmt.Errorf("%s: %w", cl.method, ErrConnLost)}
	}
}

// reconnect replaces the connection with a new one, waiting for the master
// until the client is closed (then it reports false).
func (c *Client) reconnect() bool {
	pc, err := connect(c.ctx, c.ep, c.newSec, zmq4.Dealer, c.queue)
	if err != nil {
		return false
	}
	c.smu.Lock()
	c.pc = pc
	c.smu.Unlock()
	return true
}

func decodeReply(method, status string, body []byte) result {
	if status == statusOK {
		return result{body: body}
	}
	var eb errorBody
	if err := json.Unmarshal(body, &eb); err != nil || eb.Error == "" {
		return result{err: &RemoteError{Method: method, Code: CodeFailed, Message: fmt.Sprintf("%s: unreadable error reply %q", method, body)}}
	}
	return result{err: &RemoteError{Method: method, Code: eb.Code, Message: eb.Error}}
}

func (c *Client) connLost() {
	c.mu.Lock()
	var resend []*call
	for corr, cl := range c.pending {
		if idempotent[cl.method] {
			resend = append(resend, cl)
			continue
		}
		delete(c.pending, corr)
		cl.reply <- result{err: fmt.Errorf("%s: %w", cl.method, ErrConnLost)}
	}
	c.mu.Unlock()
	for _, cl := range resend {
		// A message for a dropped connection is discarded; the reader
		// learns of the drop and re-sends it in turn.
		c.conn().send(cl.msg)
	}
}

// Call sends a request for method with in encoded as JSON and decodes the
// reply into out (which may be nil). An error reply is a *RemoteError.
func (c *Client) Call(ctx context.Context, method string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: encoding the request: %w", method, err)
	}
	raw, err := c.call(ctx, method, body)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decoding the reply: %w", method, err)
	}
	return nil
}

func (c *Client) call(ctx context.Context, method string, body []byte) (json.RawMessage, error) {
	corr := c.prefix + strconv.FormatUint(c.seq.Add(1), 36)
	cl := &call{
		method: method,
		msg:    zmtp.EncodeMsg([]byte(corr), []byte(method), body, c.mac(method, body)),
		reply:  make(chan result, 1),
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.pending[corr] = cl
	c.mu.Unlock()
	// On a dropped connection the message is discarded: the reader learns
	// of the drop and re-sends or fails this call, so the reply is still
	// awaited.
	if !c.conn().send(cl.msg) {
		c.forget(corr)
		return nil, fmt.Errorf("%s: %d requests or %d MiB already waiting to be sent", method, clientQueue, clientQueueBytes>>20)
	}
	select {
	case r := <-cl.reply:
		return r.body, r.err
	case <-ctx.Done():
		c.forget(corr)
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	case <-c.done:
		return nil, fmt.Errorf("%s: %w", method, ErrClosed)
	case <-c.readerDone:
		return nil, fmt.Errorf("%s: %w", method, ErrConnLost)
	}
}

// mac signs a request (agents' requests carry none).
func (c *Client) mac(method string, body []byte) []byte {
	if c.signer == nil {
		return nil
	}
	return c.signer.sign(method, body)
}

func (c *Client) forget(corr string) {
	c.mu.Lock()
	delete(c.pending, corr)
	c.mu.Unlock()
}

// Publish fires an event and returns its id once the master has stored it
// durably. The envelope is built here, so its id is fixed: a publish re-sent
// after a reconnect is stored once.
func (c *Client) Publish(ctx context.Context, tag string, data map[string]any) (string, error) {
	ev, err := bus.NewEvent(tag, data, bus.Origin{Source: c.source})
	if err != nil {
		return "", err
	}
	if err := c.PublishEvent(ctx, ev); err != nil {
		return "", err
	}
	return ev.ID, nil
}

// PublishEvent publishes a complete envelope (for agents that forward events
// with their own ids and causes) and returns once it is durable.
func (c *Client) PublishEvent(ctx context.Context, ev *bus.Event) error {
	// MarshalJSON directly: through json.Marshal the result would be
	// scanned again for nothing.
	body, err := ev.MarshalJSON()
	if err != nil {
		return fmt.Errorf("publish %q: %w", ev.Tag, err)
	}
	raw, err := c.call(ctx, "publish", body)
	if err != nil {
		return err
	}
	// The master's reply is almost always exactly this; decoding it
	// cost more than the rest of the client's side of a publish.
	if string(raw) == `{"id":"`+ev.ID+`"}` {
		return nil
	}
	var rep PublishReply
	if err := json.Unmarshal(raw, &rep); err != nil {
		return fmt.Errorf("publish: decoding the reply: %w", err)
	}
	if rep.ID != ev.ID {
		return fmt.Errorf("publish %q: the master acknowledged id %q, want %q", ev.Tag, rep.ID, ev.ID)
	}
	return nil
}
