package saltzmq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// The minion's side of the transport: a REQ to the request port and a SUB
// to the publish port. They are small on purpose, for tests and for the
// protocol-level bench fleet (bench/internal/saltfleet), which plays a
// thousand salt-minions against a brine master: on the wire they are what
// a minion's libzmq sends (ZMTP 3.0, NULL, READY with its Socket-Type, a
// REQ's empty delimiter, a ZMTP 3.0 subscription message), with the same
// framing code as the servers, but without libzmq's queues and background
// reconnection: a ReqClient has one request in flight and dials again on
// the next request after a failure, as Salt's RequestClient builds a new
// socket after a timeout; a SubClient's owner dials a new one.

// ErrNotConnected is a request that was not sent: the dial or the
// handshake failed (the server refused the connection, say). libzmq's REQ
// keeps such a request queued and sends it once it has reconnected; a
// caller playing a minion waits its reconnect interval and sends again,
// where a request that was sent and not answered is lost, as with libzmq.
var ErrNotConnected = errors.New("saltzmq: not connected")

// ClientHandshakeTimeout bounds a client's dial and ZMTP handshake when
// the context has no earlier deadline.
const ClientHandshakeTimeout = 10 * time.Second

// clientMaxMessage bounds a reply or a published message a client reads:
// the servers' own MaxMessageSize default.
const clientMaxMessage = 64 << 20

// clientWriteTimeout bounds a client's write of a PONG or a subscription.
const clientWriteTimeout = 10 * time.Second

// The socket types a client's peer may have: a Salt master's ROUTER (or a
// REP), and its PUB (or an XPUB, which shows subscriptions to its owner).
var (
	reqServers = []string{"ROUTER", "REP"}
	subServers = []string{"PUB", "XPUB"}
)

// ClientDialer makes clients that dial with its net.Dialer: a fleet of
// simulated minions on one host gives each its own loopback address
// (LocalAddr 127.1.2.3, say), so that the master sees as many hosts as
// minions, as it would in production, and no per-address bound of the
// server's is what is measured. The zero ClientDialer is the default.
type ClientDialer struct {
	net.Dialer
}

// dialZMTP connects to addr and runs the NULL handshake as a sock socket
// (REQ, SUB) with a peer of one of the types peers, advertising ZMTP 3.0
// as libzmq 4.3 does to a 3.0 peer, by ctx's deadline or
// ClientHandshakeTimeout.
func (d *ClientDialer) dialZMTP(ctx context.Context, addr, sock string, peers []string) (*conn, error) {
	deadline := time.Now().Add(ClientHandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	raw, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c, err := handshake(dctx, Accepted{Conn: raw}, deadline, sock, peers, 0)
	if err != nil {
		raw.Close()
		return nil, fmt.Errorf("saltzmq: %s handshake with %s: %w", sock, addr, err)
	}
	return c, nil
}

// readDeadline sets c's read and write deadlines to ctx's (none when it
// has none) and arranges for a blocked read to end when ctx does; the
// caller calls the returned stop.
func readDeadline(ctx context.Context, c *conn) (stop func() bool, err error) {
	d, _ := ctx.Deadline()
	if err := c.raw.SetDeadline(d); err != nil {
		return nil, err
	}
	return context.AfterFunc(ctx, func() { c.raw.SetDeadline(time.Unix(1, 0)) }), nil
}

// ctxErr prefers ctx's error to err, which ctx's end caused: the
// connection's deadline is ctx's, and may pass a moment before ctx says so.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if d, ok := ctx.Deadline(); ok && isTimeout(err) && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return err
}

// ReqClient is a minion's REQ socket to a request port: one request at a
// time, each sent as REQ's empty delimiter and one payload frame, its reply
// read as the same two frames. It is safe for concurrent use; requests
// take turns.
type ReqClient struct {
	addr string
	d    *ClientDialer

	// turn makes requests take turns; mu guards c and closed, so that
	// Close need not wait for a request in progress.
	turn   sync.Mutex
	mu     sync.Mutex
	c      *conn
	closed bool
}

// NewReqClient is a REQ socket to addr (host:port) that dials on its
// first request.
func NewReqClient(addr string) *ReqClient { return new(ClientDialer).NewReqClient(addr) }

// NewReqClient is a REQ socket to addr (host:port) that dials with d on
// its first request.
func (d *ClientDialer) NewReqClient(addr string) *ReqClient { return &ReqClient{addr: addr, d: d} }

// DialReq is a REQ socket to addr that is connected (handshake done)
// before it returns, so that a dial error shows at once.
func DialReq(ctx context.Context, addr string) (*ReqClient, error) {
	r := NewReqClient(addr)
	c, err := r.d.dialZMTP(ctx, addr, "REQ", reqServers)
	if err != nil {
		return nil, err
	}
	r.c = c
	return r, nil
}

// Request sends payload and returns the reply's payload, by ctx's
// deadline. After any failure (the reply did not come in time, the peer
// closed, a reply that is not REQ's) the connection is closed and the
// next Request dials again, so that a late reply is never taken for the
// next one's.
func (r *ReqClient) Request(ctx context.Context, payload []byte) ([]byte, error) {
	r.turn.Lock()
	defer r.turn.Unlock()
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	reply, err := roundTrip(ctx, c, payload)
	if err != nil {
		c.raw.Close()
		r.mu.Lock()
		if r.c == c {
			r.c = nil
		}
		r.mu.Unlock()
		return nil, fmt.Errorf("saltzmq: request to %s: %w", r.addr, err)
	}
	return reply, nil
}

// conn is the connection, dialled when there is none.
func (r *ReqClient) conn(ctx context.Context) (*conn, error) {
	r.mu.Lock()
	c, closed := r.c, r.closed
	r.mu.Unlock()
	switch {
	case closed:
		return nil, net.ErrClosed
	case c != nil:
		return c, nil
	}
	c, err := r.d.dialZMTP(ctx, r.addr, "REQ", reqServers)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotConnected, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.raw.Close()
		return nil, net.ErrClosed
	}
	r.c = c
	return c, nil
}

// roundTrip sends one request on c and reads its reply.
func roundTrip(ctx context.Context, c *conn, payload []byte) ([]byte, error) {
	stop, err := readDeadline(ctx, c)
	if err != nil {
		return nil, err
	}
	defer stop()
	if _, err := c.raw.Write(zmtp.EncodeMsg(nil, payload)); err != nil {
		return nil, ctxErr(ctx, err)
	}
	for {
		frames, cmd, err := c.readMsg(clientMaxMessage, maxReqFrames, nil)
		if err != nil {
			return nil, ctxErr(ctx, err)
		}
		if cmd {
			if err := c.command(frames[0], clientWriteTimeout); err != nil {
				return nil, ctxErr(ctx, err)
			}
			continue
		}
		env, reply, err := splitEnvelope(frames)
		if err != nil {
			return nil, err
		}
		if len(env) != 1 {
			return nil, fmt.Errorf("%w: a reply with %d envelope frames, want REQ's delimiter only", ErrProtocol, len(env))
		}
		return reply, nil
	}
}

// Connected reports whether the client holds a connection now (it has
// none before its first request, after a failure and after Close).
func (r *ReqClient) Connected() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.c != nil
}

// Close closes the connection; requests after it fail with net.ErrClosed,
// and one in progress ends with an error.
func (r *ReqClient) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.c == nil {
		return nil
	}
	c := r.c
	r.c = nil
	return c.raw.Close()
}

// SubClient is a minion's SUB socket to a publish port, subscribed once
// connected. It is not safe for concurrent Recv calls; Close may be called
// from any goroutine.
type SubClient struct {
	c *conn
}

// DialSub connects to the publisher at addr and subscribes to topics,
// each a prefix of the first frame of the messages wanted: Salt's minion
// subscribes to "" (everything), or with zmq_filtering to "broadcast" and
// the hex SHA-1 of its id. The subscriptions are ZMTP 3.0 messages (a
// first byte of 1), written before DialSub returns; the publisher applies
// them when it has read them, so a message published at once may still
// miss this subscriber, as with libzmq.
func DialSub(ctx context.Context, addr string, topics ...string) (*SubClient, error) {
	return new(ClientDialer).DialSub(ctx, addr, topics...)
}

// DialSub is DialSub dialling with d.
func (d *ClientDialer) DialSub(ctx context.Context, addr string, topics ...string) (*SubClient, error) {
	if len(topics) == 0 {
		return nil, errors.New("saltzmq: a subscriber without a subscription receives nothing")
	}
	c, err := d.dialZMTP(ctx, addr, "SUB", subServers)
	if err != nil {
		return nil, err
	}
	var subs []byte
	for _, t := range topics {
		subs = zmtp.AppendFrame(subs, 0, append([]byte{1}, t...))
	}
	err = c.raw.SetWriteDeadline(time.Now().Add(clientWriteTimeout))
	if err == nil {
		_, err = c.raw.Write(subs)
	}
	if err == nil {
		err = c.raw.SetWriteDeadline(time.Time{})
	}
	if err != nil {
		c.raw.Close()
		return nil, fmt.Errorf("saltzmq: subscribing at %s: %w", addr, err)
	}
	return &SubClient{c: c}, nil
}

// Recv returns the next published message's frames, waiting until one
// comes, the connection fails or ctx ends. PINGs are answered meanwhile.
// After an error the subscriber is done: its owner dials a new one.
func (s *SubClient) Recv(ctx context.Context) ([][]byte, error) {
	stop, err := readDeadline(ctx, s.c)
	if err != nil {
		return nil, err
	}
	defer stop()
	for {
		frames, cmd, err := s.c.readMsg(clientMaxMessage, maxReqFrames, nil)
		if err != nil {
			return nil, ctxErr(ctx, err)
		}
		if !cmd {
			return frames, nil
		}
		if err := s.c.command(frames[0], clientWriteTimeout); err != nil {
			return nil, ctxErr(ctx, err)
		}
	}
}

// Close closes the connection: a Recv in progress returns an error.
func (s *SubClient) Close() error { return s.c.raw.Close() }
