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

	"github.com/go-zeromq/zmq4"

	"github.com/brinehq/brine/bus"
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

// Client talks to a master's request endpoint over one ZeroMQ DEALER socket.
// It is safe for concurrent use: requests are pipelined and replies matched
// by correlation id, so many goroutines can publish at once.
type Client struct {
	key    []byte
	signer *signer
	ep     string
	source string
	prefix string // makes correlation ids unique across clients
	seq    atomic.Uint64

	smu sync.RWMutex
	sck zmq4.Socket // replaced when zmq4 will not reconnect it

	mu      sync.Mutex
	pending map[string]*call
	closed  bool

	// ctx is the life of the client's sockets, cancelled by Close; done is
	// closed at the same time, for calls waiting for a reply.
	ctx        context.Context
	cancel     context.CancelFunc
	done       chan struct{}
	readerDone chan struct{}
}

func (c *Client) socket() zmq4.Socket {
	c.smu.RLock()
	defer c.smu.RUnlock()
	return c.sck
}

type call struct {
	method string
	msg    zmq4.Msg
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

// socketOptions are those of every client socket: zmq4 does not reconnect
// unless asked, and by default gives up dialing after 2.5 s.
func socketOptions(extra ...zmq4.Option) []zmq4.Option {
	return append([]zmq4.Option{zmq4.WithAutomaticReconnect(true), zmq4.WithDialerMaxRetries(-1)}, extra...)
}

// dial connects sck to ep, retrying until the master answers or ctx ends;
// on failure the socket is closed.
func dial(ctx context.Context, sck zmq4.Socket, ep string) error {
	errc := make(chan error, 1)
	go func() { errc <- sck.Dial(ep) }()
	select {
	case err := <-errc:
		if err != nil {
			sck.Close()
			if errors.Is(err, ErrAuth) {
				return fmt.Errorf("gateway: %s: %w", ep, authCause(err))
			}
			return fmt.Errorf("gateway: dial %s: %w", ep, err)
		}
		return nil
	case <-ctx.Done():
		// Closing ends zmq4's retry loop. A handshake with something
		// that is not a master and never answers has no deadline in zmq4,
		// so its goroutine is not waited for: it ends when the peer
		// closes.
		sck.Close()
		return fmt.Errorf("gateway: dial %s: master not reachable: %w", ep, ctx.Err())
	}
}

// authCause returns the innermost error of err's chain that still matches
// ErrAuth: the security mechanism's own message without zmq4's wrapping,
// which adds nothing for a user.
func authCause(err error) error {
	for next := errors.Unwrap(err); next != nil && next != ErrAuth && errors.Is(next, ErrAuth); next = errors.Unwrap(next) {
		err = next
	}
	return err
}

// Dial connects to a master's request endpoint ("host:port", "host" for
// port 4506, "tcp://…" or "ipc://…") and checks the key with a ping, so that a wrong key is reported
// here rather than on the first publish. It waits for the master until ctx
// ends; once connected, the client reconnects by itself and re-sends what
// can safely be re-sent.
func Dial(ctx context.Context, addr string, key []byte, opts ...Option) (*Client, error) {
	if len(key) == 0 {
		return nil, errors.New("gateway: a key is required")
	}
	c := &Client{
		key:        key,
		signer:     newSigner(key),
		ep:         endpoint(addr, DefaultRequestPort),
		pending:    make(map[string]*call),
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	for _, o := range opts {
		o(c)
	}
	if c.source == "" {
		host, err := os.Hostname()
		if err != nil {
			host = "localhost"
		}
		c.source = "brine://" + host + "/cli"
	}
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	c.prefix = hex.EncodeToString(nonce[:]) + "-"
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.sck = zmq4.NewDealer(c.ctx, socketOptions()...)
	if err := dial(ctx, c.sck, c.ep); err != nil {
		c.cancel()
		return nil, err
	}
	go c.readLoop()
	if err := c.Call(ctx, "ping", struct{}{}, nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("gateway: %s: %w", c.ep, err)
	}
	return c, nil
}

// Close releases the socket; calls waiting for a reply return ErrClosed.
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
	<-c.readerDone
	sck := c.socket()
	err := sck.Close()
	drainClosed(sck)
	return err
}

// drainClosed empties a closed zmq4 socket's receive queue. zmq4's per-peer
// reader blocks on that queue when it is full and never looks at the socket's
// context while it waits, so without this a socket closed with unread
// messages leaks a goroutine and its connection. Recv on a closed socket
// chooses at random between the closed context and a queued message, so the
// queue is known empty only after many refusals in a row.
func drainClosed(sck zmq4.Socket) {
	for misses := 0; misses < 64; {
		if _, err := sck.Recv(); err != nil {
			misses++
		} else {
			misses = 0
		}
	}
}

// readLoop matches replies to calls. A receive error means the connection
// dropped. zmq4 reconnects by itself, before reporting io.EOF, only after a
// connection that ended cleanly; one that ended mid-frame (a master killed
// while writing) leaves the socket without a connection, so after any other
// error the socket is replaced. Either way, requests that may be lost are
// then re-sent or failed.
func (c *Client) readLoop() {
	defer close(c.readerDone)
	for {
		msg, err := c.socket().Recv()
		if c.ctx.Err() != nil {
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !c.redial() {
				return
			}
			c.connLost()
			continue
		}
		if len(msg.Frames) != 3 {
			continue
		}
		c.mu.Lock()
		cl := c.pending[string(msg.Frames[0])]
		delete(c.pending, string(msg.Frames[0]))
		c.mu.Unlock()
		if cl == nil {
			continue // a reply to a re-sent request, already answered
		}
		cl.reply <- decodeReply(cl.method, string(msg.Frames[1]), msg.Frames[2])
	}
}

// redial replaces the socket with a new one connected to the master,
// waiting for it until the client is closed (then it reports false).
func (c *Client) redial() bool {
	sck := zmq4.NewDealer(c.ctx, socketOptions()...)
	if err := dial(c.ctx, sck, c.ep); err != nil {
		return false
	}
	c.smu.Lock()
	old := c.sck
	c.sck = sck
	c.smu.Unlock()
	old.Close()
	drainClosed(old)
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
		// An error here is another drop, which will be reported in turn.
		_ = c.socket().SendMulti(cl.msg)
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
		msg:    zmq4.NewMsgFrom([]byte(corr), []byte(method), body, c.signer.sign(method, body)),
		reply:  make(chan result, 1),
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.pending[corr] = cl
	c.mu.Unlock()
	// A send error means the connection dropped: the reader learns of it
	// too and re-sends or fails this call, so the reply is still awaited.
	_ = c.socket().SendMulti(cl.msg)
	select {
	case r := <-cl.reply:
		return r.body, r.err
	case <-ctx.Done():
		c.forget(corr)
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	case <-c.done:
		return nil, fmt.Errorf("%s: %w", method, ErrClosed)
	}
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
