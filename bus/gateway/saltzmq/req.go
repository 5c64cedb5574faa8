package saltzmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
	"golang.org/x/sync/semaphore"
)

// Handler answers one request from a Salt minion: payload is the one frame
// after the REQ envelope (Salt's msgpack, a clear `_auth` or an encrypted
// load), the result is the reply's one frame. remote is the peer's
// address. A handler that can tell the peer proved who it is (the load
// decrypted with a session key it holds) calls Authenticate(ctx).
//
// An error drops the connection without a reply: the minion's REQ socket
// times out and reconnects. Requests that deserve an answer even when
// refused (Salt's {"msg": "bad load"}) are answered with a reply; errors
// are for what deserves none.
type Handler func(ctx context.Context, remote string, payload []byte) ([]byte, error)

// RequestConfig sets up a RequestServer. Only Handler is required.
type RequestConfig struct {
	Handler Handler
	// MaxMessageSize bounds one request, envelope included (default 64
	// MiB: a minion returns a whole highstate's result in one).
	MaxMessageSize int
	// UnauthenticatedBytes bounds the bytes of requests read from
	// connections not yet authenticated and not yet answered, all
	// together (default 256 MiB, never less than MaxMessageSize). A minion
	// opens a fresh connection for most requests, so a large return often
	// arrives before anything proved who sent it; without this bound,
	// MaxUnauthenticated strangers could each make the master hold
	// MaxMessageSize. Reading waits for room (back-pressure) up to the
	// idle timeout.
	UnauthenticatedBytes int64
	// HandshakeTimeout bounds the ZMTP handshake from accept (default 10 s).
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection not yet authenticated after this
	// long without a request (default 30 s). libzmq's REQ reconnects on
	// its own, so closing an idle one costs a minion nothing.
	IdleTimeout time.Duration
	// AuthenticatedIdleTimeout closes an authenticated connection after
	// this long without a request (default none: a minion may keep its
	// channel for hours; the listener's TCP keepalive finds dead peers).
	AuthenticatedIdleTimeout time.Duration
	// WriteTimeout bounds writing one reply (default 30 s): a peer that
	// stops reading does not hold its goroutine forever.
	WriteTimeout time.Duration
	// ShutdownGrace is how long handlers may go on once the serving
	// context ended before their context is cancelled (default 5 s), so
	// that requests in progress are answered.
	ShutdownGrace time.Duration
	// MaxUnauthenticated and MaxUnauthenticatedPerAddr bound the
	// connections Serve accepted that are not yet authenticated, in all
	// (default 1024) and per remote IP (default 64; not applied to unix
	// sockets). Connections handed over with ServeConn are counted by
	// whoever accepted them (Accepted.Authenticated).
	MaxUnauthenticated        int
	MaxUnauthenticatedPerAddr int
}

func (c *RequestConfig) setDefaults() error {
	if c.Handler == nil {
		return errors.New("saltzmq: a request handler is required")
	}
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = 64 << 20
	}
	if c.UnauthenticatedBytes <= 0 {
		c.UnauthenticatedBytes = 256 << 20
	}
	c.UnauthenticatedBytes = max(c.UnauthenticatedBytes, int64(c.MaxMessageSize))
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 30 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 5 * time.Second
	}
	if c.MaxUnauthenticated <= 0 {
		c.MaxUnauthenticated = 1024
	}
	if c.MaxUnauthenticatedPerAddr <= 0 {
		c.MaxUnauthenticatedPerAddr = 64
	}
	return nil
}

// reqPeers are the socket types a request connection may have: Salt's
// minions use REQ; a DEALER that sends REQ's envelope itself is served too.
var reqPeers = []string{"REQ", "DEALER"}

// reqReadBuffer is a request connection's read buffer: a minion may keep
// one open for hours, and thousands of them wait on one each.
const reqReadBuffer = 4 << 10

// maxReqFrames bounds the frames of one request: REQ sends two (the
// delimiter and the payload), three with ZMQ_REQ_CORRELATE's request id.
const maxReqFrames = 8

// RequestServer is the ret_port side of Salt's transport: a ROUTER to
// the minions' REQ sockets, one goroutine per connection, serving its
// requests one at a time (REQ sends the next only after the reply).
type RequestServer struct {
	cfg    RequestConfig
	log    *slog.Logger
	lim    *limiter
	budget *semaphore.Weighted
	// minor is the ZMTP minor version advertised (0: as the gateway's
	// handover writes it); tests set 1.
	minor byte
	conns atomic.Int64
}

// NewRequestServer prepares a request server; log may be nil.
func NewRequestServer(cfg RequestConfig, log *slog.Logger) (*RequestServer, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &RequestServer{
		cfg:    cfg,
		log:    log.With("component", "saltzmq", "port", "request"),
		lim:    newLimiter(cfg.MaxUnauthenticated, cfg.MaxUnauthenticatedPerAddr),
		budget: semaphore.NewWeighted(cfg.UnauthenticatedBytes),
	}, nil
}

// Conns is the number of connections being served now.
func (s *RequestServer) Conns() int { return int(s.conns.Load()) }

// Serve accepts connections on ln until ctx ends, then closes ln and
// returns once every connection it accepted has ended: requests in
// progress are answered first (within ShutdownGrace).
func (s *RequestServer) Serve(ctx context.Context, ln net.Listener) error {
	return serveListener(ctx, ln, s.log, s.lim, func(ctx context.Context, a Accepted) { s.ServeConn(ctx, a) })
}

// ServeConn serves one connection until it ends or ctx does, and closes
// it. The handshake must be done by a.Deadline (zero: HandshakeTimeout
// from now).
func (s *RequestServer) ServeConn(ctx context.Context, a Accepted) {
	s.conns.Add(1)
	defer s.conns.Add(-1)
	defer a.Conn.Close()
	deadline := a.Deadline
	if deadline.IsZero() {
		deadline = time.Now().Add(s.cfg.HandshakeTimeout)
	}
	c, err := handshake(ctx, a, deadline, "ROUTER", reqPeers, s.minor)
	if err != nil {
		s.log.Info("connection refused", "remote", a.Conn.RemoteAddr().String(), "err", err)
		return
	}
	// A connection handed over comes with the gateway's larger buffer; large
	// requests bypass the buffer anyway.
	shrinkReader(c, reqReadBuffer)
	rc := &reqConn{conn: c, onAuth: a.Authenticated}
	// Handlers outlive ctx by ShutdownGrace, so that a request in progress
	// is answered rather than cut off.
	hctx, hcancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), connKey{}, rc))
	defer hcancel()
	stop := context.AfterFunc(ctx, func() {
		c.raw.SetReadDeadline(time.Unix(1, 0))
		time.AfterFunc(s.cfg.ShutdownGrace, hcancel)
	})
	defer stop()
	for {
		err := s.serveOne(ctx, hctx, rc)
		if err == nil {
			continue
		}
		switch {
		case errors.Is(err, ErrTooLarge) || errors.Is(err, ErrProtocol):
			s.log.Warn("connection dropped", "remote", c.remote, "err", err)
		case errors.Is(err, errHandler):
			s.log.Info("connection dropped", "remote", c.remote, "err", err)
		case isTimeout(err) && ctx.Err() == nil:
			s.log.Debug("idle connection closed", "remote", c.remote, "authenticated", rc.authed.Load())
		}
		return
	}
}

// errHandler marks a request the handler refused to answer.
var errHandler = errors.New("handler")

// serveOne reads one request (or command) and answers it.
func (s *RequestServer) serveOne(ctx, hctx context.Context, rc *reqConn) error {
	c := rc.conn
	authed := rc.authed.Load()
	idle := s.cfg.IdleTimeout
	if authed {
		idle = s.cfg.AuthenticatedIdleTimeout
	}
	var deadline time.Time
	if idle > 0 {
		deadline = time.Now().Add(idle)
	}
	if err := c.raw.SetReadDeadline(deadline); err != nil {
		return err
	}
	// ctx's AfterFunc sets the deadline once ctx ended: either it did so
	// after the line above, or ctx has ended by now.
	if err := ctx.Err(); err != nil {
		return err
	}
	var (
		held    int64
		reserve func(int) error
	)
	if !authed {
		reserve = func(n int) error {
			rctx, cancel := context.WithDeadline(ctx, deadline)
			defer cancel()
			if err := s.budget.Acquire(rctx, int64(n)); err != nil {
				return fmt.Errorf("waiting for room to read a request of %d bytes: %w", n, timeoutError{err})
			}
			held += int64(n)
			return nil
		}
	}
	defer func() {
		if held > 0 {
			s.budget.Release(held)
		}
	}()
	frames, cmd, err := c.readMsg(s.cfg.MaxMessageSize, maxReqFrames, reserve)
	if err != nil {
		return err
	}
	if cmd {
		return c.command(frames[0], s.cfg.WriteTimeout)
	}
	env, payload, err := splitEnvelope(frames)
	if err != nil {
		return err
	}
	reply, err := s.call(hctx, c.remote, payload)
	if err != nil {
		return fmt.Errorf("%w: %w", errHandler, err)
	}
	// Frames of the request are no longer needed while the reply is
	// written: give the budget back first.
	if held > 0 {
		s.budget.Release(held)
		held = 0
	}
	if err := c.raw.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout)); err != nil {
		return err
	}
	_, err = c.raw.Write(zmtp.EncodeMsg(append(env, reply)...))
	return err
}

// call runs the handler; a panic in it becomes a dropped connection
// instead of taking the master down, as net/http does.
func (s *RequestServer) call(ctx context.Context, remote string, payload []byte) (reply []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("request handler panicked", "remote", remote, "panic", p, "stack", string(debug.Stack()))
			reply, err = nil, errors.New("internal error")
		}
	}()
	return s.cfg.Handler(ctx, remote, payload)
}

// splitEnvelope splits a request into REQ's envelope (the frames up to
// and including the empty delimiter, echoed in the reply) and its one
// payload frame.
func splitEnvelope(frames [][]byte) (env [][]byte, payload []byte, err error) {
	for i, f := range frames {
		if len(f) != 0 {
			continue
		}
		if len(frames) != i+2 {
			return nil, nil, fmt.Errorf("%w: %d frames after the envelope, want 1", ErrProtocol, len(frames)-i-1)
		}
		return slices.Clip(frames[:i+1]), frames[i+1], nil
	}
	return nil, nil, fmt.Errorf("%w: a request without REQ's empty delimiter", ErrProtocol)
}

// command handles a command between messages: PING is answered, ERROR
// ends the connection, the others are ignored.
func (c *conn) command(body []byte, writeTimeout time.Duration) error {
	name, data, err := zmtp.ParseCommand(body)
	if err != nil {
		return err
	}
	switch name {
	case "PING":
		if p := pong(data); p != nil {
			if err := c.raw.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
				return err
			}
			_, err := c.raw.Write(p)
			return err
		}
	case "ERROR":
		return fmt.Errorf("%w: the peer sent ERROR", ErrProtocol)
	}
	return nil
}

// reqConn is a request connection and whether its peer authenticated.
type reqConn struct {
	*conn
	authed atomic.Bool
	once   sync.Once
	onAuth func()
}

type connKey struct{}

// Authenticate tells the request server that the peer of the request ctx
// belongs to has proved who it is: from now on its connection has
// AuthenticatedIdleTimeout instead of IdleTimeout, reads its requests
// without the UnauthenticatedBytes budget and no longer counts against
// the caps on unauthenticated connections (Accepted.Authenticated is
// called). It does nothing for a context that is not a request's.
func Authenticate(ctx context.Context) {
	rc, ok := ctx.Value(connKey{}).(*reqConn)
	if !ok {
		return
	}
	rc.once.Do(func() {
		rc.authed.Store(true)
		if rc.onAuth != nil {
			rc.onAuth()
		}
	})
}

// timeoutError makes a budget wait that ran out of time look like a read
// timeout, which it stands in for.
type timeoutError struct{ err error }

func (e timeoutError) Error() string { return e.err.Error() }
func (e timeoutError) Unwrap() error { return e.err }
func (e timeoutError) Timeout() bool { return errors.Is(e.err, context.DeadlineExceeded) }

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
